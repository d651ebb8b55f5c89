"""The voice count (murgat.media.voices) on real audio spoken by espeak-ng: one voice, two voices of
clearly different pitch, too little speech to tell; and the file's pitch track cached by its digest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from murgat.media import voices
from murgat.media.audio import load_audio
from murgat.media.voices import PitchTrack, count_voices, pitch_sex, pitch_track, voice_source

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("ffmpeg") is None,
                                reason="espeak-ng and ffmpeg make the test audio")

MAN = "The library is closed on Sunday because the roof is being repaired."
WOMAN = "Thank you. I will meet you by the clock at the main entrance before it leaves."


def speak(out: Path, text: str, voice: str) -> Path:
    subprocess.run(["espeak-ng", "-v", voice, "-w", str(out), text], check=True, capture_output=True)
    return out


def concat(out: Path, *parts: Path) -> Path:
    args = [a for p in parts for a in ("-i", str(p))]
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", *args, "-filter_complex",
                    f"concat=n={len(parts)}:v=0:a=1", str(out)], check=True)
    return out


def test_one_espeak_voice_is_one_voice_with_a_mans_pitch(tmp_path: Path) -> None:
    track = pitch_track(load_audio(speak(tmp_path / "m.wav", MAN, "en+m3")).samples)
    got = count_voices(track)
    assert got.voices == "one" and got.stretches >= 2 and got.voiced_s >= 1.0
    assert pitch_sex(got.median_hz) == "man"


def test_a_man_then_a_woman_is_several_voices(tmp_path: Path) -> None:
    both = concat(tmp_path / "two.wav", speak(tmp_path / "m.wav", MAN, "en+m3"),
                  speak(tmp_path / "f.wav", WOMAN, "en+f3"))
    got = count_voices(pitch_track(load_audio(both).samples))
    assert got.voices == "several" and "semitones apart" in got.reason


def test_too_little_speech_is_unsure_and_says_what_a_count_needs() -> None:
    sr = voices.SR
    t = np.arange(int(0.5 * sr)) / sr
    got = count_voices(pitch_track((0.3 * np.sin(2 * np.pi * 120 * t)).astype(np.float32)))
    assert got.voices is None and "a count needs 1.0 s" in got.reason
    assert count_voices(pitch_track(np.zeros(sr, dtype=np.float32))).voices is None  # silence: nothing voiced


def test_a_pure_tone_is_tracked_at_its_pitch() -> None:
    sr = voices.SR
    t = np.arange(sr) / sr
    track = pitch_track((0.3 * np.sin(2 * np.pi * 150 * t)).astype(np.float32))
    assert len(track.f0) > 80 and abs(float(np.median(track.f0)) - 150) < 2


def test_the_pitch_sex_leaves_the_overlap_undecided() -> None:
    assert pitch_sex(110) == "man" and pitch_sex(210) == "woman"
    assert pitch_sex(150) is None and pitch_sex(None) is None


def test_a_window_reads_the_cached_file_track_and_falls_back_to_a_one_voice_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = speak(tmp_path / "m.wav", MAN, "en+m3")
    first = voice_source(path)
    assert first is not None and first.file is not None and first.file.voices == "one"

    def boom(*a: object, **k: object) -> PitchTrack:
        raise AssertionError("the pitch track was computed again")

    monkeypatch.setattr(voices, "pitch_track", boom)
    again = voice_source(path)  # from the cache, keyed by the file's digest
    assert again is not None and again.track == first.track
    short = again.window(1.0, 1.5, [])  # too short to count on its own: the file's one voice decides
    assert short["window"]["voices"] is None and short["voices"] == "one"
