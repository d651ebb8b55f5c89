"""``murgat summarize A B …`` for ground runs: each run's figures and paired differences against the first.

A difference is taken per question over the ids both runs scored *and* for which both have
the figure (a NExT-GQA IoP exists only where the response cites the video), then
bootstrapped by :func:`murgat.core.metric.paired_bootstrap_diff` (the pairs are resampled),
so two systems are compared on the same questions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from murgat.core.grounding import GroundRecord, GroundSummary
from murgat.core.jsonl import loads_line
from murgat.settings.summarize import SummarizeSettings

#: per-response figures compared, with the scale they are reported at (percent for the papers' figures)
PAIRED: tuple[tuple[str, float], ...] = (
    ("nextgqa_iop", 100.0), ("nextgqa_iou", 100.0), ("rextime_iou", 100.0), ("iop", 1.0), ("iog", 1.0), ("iou", 1.0),
    ("evidence_recall", 1.0), ("evidence_precision", 1.0), ("viou", 1.0), ("correct", 1.0), ("saa", 1.0),
    ("saa_cite", 1.0),
)


def is_ground_run(path: str | Path) -> bool:
    """Whether ``path`` is a run folder written by ``murgat ground``."""
    cfg = Path(path) / "config.json"
    try:
        return bool(loads_line(cfg.read_text(encoding="utf-8")).get("kind") == "ground")
    except (OSError, ValueError, AttributeError):
        return False


def load_ground_run(path: str | Path) -> tuple[GroundSummary, list[GroundRecord]]:
    """A ground run's summary and records; a damaged file is :class:`~murgat.engine.runs.RunUnreadable`
    naming it (and the line), never a traceback."""
    from pydantic import ValidationError

    from murgat.core.jsonl import iter_lines
    from murgat.engine.runs import RunUnreadable, read_summary

    p = Path(path)
    try:
        summary = GroundSummary.model_validate(read_summary(p))
    except ValidationError as exc:
        raise RunUnreadable(f"{p / 'summary.json'}: not a ground run's summary ({exc.errors()[0]['msg']}); "
                            "run murgat ground again to rewrite it") from None
    records = []
    # split at "\n" only: U+2028/U+2029/U+0085 inside a record's strings are data (murgat.core.jsonl)
    for lineno, line in iter_lines(p / "results.jsonl"):
        if not line.strip():
            continue
        try:
            records.append(GroundRecord.model_validate_json(line))
        except ValueError as exc:
            raise RunUnreadable(f"{p / 'results.jsonl'}: line {lineno} is not a ground record ({exc}); "
                                "run murgat ground again to rewrite it") from None
    return summary, records


def compare_ground(runs: list[tuple[str, list[GroundRecord]]], n_resamples: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """Paired differences (run − first run) of every per-response figure."""
    from murgat.core.metric import paired_bootstrap_diff

    ref_name, ref = runs[0]
    ref_by = {r.id: r for r in ref if r.error is None}
    out = []
    for name, recs in runs[1:]:
        by = {r.id: r for r in recs if r.error is None}
        row: dict[str, Any] = {"a": ref_name, "b": name}
        for key, scale in PAIRED:
            pairs = [(float(getattr(ref_by[i], key)) * scale, float(getattr(by[i], key)) * scale)
                     for i in sorted(ref_by.keys() & by.keys())
                     if getattr(ref_by[i], key) is not None and getattr(by[i], key) is not None]
            if pairs:
                row[key] = paired_bootstrap_diff([a for a, _ in pairs], [b for _, b in pairs], n_resamples, seed).model_dump()
        out.append(row)
    return out


def summarize_ground_runs(args: SummarizeSettings) -> int:
    """The ``summarize`` command when its runs are ground runs."""
    runs = []
    summaries = {}
    for path in args.runs:
        if not is_ground_run(path):
            print(f"error: {path} is not a ground run; summarize compares runs of one kind", file=sys.stderr)
            return 2
        summary, records = load_ground_run(path)
        summaries[str(path)] = summary.model_dump()
        runs.append((str(path), records))
    doc: dict[str, Any] = {"kind": "ground", "runs": summaries, "differences": compare_ground(runs, args.bootstrap, args.seed)}
    if args.print_json:
        print(json.dumps(doc, indent=2))
        return 0
    from rich.table import Table

    from murgat.core.console import console

    con = console()
    for d in doc["differences"]:
        t = Table(title=f"{d['b']} − {d['a']} (paired over the questions both score)")
        for col in ("figure", "difference [95% CI]", "n"):
            t.add_column(col)
        for key, _ in PAIRED:
            if key in d:
                iv = d[key]
                t.add_row(key, f"{iv['value']:+.3f} [{iv['ci_low']:+.3f}, {iv['ci_high']:+.3f}]", str(iv["n"]))
        con.print(t)
    if len(runs) == 1:
        con.print(json.dumps(summaries[runs[0][0]], indent=2))
    return 0
