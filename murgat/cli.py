"""The ``murgat`` command line.

Subcommands register themselves through small ``add_*`` functions so each feature's
arguments live next to its code; this module only wires them together. Output meant for
programs goes to stdout as one JSON document (``--json``); tables and progress go to
stderr/stdout via rich for people.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from murgat import __version__

Handler = Callable[[argparse.Namespace], int]


def _cmd_citations(args: argparse.Namespace) -> int:
    from murgat.text import preprocess, split_sentences

    text = args.text
    if text == "-":
        text = sys.stdin.read()
    pre = preprocess(text)
    sents = split_sentences(pre.reasoning)
    doc = {
        "sentences": [
            {
                "index": s.index,
                "text": s.text,
                "citations": [
                    {"modality": c.modality, "start": c.start, "end": c.end, "valid": c.valid,
                     "reason": c.reason, "raw": c.raw}
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

    from murgat.console import console

    table = Table(title="sentences and citations", show_lines=True)
    for col in ("#", "sentence", "modality", "start", "end", "valid", "reason"):
        table.add_column(col)
    for s in doc["sentences"]:
        cites = s["citations"] or [None]
        for j, c in enumerate(cites):
            table.add_row(
                str(s["index"]) if j == 0 else "",
                s["text"] if j == 0 else "",
                *(
                    [str(c["modality"]), f"{c['start']:g}" if c["start"] is not None else "",
                     f"{c['end']:g}" if c["end"] is not None else "", "yes" if c["valid"] else "NO",
                     c["reason"] or ""]
                    if c else ["", "", "", "", ""]
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

        from murgat.console import console

        table = Table(title=f"validate {args.input}")
        for col in ("id", "media", "sentences", "cited", "citations", "invalid", "problems"):
            table.add_column(col)
        for r in reports:
            probs = [r.media_error] if r.media_error else []
            probs += ["empty response"] if r.empty_response else []
            probs += [f"s{p.sentence} '{p.raw}': {p.reason}" for p in r.problems]
            table.add_row(r.id, r.media or "-", str(r.n_sentences), str(r.n_cited_sentences),
                          str(r.n_citations), str(r.n_invalid), "\n".join(probs) or "ok")
        con = console()
        con.print(table)
        con.print(f"{len(reports)} items, {n_bad} with problems")
    return 1 if (args.strict and n_bad) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="murgat", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"murgat {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("citations", help="show the sentences of TEXT and their parsed citations")
    p.add_argument("text", help="response text, or - for stdin")
    p.add_argument("--json", action="store_true", help="print one JSON document")
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
                "murgat.calibrate_cli"):
        try:
            module = __import__(mod, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name and (exc.name == mod or mod.startswith(exc.name + ".")):
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return int(args.func(args) or 0)
