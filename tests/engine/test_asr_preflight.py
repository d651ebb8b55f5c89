"""``--asr-model`` names only models this install provides: one that it lacks is refused once, before
any item, with exit 2 and the models there are — not a ``tool_missing`` record per item (7 of
them, and exit 1, for ``--asr-model tiny.en`` where only Whisper base was installed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.media.asr import installed_models


def _input(tmp: Path, n: int = 3) -> Path:
    p = tmp / "in.jsonl"
    p.write_text("".join(json.dumps({"id": f"i{k}", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03)."})
                         + "\n" for k in range(n)))
    return p


def _missing_names() -> list[str]:
    # an unknown name and a missing folder on every machine; a bundled name only where it is not installed
    names = ["large-v3", "./no-such-model-folder"]
    return names + [n for n, why in installed_models().items() if why is not None]


@pytest.mark.parametrize("model", _missing_names())
@pytest.mark.parametrize("how", [["--judge", "embedded"], ["--judge", "replay:CASSETTE", "--evidence-text"]])
def test_a_missing_asr_model_is_one_early_exit_2(model: str, how: list[str], tmp_path: Path, example_media: Path,
                                                 capsys) -> None:
    cassette = tmp_path / "c.jsonl"
    cassette.write_text("")
    out = tmp_path / "run"
    args = [a.replace("CASSETTE", str(cassette)) for a in how]
    code = main(["score", str(_input(tmp_path)), "--media-root", str(example_media), *args, "--asr-model", model,
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "--asr-model" in err[0] and ("this install provides" in err[0] or "does not exist" in err[0]), err[0]
    assert not out.exists(), "refused before any work: nothing made"


def test_program_checks_the_model_of_find_transcript(tmp_path: Path, example_media: Path, capsys) -> None:
    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({"id": "q", "media": "friday.mp4", "question": "Who speaks?"}) + "\n")
    cassette = tmp_path / "c.jsonl"
    cassette.write_text("")
    code = main(["program", str(data), "--media-root", str(example_media), "--planner", f"replay:{cassette}", "--find",
                 "transcript", "--asr-model", "large-v3", "--out", str(tmp_path / "p"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "--find transcript" in err and "large-v3" in err
