"""What the write gateway (:mod:`murgat.media.safewrite`) and the output rule (:mod:`murgat.engine.outputs`)
refuse, end to end through the commands: links planted where a run writes are never written
through, and ``judge check``, ``export``, ``view``, ``import inspect`` and ``--cache`` never take a
file that is not theirs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.engine.outputs import content_of
from murgat.media import safewrite
from tests.cassettes import YES_CASSETTE as SCORE_CASSETTE
from tests.cassettes import write_jsonl as _write

VICTIM = b"a file outside the run folder\n"


def _input(tmp: Path) -> Path:
    return _write(tmp / "in.jsonl", [{"id": "a", "media": "friday.mp4", "question": "What mood is the man in?",
                                      "options": ["happy", "bad humor"], "gold": "B",
                                      "response": "She asks for him (audio, 0:01-0:03).\nAnswer: B"}])


def _score(tmp: Path, media: Path, run: Path, *extra: str) -> int:
    cas = tmp / "cassette.jsonl"
    if not cas.exists():
        _write(cas, SCORE_CASSETTE)
    inp = tmp / "in.jsonl" if (tmp / "in.jsonl").exists() else _input(tmp)
    return main(["score", str(inp), "--judge", f"replay:{cas}", "--media-root", str(media), "--out", str(run),
                 "--quiet", "--json", *extra])


def _victim(tmp: Path) -> Path:
    outside = tmp / "outside"
    outside.mkdir(exist_ok=True)
    v = outside / "victim"
    v.write_bytes(VICTIM)
    return v


@pytest.mark.parametrize("name", ["summary.json.tmp", "config.json.tmp", "results.jsonl.tmp"])
def test_a_link_planted_at_a_temporary_name_is_never_written_through(name: str, tmp_path: Path,
                                                                      example_media: Path) -> None:
    """Before: the fixed temporary names were opened with ``open(tmp, "wb")``, following the link."""
    run = tmp_path / "run"
    run.mkdir()
    victim = _victim(tmp_path)
    (run / name).symlink_to(victim)
    assert _score(tmp_path, example_media, run) == 0
    assert victim.read_bytes() == VICTIM
    assert json.loads((run / "summary.json").read_text())["n_items"] == 1


def test_a_link_planted_at_the_runs_cache_is_refused(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: SQLite followed ``RUN/cache.sqlite`` and made its database in the file outside."""
    run = tmp_path / "run"
    run.mkdir()
    victim = _victim(tmp_path)
    (run / "cache.sqlite").symlink_to(victim)
    assert _score(tmp_path, example_media, run) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and "Traceback" not in err
    assert victim.read_bytes() == VICTIM


def test_a_link_planted_at_the_corrupt_lines_file_is_refused(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: the corrupt line was appended to the file outside the folder."""
    run = tmp_path / "run"
    assert _score(tmp_path, example_media, run) == 0
    with open(run / "results.jsonl", "ab") as f:
        f.write(b"not json\n")
    victim = _victim(tmp_path)
    (run / "results.corrupt.jsonl").symlink_to(victim)
    assert _score(tmp_path, example_media, run) in (2, 5)
    err = capsys.readouterr().err
    assert "symbolic link" in err and "Traceback" not in err
    assert victim.read_bytes() == VICTIM


def test_judge_check_never_takes_an_input_or_a_runs_records_as_its_cache(tmp_path: Path, example_media: Path,
                                                                         capsys) -> None:
    """Before: ``judge check --cache in.jsonl`` moved the input aside and put a database in its place."""
    inp = _input(tmp_path)
    run = tmp_path / "run"
    assert _score(tmp_path, example_media, run) == 0
    cas = tmp_path / "cassette.jsonl"
    for target in (inp, run / "results.jsonl"):
        before = target.read_bytes()
        assert main(["judge", "check", "--judge", f"replay:{cas}", "--cache", str(target)]) == 2
        err = capsys.readouterr().err
        assert f"--cache {target}" in err and "Traceback" not in err
        assert target.read_bytes() == before and not list(target.parent.glob("*.corrupt-*"))


@pytest.mark.parametrize("target", ["responses", "cache"])
def test_judge_check_records_only_into_a_cassette(target: str, tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: ``judge check --record`` appended cassette lines to a responses file or to ``cache.sqlite``."""
    run = tmp_path / "run"
    assert _score(tmp_path, example_media, run) == 0
    path = tmp_path / "in.jsonl" if target == "responses" else run / "cache.sqlite"
    before = path.read_bytes()
    assert main(["judge", "check", "--judge", f"replay:{tmp_path / 'cassette.jsonl'}", "--cache",
                 str(tmp_path / "jc.sqlite"), "--record", str(path)]) == 2
    assert f"--record {path}" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_a_cache_named_as_sqlites_side_file_is_refused(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: ``--cache A/cache.sqlite-wal`` was accepted, and A's next open deleted C's unsaved answers."""
    a = tmp_path / "a"
    assert _score(tmp_path, example_media, a) == 0
    assert _score(tmp_path, example_media, tmp_path / "c", "--cache", str(a / "cache.sqlite-wal")) == 2
    assert "SQLite" in capsys.readouterr().err
    with sqlite3.connect(a / "cache.sqlite") as con:
        assert con.execute("SELECT COUNT(*) FROM responses").fetchone()[0] > 0


def test_export_never_replaces_responses_that_start_with_a_byte_order_mark(tmp_path: Path, example_media: Path,
                                                                          capsys) -> None:
    run = tmp_path / "run"
    assert _score(tmp_path, example_media, run) == 0
    bom = tmp_path / "edited.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + (tmp_path / "in.jsonl").read_bytes())
    assert content_of(bom) == "responses"
    before = bom.read_bytes()
    assert main(["export", str(run), "--format", "jsonl", "--out", str(bom)]) == 2
    assert "model responses" in capsys.readouterr().err and bom.read_bytes() == before


def test_view_never_replaces_responses_in_the_authors_json_list(tmp_path: Path, example_media: Path, capsys) -> None:
    run = tmp_path / "run"
    assert _score(tmp_path, example_media, run) == 0
    listed = tmp_path / "answers.json"
    listed.write_text(json.dumps([{"id": "a", "video": "friday", "model_generation": "She asks (audio, 0:01).",
                                   "question": "?", "options": ["x", "y"], "answer": "B"}], indent=2))
    before = listed.read_bytes()
    assert main(["view", str(run), "--out", str(listed)]) == 2
    assert "model responses" in capsys.readouterr().err and listed.read_bytes() == before


def test_the_gateway_refuses_a_link_out_and_follows_one_inside(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "out").symlink_to(victim)
    for write in (lambda: safewrite.write_bytes(folder / "out", b"x"), lambda: safewrite.append_bytes(folder / "out", b"x"),
                  lambda: safewrite.connect_sqlite(folder / "out")):
        with pytest.raises(safewrite.UnsafePath):
            write()
    assert victim.read_bytes() == VICTIM
    (folder / "pages").mkdir()
    (folder / "page.html").symlink_to(folder / "pages" / "x.html")
    safewrite.write_text(folder / "page.html", "inside")
    assert (folder / "pages" / "x.html").read_text() == "inside" and (folder / "page.html").is_symlink()
    (folder / "sub").symlink_to(tmp_path / "outside")
    with pytest.raises(safewrite.UnsafePath):
        safewrite.write_bytes(folder / "sub" / "f", b"x", boundary=folder)
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["victim"]
