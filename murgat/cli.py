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
from typing import Any, NoReturn

from murgat import __version__
from murgat.boxes import BoxConvention, BoxError, parse_frame_size
from murgat.engine.errors import CommandError, SettingsError
from murgat.engine.options import number_parser
from murgat.inputs import MAX_RESPONSE_CHARS, InputError
from murgat.jsonl import ResultsWriteError
from murgat.validate import citations_doc, exit_status, report_lines, validate_selection

Handler = Callable[[argparse.Namespace], int]


def _citation_cells(c: dict[str, Any] | None, boxed: bool) -> list[Any]:
    """One citation's cells of the table (plain Text: "[audio, 00:01:02.5]" is a citation, not rich markup)."""
    from rich.text import Text

    if c is None:
        return [""] * (6 if boxed else 5)
    boxes = [Text("\n".join(",".join(f"{b[k]:.3f}" for k in ("x1", "y1", "x2", "y2")) for b in c.get("boxes", [])))]
    # no modality read (the reason column says why): a dash, not Python's "None"
    return [Text(c["modality"] or "–"), f"{c['start']:g}" if c["start"] is not None else "",
            f"{c['end']:g}" if c["end"] is not None else "", *(boxes if boxed else []),
            "yes" if c["valid"] else "NO", Text(c["reason"] or "")]


def _citations_table(doc: dict[str, Any]) -> Any:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="sentences and citations", show_lines=True)
    sentences: list[dict[str, Any]] = doc["sentences"]
    boxed = any("boxes" in c for s in sentences for c in s["citations"])
    for col in ("#", "sentence", "modality", "start", "end", *(["boxes (x1,y1,x2,y2 of 0-1)"] if boxed else []),
                "valid", "reason"):
        table.add_column(col)
    for s in sentences:
        for j, c in enumerate(s["citations"] or [None]):
            table.add_row(str(s["index"]) if j == 0 else "", Text(s["text"]) if j == 0 else "",
                          *_citation_cells(c, boxed))
    return table


def _cmd_citations(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    try:
        frame = parse_frame_size(args.box_frame_size) if args.box_frame_size else None
    except BoxError as exc:
        raise SettingsError(f"--box-frame-size: {exc.reason}") from None
    doc = citations_doc(text, BoxConvention(units=args.box_units, order=args.box_order, frame_size=frame))
    if "error" in doc:
        raise SettingsError(doc["error"])
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    from rich.text import Text

    from murgat.console import console  # rich: only when a table is drawn

    con = console()
    con.print(_citations_table(doc))
    for s in doc["sentences"]:  # time-like text that is not a citation: said, never dropped
        for t in s["time_like"]:
            con.print(Text(f"warning: sentence {s['index']}: '{t['text']}' is not a citation ({t['reason']})"
                           + (f"; nearest accepted spelling: {t['nearest']}" if t["nearest"] else "")))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    try:
        reports, missing = validate_selection(args.input, args.media_root, args.allow_media_outside_root, args.ids,
                                              args.max_response_chars)
    except (InputError, ValueError) as exc:
        raise SettingsError(str(exc)) from None
    if missing:
        print(f"warning: --ids not in {args.input}: {', '.join(missing[:20])}", file=sys.stderr)
    n_bad = sum(1 for r in reports if not r.ok)
    n_warn = sum(1 for r in reports if r.time_like)
    if args.json:
        print(json.dumps({"n_items": len(reports), "n_with_problems": n_bad, "n_with_warnings": n_warn,
                          "missing_ids": missing,
                          "items": [r.model_dump() | {"ok": r.ok} for r in reports]}, ensure_ascii=False))
    else:
        from rich.table import Table
        from rich.text import Text

        from murgat.console import console

        table = Table(title=f"validate {args.input}")
        for col in ("id", "media", "sentences", "cited", "citations", "invalid", "problems"):
            table.add_column(col)
        for r in reports:
            table.add_row(Text(r.id), Text(r.media or "-"), str(r.n_sentences), str(r.n_cited_sentences),
                          str(r.n_citations), str(r.n_invalid), Text("\n".join(report_lines(r)) or "ok"))
        con = console()
        con.print(table)
        con.print(f"{len(reports)} items, {n_bad} with problems, {n_warn} with warnings")
    return exit_status(reports, args.strict)


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


def _fill_help(parser: argparse.ArgumentParser) -> None:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sp in a.choices.values():
                _fill_help(sp)
            continue
        flag = a.option_strings[-1] if a.option_strings else ""
        if flag in COUNT_MINIMUM and a.type is int:
            a.type = number_parser(flag.lstrip("-").replace("-", "_"), int, low=COUNT_MINIMUM[flag],
                                   high=COUNT_MAXIMUM.get(flag))
        elif flag and a.type is float:
            share = flag in SHARE_OPTIONS
            a.type = number_parser("number", float, low=0 if share else None, high=1 if share else None)
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
    p.add_argument("--strict", action="store_true", help="exit 1 when any item has a problem or a warning")
    p.add_argument("--ids", default=None, help="comma-separated ids to check (default: every item)")
    p.add_argument("--allow-media-outside-root", action="store_true",
                   help="read media wherever the input names it (default: only inside --media-root)")
    p.add_argument("--max-response-chars", type=number_parser("max_response_chars", int, low=1),
                   default=MAX_RESPONSE_CHARS, help="a longer response is an input error, as the run commands refuse "
                                                    "it")
    p.set_defaults(func=_cmd_validate)

    for mod in ("murgat.media_cli", "murgat.score.cli", "murgat.generation.cli", "programs.cli", "murgat.faithfulness.cli",
                "murgat.faithfulness.reflect_cli", "murgat.calibrate_cli", "murgat.viewer.cli", "murgat.grounding.cli",
                "murgat.export_cli", "murgat.viewer.annotate_cli", "murgat.integrations.cli", "murgat.judge_check_cli",
                "murgat.diff_cli"):
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
    try:  # building the parser imports every command's settings: a Ctrl-C there is a Ctrl-C, not a traceback
        parser = build_parser()
    except KeyboardInterrupt:
        print("\ninterrupted while starting: nothing was done", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from media.stages import enable

    # stage lines (models loading, a file transcribed, the probes) unless the output is to stay quiet;
    # off again when the command returns (main may be called in process, before the Python API)
    if not any(getattr(args, k, False) for k in ("quiet", "json", "print_json")):  # the settings call --json print_json
        enable()
    # how every command ends on a refusal or a stop, in one place: the error's one line and its exit status
    try:
        return int(args.func(args) or 0)
    except CommandError as exc:  # bad input or settings (2), a replay miss (3), the run folder not writable (5)
        print(f"error: {exc.message}", file=sys.stderr)
        return exc.code
    except ResultsWriteError as exc:  # a write of a run folder outside any command's run (none should be left)
        print(f"error: {exc}", file=sys.stderr)
        return 5
    except BrokenPipeError:  # `murgat … --json | head`: the reader left; no traceback
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        # every record already written is durable (appended and fsync'd): say so instead of a traceback
        print("\ninterrupted: what was written is kept; run the same command again to resume", file=sys.stderr)
        return 130
    finally:
        enable(None)


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
