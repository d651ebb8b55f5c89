"""Probing real files, with their oddities (multi-stream, no audio, silent audio, webm)."""

from __future__ import annotations

from pathlib import Path

import pytest

from media.errors import CorruptMedia, MediaNotFound
from media.probe import probe

from ..conftest import real_media


def test_nasa_multi_stream_picks_largest_video_and_best_audio(nasa: Path) -> None:
    info = probe(nasa)
    assert len([s for s in info.streams if s.type == "video"]) == 2
    assert info.video_stream == 3 and (info.width, info.height) == (480, 270)
    assert info.audio_stream == 4 and info.sample_rate == 16000
    assert info.duration == pytest.approx(16.57)
    assert info.video_duration == pytest.approx(13.013, abs=0.01)
    assert info.audio_duration == pytest.approx(13.056, abs=0.01)


def test_bikes_has_no_audio(bikes: Path) -> None:
    info = probe(bikes)
    assert info.has_video and not info.has_audio and info.audio_duration is None
    assert info.durations() == {"visual": pytest.approx(10.0), "audio": None}


def test_webm_duration_from_container() -> None:
    info = probe(real_media("flower.webm"))
    assert info.has_audio and info.video_duration == pytest.approx(5.06, abs=0.01)


def test_audio_only(jfk: Path) -> None:
    info = probe(jfk)
    assert not info.has_video and info.audio_duration == pytest.approx(11.0)


def test_missing_and_corrupt(tmp_path: Path) -> None:
    with pytest.raises(MediaNotFound, match="does not exist"):
        probe(tmp_path / "nope.mp4")
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00not a video at all" * 100)
    with pytest.raises(CorruptMedia, match=r"bad\.mp4"):
        probe(bad)
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(CorruptMedia, match="empty"):
        probe(empty)
