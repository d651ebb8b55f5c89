"""``murgat media``: the transcript table and the evidence folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from murgat.commands.media.cli import words_table
from murgat.media.asr import Segment, Transcript, Word


def test_transcribe_shows_every_word_with_its_times() -> None:
    tr = Transcript(model="test", language="en", segments=[Segment(start=0.0, end=2.5, text=" And so my fellow"),
                                                           Segment(start=2.5, end=4.0, text=" Americans")],
                    words=[Word(word=" And", start=0.0, end=0.3, probability=0.91), Word(word=" so", start=0.3, end=0.6),
                           Word(word=" my", start=0.9, end=1.2), Word(word=" fellow", start=1.2, end=2.4),
                           Word(word=" Americans", start=2.6, end=3.6)])
    lines = words_table(tr).splitlines()
    assert lines[0] == "[   0.00 –    2.50] And so my fellow"
    assert lines[1] == "       0.00 –    0.30  And  p=0.91"
    assert lines[4] == "       1.20 –    2.40  fellow" and lines[5].startswith("[   2.50")
    assert lines[6] == "       2.60 –    3.60  Americans"
    assert "(no words with times" in words_table(Transcript(model="t", segments=[Segment(start=0, end=1, text="x")]))


def _evidence(media: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "murgat", "media", "evidence", str(media), "(audio, 0:01-0:02)",
                           "--out", str(out)], capture_output=True, text=True)


def test_evidence_goes_to_a_plain_folder_only(tmp_path: Path, example_media: Path) -> None:
    got = _evidence(example_media / "friday.mp4", tmp_path / "ev")
    assert got.returncode == 0, got.stderr
    assert json.loads((tmp_path / "ev" / "manifest.json").read_text())["segments"][0]["files"] == ["00_audio_1.00-2.00.wav"]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    got = _evidence(example_media / "friday.mp4", blocker / "ev")
    assert got.returncode == 2 and "cannot write to the output folder" in got.stderr and "Traceback" not in got.stderr
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"kind": "score"}))
    got = _evidence(example_media / "friday.mp4", run)
    assert got.returncode == 2 and "is a murgat 'score' run folder" in got.stderr
    assert sorted(p.name for p in run.iterdir()) == ["config.json"]


def test_probe_prints_a_table_without_json_and_one_document_with_it(example_media: Path, capsys) -> None:
    """``--json`` is the settings' ``print_json``: without it people get the table (a check of a name
    the settings do not have, such as pydantic's ``json`` method, would be always true)."""
    from murgat.cli import main

    media = str(example_media / "friday.mp4")
    assert main(["media", "probe", media]) == 0
    table = capsys.readouterr().out
    assert "has_audio=True" in table and not table.lstrip().startswith("{")
    assert main(["media", "probe", media, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["has_audio"] is True
