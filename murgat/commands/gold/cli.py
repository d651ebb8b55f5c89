"""``murgat gold import {nextgqa,citevqa,rextime}``: a dataset's official annotation files → murgat's gold JSONL."""

from __future__ import annotations

import argparse
import sys


def _cmd_import(args: argparse.Namespace) -> int:
    from murgat.commands.gold.importers import import_citevqa, import_nextgqa, import_rextime, iter_summary, write_gold
    from murgat.core.gold import GoldFormatError
    from murgat.engine.outputs import claim_output

    inputs = [args.gsub, args.qa, args.map] if args.dataset == "nextgqa" else [args.items]
    # refused before any work: an input, a cassette or a run's records, a device link replaced
    claim = claim_output(args.out, role="file", replaces=("gold",), inputs=inputs, what=f"--out {args.out}")
    try:
        if args.dataset == "nextgqa":
            items = import_nextgqa(args.gsub, args.qa, args.map)
        elif args.dataset == "citevqa":
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


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gold", help="gold evidence files: import a dataset's official annotations")
    gsub = p.add_subparsers(dest="gold_command", metavar="ACTION", required=True)
    imp = gsub.add_parser("import", help="convert official annotation files to murgat's gold JSONL")
    ds = imp.add_subparsers(dest="dataset", metavar="DATASET", required=True)
    q = ds.add_parser("nextgqa", help="NExT-GQA: gsub_*.json spans + the QA csv")
    q.add_argument("--gsub", required=True, help="gsub_{val,test}.json (time spans in seconds)")
    q.add_argument("--qa", required=True, help="{val,test}.csv (questions, options a0-a4, answer text)")
    q.add_argument("--map", default=None, help="map_vid_vidorID.json: video id -> VidOR path (optional)")
    q.add_argument("--out", required=True, help="gold JSONL to write")
    q.set_defaults(func=_cmd_import)
    for name, helptext in (("citevqa", "CiteVQA: answers with inline <bbox page=.. x1=..> tags (0-1000)"),
                           ("rextime", "ReXTime: relevant_windows and ans")):
        q = ds.add_parser(name, help=helptext)
        q.add_argument("--items", required=True, help="the dataset's JSON list or JSONL of items")
        q.add_argument("--out", required=True, help="gold JSONL to write")
        q.set_defaults(func=_cmd_import)
