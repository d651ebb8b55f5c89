"""A damaged run read back through the Python API (``load_run``): said, never an empty summary or a silent gap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.engine.runs import RunUnreadable, load_run, read_summary


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"kind": "score", "fingerprint": {}, "config": {}}))
    rows = [{"id": "a", "case": "scored", "scores": {"murgat_s": 1.0}}, {"id": "b", "case": "scored", "scores": {}}]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "summary.json").write_text(json.dumps({"n_items": 2, "murgat_s": {"value": 0.5}}, indent=2))
    return run


def test_a_truncated_summary_is_an_error_not_an_empty_summary(tmp_path: Path) -> None:
    run = _run(tmp_path)
    assert load_run(run).summary["n_items"] == 2
    text = (run / "summary.json").read_text()
    (run / "summary.json").write_text(text[:12])
    with pytest.raises(RunUnreadable, match=r"summary\.json: not valid JSON .*cut short"):
        load_run(run)
    (run / "summary.json").write_text("[1, 2]")
    with pytest.raises(RunUnreadable, match="not a summary"):
        load_run(run)
    (run / "summary.json").unlink()  # a run that has not written one yet: nothing to say
    assert load_run(run).summary == {} and read_summary(run) == {}


def test_lines_that_are_not_records_are_warned_about(tmp_path: Path) -> None:
    run = _run(tmp_path)
    with open(run / "results.jsonl", "a", encoding="utf-8") as f:
        f.write('{"id": "c", "case": \n')
    with pytest.warns(UserWarning, match=r"1 line\(s\) that are not results were skipped \(line 3"):
        records = load_run(run).records
    assert [r["id"] for r in records] == ["a", "b"]


def test_run_folder_summary_names_a_damaged_file(tmp_path: Path) -> None:
    """Before: ``RunFolder.summary()`` raised pydantic's ValidationError (a traceback in ``summarize``)."""
    from murgat.engine.folder import RunFolder

    run = _run(tmp_path)
    (run / "summary.json").write_text((run / "summary.json").read_text()[:20])
    with pytest.raises(RunUnreadable, match=r"summary\.json: not valid JSON .*cut short"):
        RunFolder(run, repair=False).summary()
    (run / "summary.json").write_text(json.dumps({"n_items": "many"}))
    with pytest.raises(RunUnreadable, match=r"not a score run.s summary .*n_items"):
        RunFolder(run, repair=False).summary()
    (run / "summary.json").unlink()
    with pytest.raises(RunUnreadable, match=r"has no summary\.json"):
        RunFolder(run, repair=False).summary()
