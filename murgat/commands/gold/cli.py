"""``murgat gold import {nextgqa,citevqa,rextime}``: a dataset's official annotation files → murgat's gold JSONL."""

from __future__ import annotations

import argparse
import sys

from murgat.engine.options import add_command
from murgat.settings.gold import GoldCitevqaSettings, GoldItemsSettings, GoldNextgqaSettings, GoldRextimeSettings


def _cmd_import(args: GoldNextgqaSettings | GoldItemsSettings) -> int:
    from murgat.commands.gold.importers import import_citevqa, import_nextgqa, import_rextime, iter_summary, write_gold
    from murgat.core.gold import GoldFormatError
    from murgat.engine.outputs import claim_output

    inputs = [args.gsub, args.qa, args.map] if isinstance(args, GoldNextgqaSettings) else [args.items]
    # refused before any work: an input, a cassette or a run's records, a device link replaced
    claim = claim_output(args.out, role="file", replaces=("gold",), inputs=inputs, what=f"--out {args.out}")
    try:
        if isinstance(args, GoldNextgqaSettings):
            items = import_nextgqa(args.gsub, args.qa, args.map)
        elif isinstance(args, GoldCitevqaSettings):
            items = import_citevqa(args.items)
        else:
            items = import_rextime(args.items)
    except GoldFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    n = write_gold(items, claim)
    for line in iter_summary(items):
        print(line, file=sys.stderr)
    print(f"wrote {n} gold items to {args.out}", file=sys.stderr)  # stderr: the gold JSONL may own stdout
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("gold", help="gold evidence files: import a dataset's official annotations")
    gsub = p.add_subparsers(dest="gold_command", metavar="ACTION", required=True)
    imp = gsub.add_parser("import", help="convert official annotation files to murgat's gold JSONL")
    ds = imp.add_subparsers(dest="dataset", metavar="DATASET", required=True)
    add_command(ds, GoldNextgqaSettings, _cmd_import, help="NExT-GQA: gsub_*.json spans + the QA csv")
    add_command(ds, GoldCitevqaSettings, _cmd_import,
                help="CiteVQA: answers with inline <bbox page=.. x1=..> tags (0-1000)")
    add_command(ds, GoldRextimeSettings, _cmd_import, help="ReXTime: relevant_windows and ans")
