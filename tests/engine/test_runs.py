"""A finished run read back (murgat/engine/runs.py)."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.engine.runs import load_run


def _lines(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_program_runs_records_are_its_variants_only(tmp_path: Path) -> None:
    """Before: every child folder with a results.jsonl counted as a variant, so ``program --score
    --baseline``'s score run of the baseline (OUT/baseline-run/) was listed as a variant
    "baseline-run" with the baseline's score records."""
    out = tmp_path / "p"
    (out).mkdir()
    (out / "config.json").write_text(json.dumps({"kind": "program"}))
    _lines(out / "logic-declarative" / "results.jsonl", [{"id": "q", "record": {"id": "q", "response": "r"},
                                                         "trace": {"id": "q", "status": "ok"}}])
    (out / "baseline-run").mkdir()
    (out / "baseline-run" / "config.json").write_text(json.dumps({"kind": "score"}))
    _lines(out / "baseline-run" / "results.jsonl", [{"id": "q", "murgat_s": 0.5}])
    run = load_run(out)
    assert run.kind == "program"
    assert [(r["id"], r["variant"]) for r in run.records] == [("q", "logic-declarative")]
