"""Run folders written before the engine (commit b5ff0d2, tests/data/legacy_runs/: made by that
code on the bundled media) resume unchanged: nothing is done again, no judge is asked, and every
record stays byte for byte what it was (#21 "must hold")."""

from __future__ import annotations

import shutil
from pathlib import Path

from murgat.cli import main

LEGACY = Path(__file__).resolve().parents[2] / "data" / "legacy_runs"


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
