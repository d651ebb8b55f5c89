"""``murgat score`` and ``murgat summarize`` on the command line: the parser made from
:class:`~murgat.score.settings.ScoreSettings`, and the call into the Python API."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from murgat import api
from murgat.comparison import compare
from murgat.diff import print_diff, run_differences
from murgat.engine.errors import SettingsError
from murgat.engine.folder import RunFolder, read_kind
from murgat.grounding.compare import is_ground_run, summarize_ground_runs
from murgat.schema import ResponseResult, RunSummary
from murgat.score.report import comparison_table, summary_table
from murgat.score.settings import ScoreSettings


def _other_kind(runs: list[str]) -> int:
    """``summarize`` of folders that are not score runs: one folder's summary as it is, else refused."""
    kinds = {str(p): read_kind(p) for p in runs}
    others = {p: k for p, k in kinds.items() if k not in (None, "score")}
    if len(runs) != 1:
        raise SettingsError("murgat summarize compares score runs; " + ", ".join(f"{p} is a '{k}' run"
                                                                                 for p, k in others.items()))
    kind = others[str(runs[0])]
    where = Path(runs[0]) / ("sweep.json" if kind == "sweep" else "summary.json")
    if not where.exists():
        raise SettingsError(f"{runs[0]} is a '{kind}' folder without summary.json"
                            + (" (summarize the program run above it)" if kind == "program-variant" else ""))
    print(json.dumps({"kind": kind, "summary": json.loads(where.read_text(encoding="utf-8"))}, indent=2,
                     ensure_ascii=False))
    return 0


def _score_runs(paths: list[str]) -> list[tuple[str, list[ResponseResult], RunSummary]]:
    runs = []
    for path in paths:
        if not (Path(path) / "summary.json").exists():
            raise SettingsError(f"{path} has no summary.json (run murgat score first)")
        folder = RunFolder(path, repair=False)
        for note in folder.notices:
            print(f"warning: {note}", file=sys.stderr)
        runs.append((str(path), folder.latest_results(), folder.summary()))
    return runs


def _cmd_summarize(args: argparse.Namespace) -> int:
    if args.runs and is_ground_run(args.runs[0]):
        return summarize_ground_runs(args)
    if any(read_kind(p) not in (None, "score") for p in args.runs):
        return _other_kind(args.runs)
    runs = _score_runs(args.runs)
    doc = compare(runs, n_resamples=args.bootstrap, seed=args.seed)
    diffs = _run_differences(args.runs)
    if args.json:
        if diffs:
            doc["run_differences"] = [d.model_dump(mode="json") for d in diffs]
        print(json.dumps(doc, indent=2))
        return 0
    from murgat.console import console  # rich: only when a table is drawn

    con = console()
    if len(runs) == 1:
        con.print(summary_table(runs[0][2], str(runs[0][0])))
    else:
        con.print(comparison_table(doc))
        for d in doc["differences"]:
            if d.get("note"):
                con.print(d["note"], soft_wrap=True)
    _print_run_differences(diffs, con)
    return 0


# ----- how the runs differ (issue #30 item 7): settings, prompts, judges, probes, versions (murgat.diff) -----

def _run_differences(paths: list[str]) -> list[Any]:
    """What differs between the first run and each other one (``murgat diff FIRST OTHER``, verdicts
    included): the settings of ``config.json``, prompt hashes, the judges and their identities,
    probe outcomes, versions."""
    return [run_differences(paths[0], other) for other in paths[1:]]


def _print_run_differences(diffs: list[Any], con: Any) -> None:
    for d in diffs:
        print_diff(d, con)


def register(sub: argparse._SubParsersAction) -> None:
    api.add_run_command(sub, ScoreSettings, "score responses with MURGAT-S")

    p = sub.add_parser("summarize", help="compare runs side by side with paired bootstrap CIs")
    p.add_argument("runs", nargs="+")
    p.add_argument("--json", action="store_true")
    p.add_argument("--bootstrap", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_summarize)
