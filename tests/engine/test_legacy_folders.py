"""Run folders written before the engine (commit b5ff0d2, tests/data/legacy_runs/: made by that
code on the bundled media) resume unchanged: nothing is done again, no judge is asked, and every
record stays byte for byte what it was (#21 "must hold")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from murgat.cli import main

LEGACY = Path(__file__).resolve().parents[1] / "data" / "legacy_runs"


def _copy(tmp: Path, name: str) -> Path:
    dst = tmp / name
    shutil.copytree(LEGACY / name, dst)
    return dst


def test_a_legacy_score_folder_resumes_byte_for_byte(tmp_path, example_media, capsys) -> None:
    run = _copy(tmp_path, "score-run")
    before = sorted((run / "results.jsonl").read_text().splitlines())
    assert main(["score", str(LEGACY / "score_input.jsonl"), "--media-root", str(example_media), "--judge",
                 "embedded", "--out", str(run), "--quiet", "--json"]) == 0
    assert sorted((run / "results.jsonl").read_text().splitlines()) == before
    assert '"kind": "score"' in (run / "config.json").read_text()  # adopted: the kind is recorded now
    assert "changed since" not in capsys.readouterr().err


def test_a_legacy_faithfulness_folder_resumes_byte_for_byte(tmp_path, example_media, monkeypatch, capsys) -> None:
    run = _copy(tmp_path, "faith-run")
    for name in ("chains.jsonl", "judge.jsonl"):  # the folder was made with relative paths (replay:judge.jsonl)
        shutil.copy(LEGACY / name, tmp_path / name)
    (tmp_path / "judge.jsonl").write_text("")  # no answers at all: any request would be a replay miss (exit 3)
    monkeypatch.chdir(tmp_path)
    before = sorted((run / "results.jsonl").read_text().splitlines())
    assert main(["faithfulness", "chains.jsonl", "--media-root", str(example_media), "--judge", "replay:judge.jsonl",
                 "--out", "faith-run", "--quiet", "--json"]) in (0, 1)
    assert sorted((run / "results.jsonl").read_text().splitlines()) == before
    assert main(["view", str(run)]) == 0 and main(["summarize", str(run)]) == 0


TODAY = LEGACY / "c23eead"  # one folder per run command, made by the main the command lifecycle started from
FOLDERS = json.loads((TODAY / "commands.json").read_text())


def _streams(path: Path) -> dict[str, bytes]:
    """Every JSONL file a run folder (or its file output) holds, by relative path: what must stay byte for byte."""
    files = [path] if path.is_file() else sorted(path.rglob("*.jsonl"))
    return {str(f.relative_to(path.parent)): f.read_bytes() for f in files}


@pytest.mark.parametrize("name", sorted(FOLDERS["commands"]))
def test_a_folder_of_every_command_resumes_with_nothing_redone(name: str, tmp_path, example_media, monkeypatch,
                                                               capsys) -> None:
    """Every command's folder made by the main before the command lifecycle (c23eead): a rerun of the
    same command asks no model or judge (every cassette is emptied: any request would be a replay miss,
    exit 3), exits as it did, and leaves every record byte for byte what it was."""
    err = _resumed(name, tmp_path, example_media, monkeypatch, capsys)
    assert "replay cassette miss" not in err


#: the commands that ask judge probes (sweep through its score runs)
PROBED = ("score-run", "faith-run", "reflect-run", "reflect-gen-run", "program-run", "sweep-run")


@pytest.mark.parametrize("name", PROBED)
def test_a_folder_resumes_with_probes_on_and_nothing_redone(name: str, tmp_path, example_media, monkeypatch,
                                                            capsys) -> None:
    """The probes enter no fingerprint: a folder made before them resumes with ``--probes on`` (the
    emptied cassettes leave every probe unanswered, said loudly, never a stop), nothing is redone and
    the exit status is the one it had."""
    err = _resumed(name, tmp_path, example_media, monkeypatch, capsys, "--probes", "on")
    assert "WARNING: JUDGE PROBES FAILED" in err
    assert "holds a run with different scoring settings" not in err


def _resumed(name: str, tmp_path: Path, example_media: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any,
             *extra: str) -> str:
    work = tmp_path / "today"
    shutil.copytree(TODAY, work)
    for cassette in work.glob("*.cassette.jsonl"):
        cassette.write_text("")
    monkeypatch.chdir(work)
    if name == "posthoc-run":  # that version named --base by its absolute path: point the copy at the copied file
        cfg = json.loads((work / name / "config.json").read_text())
        cfg["fingerprint"]["base"] = str((work / "generate-file.jsonl").resolve())
        (work / name / "config.json").write_text(json.dumps(cfg))
    before = _streams(work / name)
    if name.endswith(".jsonl"):
        before |= _streams(work / name.replace(".jsonl", ".run"))
    code = main([*FOLDERS["commands"][name], "--media-root", str(example_media), "--quiet", "--json", *extra])
    err = capsys.readouterr().err
    assert code == FOLDERS["exit"][name], err
    after = _streams(work / name)
    if name.endswith(".jsonl"):
        after |= _streams(work / name.replace(".jsonl", ".run"))
    assert after == before
    assert "changed since" not in err
    return err
