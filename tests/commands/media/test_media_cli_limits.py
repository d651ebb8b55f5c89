"""``murgat media evidence`` says what a limit changed: the notes printed and in ``manifest.json``,
one WAV per audio excerpt sent, and the limit options (``--max-audio-s``, ``--over-limit``,
``--provider``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _evidence(media: Path, cites: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "murgat", "media", "evidence", str(media), cites, "--out", str(out),
                           *extra], capture_output=True, text=True)


def test_a_long_audio_citation_is_sampled_noted_and_saved_per_excerpt(tmp_path: Path, long_tone: Path) -> None:
    got = _evidence(long_tone, "(audio, 0:00-6:00; visual, 1:00-1:30)", tmp_path / "ev", "--max-audio-s", "120")
    assert got.returncode == 0, got.stderr
    assert "note: audio 0:00-6:00: 6:00 of audio cited; 2:00 sent, sampled as 4 excerpts of 0:30" in got.stdout
    assert "note: visual 1:00-1:30: 0:30 of video cited; 8 frames sent" in got.stdout
    manifest = json.loads((tmp_path / "ev" / "manifest.json").read_text())
    assert [n["kind"] for n in manifest["notes"]] == ["audio_sampled", "frames_sampled"]  # in time order
    assert manifest["limits"]["max_audio_s"] == 120
    (audio,) = [s for s in manifest["segments"] if s["modality"] == "audio"]
    assert len(audio["files"]) == 4 and all(f.endswith(".wav") for f in audio["files"])


def test_over_limit_refuse_and_a_providers_request_limits(tmp_path: Path, long_tone: Path, example_media: Path) -> None:
    got = _evidence(long_tone, "(audio, 0:00-6:00)", tmp_path / "a", "--over-limit", "refuse")
    assert got.returncode == 0 and "NO EVIDENCE" in got.stdout and "more than 5:00; not sent" in got.stdout
    # a short file no limit touches: no note, exactly the segments as before
    got = _evidence(example_media / "friday.mp4", "(audio, 0:01-0:02)", tmp_path / "b", "--provider", "openai")
    assert got.returncode == 0 and "note:" not in got.stdout
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["notes"] == []
