"""``murgat score`` and ``murgat summarize`` on the command line: the parser made from
:class:`~murgat.pipeline.settings.ScoreSettings`, and the call into the Python API."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _cmd_score(args: argparse.Namespace) -> int:
    from murgat.api import execute
    from murgat.pipeline.settings import ScoreSettings

    return execute(ScoreSettings.from_args(args))


def _cmd_summarize(args: argparse.Namespace) -> int:
    from murgat.grounding.compare import is_ground_run, summarize_ground_runs

    if args.runs and is_ground_run(args.runs[0]):
        return summarize_ground_runs(args)
    from murgat.console import console
    from murgat.engine.folder import RunDir, read_kind
    from murgat.pipeline.report import compare, comparison_table, summary_table

    runs = []
    kinds = {str(p): read_kind(p) for p in args.runs}
    others = {p: k for p, k in kinds.items() if k not in (None, "score")}
    if others:
        if len(args.runs) == 1:  # one folder of another kind: its summary as it is
            where = Path(args.runs[0]) / ("sweep.json" if others[str(args.runs[0])] == "sweep" else "summary.json")
            if not where.exists():
                print(f"error: {args.runs[0]} is a '{others[str(args.runs[0])]}' folder without summary.json"
                      + (" (summarize the program run above it)" if others[str(args.runs[0])] == "program-variant" else ""),
                      file=sys.stderr)
                return 2
            doc = json.loads(where.read_text(encoding="utf-8"))
            print(json.dumps({"kind": others[str(args.runs[0])], "summary": doc}, indent=2, ensure_ascii=False))
            return 0
        print("error: murgat summarize compares score runs; " + ", ".join(f"{p} is a '{k}' run" for p, k in others.items()),
              file=sys.stderr)
        return 2
    for path in args.runs:
        if not (Path(path) / "summary.json").exists():
            print(f"error: {path} has no summary.json (run murgat score first)", file=sys.stderr)
            return 2
        rd = RunDir(path, repair=False)
        for note in rd.notices:
            print(f"warning: {note}", file=sys.stderr)
        runs.append((str(path), rd.latest_results(), rd.summary()))
    doc = compare(runs, n_resamples=args.bootstrap, seed=args.seed)
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    con = console()
    if len(runs) == 1:
        con.print(summary_table(runs[0][2], str(runs[0][0])))
    else:
        con.print(comparison_table(doc))
        for d in doc["differences"]:
            if d.get("note"):
                con.print(d["note"], soft_wrap=True)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from murgat.engine.options import add_settings
    from murgat.pipeline.settings import ScoreSettings

    p = sub.add_parser("score", help="score responses with MURGAT-S")
    add_settings(p, ScoreSettings)
    p.set_defaults(func=_cmd_score)

    p = sub.add_parser("summarize", help="compare runs side by side with paired bootstrap CIs")
    p.add_argument("runs", nargs="+")
    p.add_argument("--json", action="store_true")
    p.add_argument("--bootstrap", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_summarize)
