"""How an item fails and how a run ends (``murgat.engine.outcome``)."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main
from murgat.core.schema import ResponseResult
from murgat.engine.outcome import ItemFailure, error_kind, failure_line


def test_an_error_record_carries_its_kind_beside_the_message(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: the kind of an error was only the text before the first colon of its message, split
    again wherever it was counted."""
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "gone.mp4", "response": "x"}) + "\n")
    assert main(["score", str(inp), "--judge", "embedded", "--media-root", str(example_media), "--out",
                 str(tmp_path / "run"), "--quiet", "--json"]) == 1
    (rec,) = [json.loads(ln) for ln in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert rec["error_kind"] == "missing_media" and rec["error"].startswith("missing_media: 'gone.mp4' not found")
    assert "missing_media: 1" in capsys.readouterr().err


def test_records_of_earlier_versions_are_read_by_their_message() -> None:
    old = ResponseResult(id="a", error="corrupt_media: moov atom not found", case="error")
    new = ResponseResult(id="b", error="it: has a colon", error_kind="internal_error", case="error")
    assert (error_kind(old), error_kind(new)) == ("corrupt_media", "internal_error")
    assert error_kind({"id": "c", "generation_error": "missing_base: no base response"}) == "missing_base"
    assert error_kind(ResponseResult(id="d")) is None
    line = failure_line([old, new], None)
    assert line is not None and "corrupt_media: 1" in line and "internal_error: 1" in line


def test_a_failure_reads_as_one_line() -> None:
    assert ItemFailure("missing_media", "'x.mp4' not found").line == "missing_media: 'x.mp4' not found"
