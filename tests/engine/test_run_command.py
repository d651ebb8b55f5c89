"""The one command lifecycle (``murgat.engine.command.run_command``): what every run command gets
from it, checked through the command line of each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from tests.cassettes import YES_CASSETTE as SCORE_CASSETTE
from tests.cassettes import write_jsonl as _write


def _questions(tmp: Path) -> Path:
    return _write(tmp / "q.jsonl", [{"id": "a", "media": "friday.mp4", "question": "What mood is the man in?",
                                     "options": ["happy", "bad humor"], "gold": "B",
                                     "response": "She asks for him (audio, 0:01-0:03).\nAnswer: B"}])


def _argv(command: str, q: Path, out: Path, media: Path, cas: Path) -> list[str]:
    """Each command with a model role given to the embedded judge, which cannot write answers."""
    return {
        "generate": ["generate", str(q), "--model", "embedded"],
        "sweep": ["sweep", str(q), "--model", "embedded", "--judge", "embedded", "--efforts", "low"],
        "program-planner": ["program", str(q), "--planner", "embedded", "--variant", "logic-declarative"],
        "program-executor": ["program", str(q), "--planner", f"replay:{cas}", "--executor", "embedded", "--variant",
                             "logic-declarative"],
        "reflect-model": ["reflect", str(q), "--model", "embedded", "--detector", f"replay:{cas}"],
    }[command] + ["--media-root", str(media), "--out", str(out), "--quiet", "--json"]


@pytest.mark.parametrize("command", ["generate", "sweep", "program-planner", "program-executor", "reflect-model"])
def test_a_judge_that_cannot_write_answers_is_refused_before_any_work(command: str, tmp_path: Path,
                                                                      example_media: Path, capsys) -> None:
    """Before: ``generate``/``sweep``/``program --model embedded`` exited 0 with answers the rule-based
    judge could not write (unreadable, 'unknown'), and ``reflect --model embedded`` was refused only
    after writing config.json into the folder it created."""
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "plan"}, "output": {"text": "no program"}}])
    out = tmp_path / "out"
    assert main(_argv(command, _questions(tmp_path), out, example_media, cas)) == 2
    err = capsys.readouterr().err
    assert "embedded" in err and "cannot answer" in err and "Traceback" not in err
    assert not out.exists()  # refused before any work: nothing of this run stays behind


@pytest.mark.parametrize("command", ["score", "faithfulness", "generate", "program", "reflect"])
def test_a_refused_run_leaves_no_folder_it_made(command: str, tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: a run refused for a bad judge spec left the --out folder it had made (holding a .lock,
    or more) behind, with its parents."""
    q = _questions(tmp_path)
    spec = "nosuchprovider:m"
    head = {"score": ["score", str(q), "--judge", spec], "faithfulness": ["faithfulness", str(q), "--judge", spec],
            "generate": ["generate", str(q), "--model", spec], "program": ["program", str(q), "--planner", spec],
            "reflect": ["reflect", str(q), "--model", spec, "--detector", "self"]}[command]
    out = tmp_path / "new" / "deeper" / "run"
    assert main([*head, "--media-root", str(example_media), "--out", str(out), "--quiet"]) == 2
    assert "nosuchprovider" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_a_refused_run_keeps_what_the_folder_already_held(tmp_path: Path, example_media: Path, capsys) -> None:
    """The folder existed: only what this run made goes, never the user's own files."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["score", str(_questions(tmp_path)), "--judge", "nosuchprovider:m", "--media-root",
                 str(example_media), "--out", str(out), "--quiet"]) == 2
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("damage", ["deleted", "truncated"])
def test_a_folder_whose_config_json_is_lost_is_not_resumed_with_other_settings(damage: str, tmp_path: Path,
                                                                                example_media: Path, capsys) -> None:
    """Before: with config.json deleted or cut short, a rerun with other settings exited 0 and mixed old
    and new records under a summary labelled with the new settings."""
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    q = _questions(tmp_path)
    out = tmp_path / "run"
    args = ["score", str(q), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out),
            "--quiet", "--json"]
    assert main(args) == 0
    cfg = out / "config.json"
    if damage == "deleted":
        cfg.unlink()
    else:
        cfg.write_text(cfg.read_text()[:40])
    records = (out / "results.jsonl").read_bytes()
    capsys.readouterr()
    assert main([*args, "--pad", "1"]) == 2
    err = capsys.readouterr().err
    assert "config.json" in err and "--overwrite" in err
    assert (out / "results.jsonl").read_bytes() == records
    assert main([*args, "--pad", "1", "--overwrite"]) == 0  # the way out the message names


def test_config_json_is_written_before_the_first_record(tmp_path: Path, example_media: Path, capsys) -> None:
    """A run stopped after its first record (a replay miss on the second item) already holds the
    config.json that says what made it."""
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "verify", "inputs": {"sentence": "She speaks."}},
                                         "output": {"text": "yes"}}, *SCORE_CASSETTE[1:]])
    q = _write(tmp_path / "q.jsonl", [
        {"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03)."},
        {"id": "b", "media": "friday.mp4", "response": "A man laughs (audio, 0:03-0:05)."}])
    out = tmp_path / "run"
    assert main(["score", str(q), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out),
                 "--quiet", "--json", "--item-concurrency", "1"]) == 3
    assert [json.loads(ln)["id"] for ln in (out / "results.jsonl").read_text().splitlines()] == ["a"]
    assert json.loads((out / "config.json").read_text())["kind"] == "score"
