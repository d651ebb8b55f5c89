"""The ``murgat`` command line.

Subcommands register themselves through small ``add_*`` functions so each feature's
arguments live next to its code; this module only wires them together. Output meant for
programs goes to stdout as one JSON document (``--json``); tables and progress go to
stderr/stdout via rich for people.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NoReturn

from murgat import __version__

Handler = Callable[[argparse.Namespace], int]


def _cmd_citations(args: argparse.Namespace) -> int:
    from murgat.text import preprocess, split_sentences

    text = args.text
    if text == "-":
        text = sys.stdin.read()
    from murgat.boxes import BoxConvention, BoxError, parse_frame_size
    from murgat.citations import apply_box_convention

    try:
        frame = parse_frame_size(args.box_frame_size) if args.box_frame_size else None
    except BoxError as exc:
        print(f"error: --box-frame-size: {exc.reason}", file=sys.stderr)
        return 2
    pre = preprocess(text)
    conv = BoxConvention(units=args.box_units, order=args.box_order, frame_size=frame)
    sents = apply_box_convention(split_sentences(pre.reasoning), pre.reasoning, conv)
    doc = {
        "sentences": [
            {
                "index": s.index,
                "text": s.text,
                "citations": [
                    {"modality": c.modality, "start": c.start, "end": c.end, "valid": c.valid,
                     "reason": c.reason, "raw": c.raw,
                     **({"boxes": [b.model_dump() for b in c.boxes]} if c.boxes else {})}  # as in records
                    for c in s.citations
                ],
            }
            for s in sents
        ],
        "answer": pre.answer or None,
        "option": pre.option,
    }
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    from rich.table import Table
    from rich.text import Text

    from murgat.console import console

    # cells are plain Text: "[audio, 00:01:02.5]" is a citation, not rich markup
    table = Table(title="sentences and citations", show_lines=True)
    boxed = any("boxes" in c for s in doc["sentences"] for c in s["citations"])
    for col in ("#", "sentence", "modality", "start", "end", *(["boxes (x1,y1,x2,y2 of 0-1)"] if boxed else []),
                "valid", "reason"):
        table.add_column(col)
    for s in doc["sentences"]:
        cites = s["citations"] or [None]
        for j, c in enumerate(cites):
            table.add_row(
                str(s["index"]) if j == 0 else "",
                Text(s["text"]) if j == 0 else "",
                *(
                    [Text(str(c["modality"])), f"{c['start']:g}" if c["start"] is not None else "",
                     f"{c['end']:g}" if c["end"] is not None else "",
                     *([Text("\n".join(",".join(f"{b[k]:.3f}" for k in ("x1", "y1", "x2", "y2"))
                                       for b in c.get("boxes", [])))] if boxed else []),
                     "yes" if c["valid"] else "NO", Text(c["reason"] or "")]
                    if c else [""] * (6 if boxed else 5)
                ),
            )
    console().print(table)
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from murgat.inputs import InputError
    from murgat.validate import validate_file

    try:
        reports = validate_file(args.input, args.media_root, args.allow_media_outside_root)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    n_bad = sum(1 for r in reports if not r.ok)
    if args.json:
        print(json.dumps({"n_items": len(reports), "n_with_problems": n_bad,
                          "items": [r.model_dump() | {"ok": r.ok} for r in reports]}, ensure_ascii=False))
    else:
        from rich.table import Table
        from rich.text import Text

        from murgat.console import console

        table = Table(title=f"validate {args.input}")
        for col in ("id", "media", "sentences", "cited", "citations", "invalid", "problems"):
            table.add_column(col)
        for r in reports:
            probs = [r.media_error] if r.media_error else []
            probs += ["empty response"] if r.empty_response else []
            probs += [f"s{p.sentence} '{p.raw}': {p.reason}" for p in r.problems]
            table.add_row(Text(r.id), Text(r.media or "-"), str(r.n_sentences), str(r.n_cited_sentences),
                          str(r.n_citations), str(r.n_invalid), Text("\n".join(probs) or "ok"))
        con = console()
        con.print(table)
        con.print(f"{len(reports)} items, {n_bad} with problems")
    return 1 if (args.strict and n_bad) else 0


#: help for options of the commands without a settings model (those of score, faithfulness, reflect,
#: program, generate and sweep live in their fields), written once; an option keeps its own help when it has one
COMMON_HELP: dict[str, str] = {
    "--json": "print one JSON document instead of tables",
    "--seed": "seed of the bootstrap resampling",
    "--bootstrap": "bootstrap resamples for confidence intervals",
    "--fps": "frames per second sampled inside visual segments",
    "--max-frames": "most frames sent for one visual segment (or the whole video)",
    "--cluster-by-video": "bootstrap resamples whole videos (several questions per video)",
    "--similarity": "fact matching by word overlap (lexical) or MiniLM embeddings",
    "--language": "spoken language code for ASR",
    "--backend": "ASR backend: faster-whisper, or whisperx (optional extra)",
    "file": "a media file (video or audio)",
    "runs": "run folders (the first is the reference)",
}


#: counts of the commands without a settings model (the others are checked by their fields): the
#: smallest value that makes sense; argparse exits 2 below it
COUNT_MINIMUM: dict[str, int] = {"--bootstrap": 1, "--seed": 0, "--max-frames": 1}


#: upper bounds where a larger value only burns time or memory (e.g. --bootstrap 10**9)
COUNT_MAXIMUM: dict[str, int] = {"--bootstrap": 100_000}
#: options that are shares (0–1)
SHARE_OPTIONS = frozenset({"--attributed-threshold", "--recall-threshold"})


def _count_type(option: str, minimum: int) -> Callable[[str], int]:
    maximum = COUNT_MAXIMUM.get(option)

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {value}")
        return value

    parse.__name__ = option.lstrip("-").replace("-", "_")
    return parse


def _finite_type(share: bool) -> Callable[[str], float]:
    """Every float option: a finite number (``nan`` passed every comparison and broke the summary
    after all the work); a share also lies in 0–1."""
    import math

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if share and not 0 <= value <= 1:
            raise argparse.ArgumentTypeError(f"must be a share between 0 and 1, got {value:g}")
        return value

    parse.__name__ = "number"
    return parse


def _fill_help(parser: argparse.ArgumentParser) -> None:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sp in a.choices.values():
                _fill_help(sp)
            continue
        if a.option_strings and a.option_strings[-1] in COUNT_MINIMUM and a.type is int:
            a.type = _count_type(a.option_strings[-1], COUNT_MINIMUM[a.option_strings[-1]])
        elif a.option_strings and a.type is float:
            a.type = _finite_type(a.option_strings[-1] in SHARE_OPTIONS)
        if a.help is None and not isinstance(a, argparse._HelpAction):
            key = a.option_strings[0] if a.option_strings else a.dest
            a.help = COMMON_HELP.get(key)
        # a --no-… flag (store_false) defaults to True: "(default: True)" would read as "off by default"
        shown = not (a.default is None or a.default is False or a.default is argparse.SUPPRESS or a.default == []
                     or isinstance(a, argparse._StoreFalseAction))
        if a.help and shown and "%(default)" not in a.help \
                and "default" not in a.help and a.option_strings:
            a.help += " (default: %(default)s)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="murgat", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="murgat checks whether what a multimodal model says about a video is grounded in the exact video "
                    "and audio it cites.\nIt scores cited answers with MURGAT-S (coverage × attribution F1), generates "
                    "and program-grounds answers, checks step faithfulness and calibrates judges against humans.",
        epilog="examples:\n"
               "  murgat validate responses.jsonl --media-root videos/\n"
               "  murgat score responses.jsonl --media-root videos/ --judge gemini:gemini-2.5-flash --out runs/flash\n"
               "  murgat view runs/flash runs/qwen          # side by side in the browser\n\n"
               "murgat COMMAND --help lists every option of a command with its default.")
    parser.add_argument("--version", action="version", version=f"murgat {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("citations", help="show the sentences of TEXT and their parsed citations")
    p.add_argument("text", help="response text, or - for stdin")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--box-units", choices=["norm", "1000", "px"], default="norm",
                   help="what a bare 'box' means: 0-1 fractions, 0-1000, or pixels (as score's option)")
    p.add_argument("--box-order", choices=["xyxy", "yxyx"], default="xyxy", help="number order of boxes")
    p.add_argument("--box-frame-size", default=None, metavar="WxH", help="frame that pixel boxes refer to")
    p.set_defaults(func=_cmd_citations)

    p = sub.add_parser("validate", help="check a response file's citations against its media (no judge)")
    p.add_argument("input", help="JSONL (murgat) or JSON list (authors' format)")
    p.add_argument("--media-root", default=None, help="folder in which media names/ids are resolved")
    p.add_argument("--json", action="store_true")
    p.add_argument("--strict", action="store_true", help="exit 1 when any item has a problem")
    p.add_argument("--allow-media-outside-root", action="store_true",
                   help="read media wherever the input names it (default: only inside --media-root)")
    p.set_defaults(func=_cmd_validate)

    for mod in ("murgat.media_cli", "murgat.pipeline.cli", "murgat.generation.cli", "programs.cli", "murgat.faithfulness.cli",
                "murgat.faithfulness.reflect_cli", "murgat.calibrate_cli", "murgat.viewer.cli", "murgat.grounding.cli",
                "murgat.export_cli", "murgat.viewer.annotate_cli", "murgat.integrations.cli"):
        try:
            module = __import__(mod, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name and (exc.name == mod or mod.startswith(exc.name + ".")):
                continue
            raise
        module.register(sub)
    _fill_help(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    if getattr(args, "run_on", "local") == "ray":
        try:
            import ray  # noqa: F401 - only to say early, and in one place, how to get it
        except ImportError:
            print("error: --run-on ray needs Ray: pip install 'murgat[ray]'", file=sys.stderr)
            return 2
    from murgat.engine.folder import RunConfigMismatch
    from murgat.jsonl import ResultsWriteError

    # how every command ends on what the run folder refuses or fails to take, in one place
    try:
        return int(args.func(args) or 0)
    except RunConfigMismatch as exc:  # the folder holds a run with other settings (or of another kind)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ResultsWriteError as exc:  # any write of a run folder (config.json, summary.json, …) after the run began
        from murgat.engine.guards import failure_code

        return failure_code(exc) or 5
    except BrokenPipeError:  # `murgat … --json | head`: the reader left; no traceback
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        # every record already written is durable (appended and fsync'd): say so instead of a traceback
        print("\ninterrupted: what was written is kept; run the same command again to resume", file=sys.stderr)
        return 130


def run() -> NoReturn:
    """The ``murgat`` program: :func:`main`, then a quick exit.

    The interpreter's teardown (freeing every module, pydantic schema and decoder) takes
    ~0.1 s after a run; nothing of ours needs it. So after ``main`` returns this does what
    an orderly exit does that matters — waits for non-daemon threads and runs the ``atexit``
    handlers (caches close, Ray shuts down, logging flushes) — flushes stdout and stderr and
    leaves with ``os._exit``. An exception still takes the normal path (traceback, exit 1).
    The full teardown is kept under a profiler or tracer (cProfile, coverage write their
    reports then) and with ``MURGAT_FULL_EXIT=1`` (leak checkers). Tests call :func:`main`,
    which returns.
    """
    code = main()
    shutdown = getattr(threading, "_shutdown", None)
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    watched = sys.getprofile() is not None or sys.gettrace() is not None  # cProfile, coverage: they report at exit
    if os.environ.get("MURGAT_FULL_EXIT") or watched or shutdown is None or run_exitfuncs is None:
        raise SystemExit(code)
    shutdown()  # what the interpreter does first at exit: join non-daemon threads, stop executors
    run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 120  # the status Python itself exits with when stdout cannot be flushed
    os._exit(code)
