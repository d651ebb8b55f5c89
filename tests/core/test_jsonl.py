"""JSONL reading and writing: lines end at ``\\n`` only, torn and corrupt lines are handled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.core.jsonl import (
    ResultsWriteError,
    append_line,
    cut_torn_tail,
    dumps,
    quarantine_lines,
    read_records,
    split_lines,
)

BREAKERS = "a\u2028b\u2029c\u0085d"


def test_line_breakers_survive_a_round_trip(tmp_path: Path) -> None:
    p = tmp_path / "f.jsonl"
    append_line(p, dumps({"id": "1", "text": BREAKERS}))
    append_line(p, json.dumps({"id": "2", "text": BREAKERS}, ensure_ascii=False))  # raw characters given
    raw = p.read_text(encoding="utf-8")
    assert "\u2028" not in raw and "\\u2028" in raw and raw.count("\n") == 2
    records, bad = read_records(p)
    assert not bad and [r["text"] for _, r in records] == [BREAKERS, BREAKERS]


def test_raw_line_breakers_in_a_file_written_elsewhere_are_one_line() -> None:
    text = json.dumps({"t": BREAKERS}, ensure_ascii=False) + "\r\n" + json.dumps({"t": "x"}) + "\n"
    assert len(text.splitlines()) > 2  # what broke run folders before
    lines = split_lines(text)
    assert len(lines) == 2 and json.loads(lines[0])["t"] == BREAKERS


def test_torn_tail_is_cut_but_a_whole_record_missing_its_newline_is_kept(tmp_path: Path) -> None:
    p = tmp_path / "f.jsonl"
    p.write_text('{"id": "1"}\n{"id": "2", "te')
    cut_torn_tail(p)
    assert p.read_text() == '{"id": "1"}\n'
    p.write_text('{"id": "1"}\n{"id": "2"}')
    cut_torn_tail(p)
    assert p.read_text() == '{"id": "1"}\n{"id": "2"}\n'


def test_corrupt_lines_are_reported_and_moved_aside(tmp_path: Path) -> None:
    p = tmp_path / "f.jsonl"
    p.write_text('{"id": "1"}\n{"id": garbage\n{"id": "3"}\n\x00\x00\x00\n')
    records, bad = read_records(p)
    assert [r["id"] for _, r in records] == ["1", "3"] and [b.lineno for b in bad] == [2, 4]
    quarantine_lines(p, bad, tmp_path / "aside.jsonl")
    assert p.read_text() == '{"id": "1"}\n{"id": "3"}\n'
    assert (tmp_path / "aside.jsonl").read_text().count("\n") == 2


def test_absurd_nesting_is_a_bad_line_not_a_crash(tmp_path: Path) -> None:
    p = tmp_path / "f.jsonl"
    p.write_text("[" * 200_000 + "]" * 200_000 + "\n")
    records, bad = read_records(p)
    assert not records and "nested too deeply" in bad[0].reason


def test_a_failed_append_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ResultsWriteError, match="cannot append to /dev/full"):
        append_line("/dev/full", dumps({"id": "1"}))
