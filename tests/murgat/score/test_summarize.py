"""``murgat summarize``: runs side by side, a damaged summary named (exit 2, never a traceback), and the
agreement between the judges of runs over the same responses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main

CASSETTE = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["The woman speaks."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]


def _write(p: Path, rows: list[dict]) -> Path:
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _score(tmp: Path, media: Path, name: str = "run", cassette: list[dict] | None = None) -> Path:
    inp = tmp / "in.jsonl"
    if not inp.exists():
        _write(inp, [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03)."},
                     {"id": "b", "media": "friday.mp4", "response": "A man laughs (audio, 0:03-0:05)."}])
    cas = _write(tmp / f"{name}.cassette.jsonl", cassette or CASSETTE)
    run = tmp / name
    assert main(["score", str(inp), "--judge", f"replay:{cas}", "--media-root", str(media), "--out", str(run),
                 "--quiet", "--json"]) == 0
    return run


@pytest.mark.parametrize("damage", ["truncated", "not a summary"])
def test_a_damaged_summary_is_a_named_error(damage: str, tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: a truncated summary.json made ``summarize`` print pydantic's traceback."""
    run = _score(tmp_path, example_media)
    text = (run / "summary.json").read_text()
    (run / "summary.json").write_text(text[:100] if damage == "truncated" else json.dumps({"murgat_s": "high"}))
    capsys.readouterr()
    assert main(["summarize", str(run)]) == 2
    err = capsys.readouterr().err
    assert "summary.json" in err and "Traceback" not in err
    assert ("cut short" in err) if damage == "truncated" else ("not a score run's summary" in err)


def test_a_damaged_summary_of_another_kind_is_a_named_error(tmp_path: Path, capsys) -> None:
    """Before: ``summarize`` of a faithfulness folder read its summary.json with json.loads (a traceback)."""
    run = tmp_path / "faith"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"kind": "faithfulness", "fingerprint": {}, "config": {}}))
    (run / "summary.json").write_text('{"upr": {"value": 0.')
    assert main(["summarize", str(run)]) == 2
    err = capsys.readouterr().err
    assert "summary.json: not valid JSON" in err and "Traceback" not in err
