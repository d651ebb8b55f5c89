"""Frames of long videos by seeking: the same picks and the same pixels as decord, no index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import murgat.media.frames as mf
from murgat.media.errors import NoVideoStream
from murgat.media.frames import VideoFrames, open_video
from murgat.media.seekframes import SeekFrames
from tests.conftest import real_media

CFR_MP4 = ["friday.mp4", "bikes.mp4", "chaplin.mp4", "bigbuckbunny.mp4", "nasa_13013.mp4"]


@pytest.mark.parametrize("name", CFR_MP4)
def test_seeking_picks_the_frames_decord_picks(name: str) -> None:
    path = real_media(name)
    dec, seek = VideoFrames(path), SeekFrames(path)
    d = dec.duration
    for a, b, fps, cap in [(0.0, d, 1.0, 8), (1.0, 4.0, 1.0, 8), (d / 2, d / 2 + 3.3, 10.0, 5), (d - 2, d, 30.0, 100),
                           (2.02, 2.05, 1.0, 8)]:
        assert seek.range_indices(a, b, fps, cap) == dec.range_indices(a, b, fps, cap)
        for x, y in zip(dec.frames_in(a, b, fps, cap), seek.frames_in(a, b, fps, cap), strict=True):
            assert x.index == y.index and x.time == pytest.approx(y.time, abs=1e-3)
            assert np.array_equal(x.image, y.image)
    times = [0.0, 0.5, 1.0, 2.51, d / 3, d - 0.01]
    for x, y in zip(dec.frames_at(times), seek.frames_at(times), strict=True):
        assert x.index == y.index and np.array_equal(x.image, y.image)


def test_long_video_never_builds_a_decord_index(monkeypatch: pytest.MonkeyPatch, friday: Path) -> None:
    import decord

    def no_index(*a: object, **k: object) -> None:
        raise AssertionError("decord indexed the file")

    monkeypatch.setattr(decord, "VideoReader", no_index)
    monkeypatch.setattr(mf, "LONG_VIDEO_S", 1.0)
    mf.clear_readers()
    vf = open_video(friday)
    assert isinstance(vf, SeekFrames)
    frames = vf.frames_in(1.0, 4.0, 1.0, 8)
    assert [round(f.time, 3) for f in frames] == [1.0, 2.0, 3.0, 4.0]
    assert vf.seeks <= 2  # frames a second apart are reached by decoding forward
    mf.clear_readers()


def test_frame_cache_is_bounded(friday: Path) -> None:
    vf = SeekFrames(friday)
    vf.max_cache_bytes = 3 * 480 * 640 * 3
    assert len(vf.frames_in(0.0, 6.0, 10.0, 60)) == 60  # one request may exceed the cap while it is served
    assert len(vf.frames_at([5.0])) == 1
    assert len(vf._frames) <= 3 and vf._bytes <= vf.max_cache_bytes


def test_audio_only_file_has_no_seek_reader(jfk: Path) -> None:
    with pytest.raises(NoVideoStream):
        SeekFrames(jfk)
