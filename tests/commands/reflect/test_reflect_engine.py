"""``murgat reflect`` on the one engine (#21): it has a config.json (a rerun with another model,
detector or K is refused instead of mixed into one summary), ``--overwrite``, ``--retry-errors``,
and a crash between its two appends can no longer leave a folder that fails on every rerun."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main
from murgat.core.jsonl import read_records
from tests.commands.reflect.test_reflect import setup


def _argv(tmp: Path, media: Path, cas: Path, out: Path, *extra: str) -> list[str]:
    return ["reflect", str(tmp / "q.jsonl"), "--media-root", str(media), "--model", f"replay:{cas}", "--detector",
            f"replay:{cas}", "--judge", f"replay:{tmp / 'judge.jsonl'}", "--granularity", "step", "--from",
            str(tmp / "from.jsonl"), "--out", str(out), "--json", "--quiet", *extra]


def test_other_settings_are_refused_and_overwrite_starts_over(tmp_path, example_media, capsys) -> None:
    _, _, cas = setup(tmp_path)
    out = tmp_path / "r"
    assert main(_argv(tmp_path, example_media, cas, out, "--ids", "c2")) == 0
    assert json.loads((out / "config.json").read_text())["kind"] == "reflect"
    capsys.readouterr()
    assert main(_argv(tmp_path, example_media, cas, out, "--ids", "c2", "--k", "2")) == 2
    assert "different scoring settings (k)" in capsys.readouterr().err
    assert main(_argv(tmp_path, example_media, cas, out, "--ids", "c2", "--k", "2", "--overwrite")) == 0
    assert json.loads((out / "summary.json").read_text())["k"] == 2


def test_retry_errors_redoes_failed_items(tmp_path, example_media, capsys) -> None:
    """Before: reflect had no --retry-errors; an item that failed in an outage stayed failed forever."""
    import shutil

    _, _, cas = setup(tmp_path)
    media = tmp_path / "media"
    media.mkdir()
    shutil.copy(example_media / "friday.mp4", media / "friday.mp4")
    chain = {"question": "What mood is the man in?", "options": ["happy", "bad humor"], "gold": "B",
             "response": "Bad humor means grumpy.\nAnswer: B"}
    for name in ("q.jsonl", "from.jsonl"):  # c9's video is not there yet
        p = tmp_path / name
        p.write_text(p.read_text() + json.dumps({"id": "c9", "media": "later.mp4", **chain}) + "\n")
    out = tmp_path / "r"
    argv = _argv(tmp_path, media, cas, out, "--ids", "c2,c9")
    assert main(argv) == 1
    assert "FAILED: 1 of 2" in capsys.readouterr().err
    shutil.copy(media / "friday.mp4", media / "later.mp4")
    assert main(argv) == 0  # the video now resolves: a missing_media record is redone without the flag
    capsys.readouterr()
    assert main([*argv, "--retry-errors"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == 0 and doc["reflected"] == 2


def test_a_crash_between_the_two_old_appends_is_adopted(tmp_path, example_media, capsys) -> None:
    """Before: a crash after appending responses.jsonl but before traces.jsonl left a folder that
    reported "FAILED: -1 of N" on every rerun."""
    _, _, cas = setup(tmp_path)
    out = tmp_path / "r"
    assert main(_argv(tmp_path, example_media, cas, out, "--ids", "c2,c3")) == 0
    # the layout of earlier versions, cut by a crash: c3 has a response but no trace
    resp = [r for _, r in read_records(out / "responses.jsonl")[0]]
    traces = [t for _, t in read_records(out / "traces.jsonl")[0] if t["id"] != "c3"]
    (out / "results.jsonl").unlink()
    (out / "config.json").unlink()
    (out / "traces.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces))
    (out / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in resp))
    capsys.readouterr()
    assert main(_argv(tmp_path, example_media, cas, out, "--ids", "c2,c3")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == 0 and doc["reflected"] == 2
    assert [t["id"] for _, t in read_records(out / "traces.jsonl")[0]] == ["c2", "c3"]
    assert [r["id"] for _, r in read_records(out / "responses.jsonl")[0]] == ["c2", "c3"]


def test_a_judge_that_cannot_write_chains_is_refused_before_any_work(tmp_path, example_media, capsys) -> None:
    _, _, cas = setup(tmp_path)
    out = tmp_path / "r"
    assert main(["reflect", str(tmp_path / "q.jsonl"), "--media-root", str(example_media), "--model", "embedded",
                 "--detector", f"replay:{cas}", "--out", str(out), "--json", "--quiet"]) == 2
    assert "embedded" in capsys.readouterr().err
    assert not (out / "results.jsonl").exists() and not list(out.glob("cache.sqlite*"))
