"""Decoding real files: exact audio slices, frame timestamps inside their range."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import pytest

from murgat.media.audio import load_audio, wav_bytes
from murgat.media.errors import CorruptMedia, NoAudioStream, NoVideoStream
from murgat.media.frames import VideoFrames, encode_image, open_video, resize_max_side
from tests.conftest import real_media


def test_audio_is_mono_16k_with_stream_duration(nasa: Path) -> None:
    tr = load_audio(nasa)
    assert tr.sr == 16000 and tr.samples.dtype == np.float32 and tr.samples.ndim == 1
    assert tr.stream == 4
    assert tr.duration == pytest.approx(13.056, abs=0.05)


@pytest.mark.parametrize(("start", "end"), [(1.0, 3.0), (0.25, 0.5), (2.0001, 2.9999), (0, 0)])
def test_slices_have_exact_sample_count(friday: Path, start: float, end: float) -> None:
    tr = load_audio(friday)
    assert len(tr.slice(start, end)) == round(end * 16000) - round(start * 16000)


def test_slice_clamps_and_rejects_reversed(friday: Path) -> None:
    tr = load_audio(friday)
    assert len(tr.slice(5.0, 100.0)) == len(tr.samples) - 80000
    with pytest.raises(ValueError):
        tr.slice(3, 2)


def test_point_window(friday: Path) -> None:
    a, b, x = load_audio(friday).window(0.5, 1.0)
    assert (a, b) == (0.0, 1.5) and len(x) == 24000


def test_wav_bytes_round_trip() -> None:
    x = np.sin(np.linspace(0, 100, 16000)).astype(np.float32) * 0.5
    with wave.open(io.BytesIO(wav_bytes(x)), "rb") as w:
        assert (w.getnchannels(), w.getframerate(), w.getnframes()) == (1, 16000, 16000)


def test_silent_track_decodes_to_silence() -> None:
    tr = load_audio(real_media("flower.webm"))
    assert float(np.abs(tr.samples).max()) < 1e-3


def test_no_audio_stream(bikes: Path) -> None:
    with pytest.raises(NoAudioStream, match=r"bikes\.mp4"):
        load_audio(bikes)


def test_audio_only_file_has_no_frames(jfk: Path) -> None:
    with pytest.raises(NoVideoStream):
        VideoFrames(jfk)


def test_frames_at_times_show_the_current_frame(friday: Path) -> None:
    vf = open_video(friday)
    frames = vf.frames_at([0.0, 1.0, 2.51])
    assert [round(f.time, 3) for f in frames] == [0.0, 1.0, 2.5]
    assert frames[0].image.shape == (480, 640, 3)


@pytest.mark.parametrize(("start", "end", "fps", "cap"), [(1.0, 4.0, 1.0, 8), (0.0, 6.0, 10.0, 5), (2.02, 2.05, 1.0, 8)])
def test_frames_in_range_have_timestamps_inside(friday: Path, start: float, end: float, fps: float, cap: int) -> None:
    frames = open_video(friday).frames_in(start, end, fps, cap)
    assert 1 <= len(frames) <= cap
    assert all(start - 1e-6 <= f.time <= end + 1e-6 for f in frames)
    assert [f.time for f in frames] == sorted(f.time for f in frames)


def test_multi_stream_file_decodes_the_probed_stream(nasa: Path) -> None:
    vf = open_video(nasa)
    assert vf.stream_note is None and vf.frames_at([1.0])[0].image.shape == (270, 480, 3)


def test_webm_frames() -> None:
    frames = open_video(real_media("flower.webm")).frames_in(0, 5, 1, 8)
    assert len(frames) == 6 and frames[-1].time <= 5.06


def test_resize_and_encode() -> None:
    img = np.zeros((480, 640, 3), np.uint8)
    small = resize_max_side(img, 320)
    assert small.shape == (240, 320, 3)
    assert resize_max_side(img, 2000) is img
    assert encode_image(small, "jpeg")[:2] == b"\xff\xd8"
    assert encode_image(small, "png")[:4] == b"\x89PNG"


def test_corrupt_video(tmp_path: Path, friday: Path) -> None:
    bad = tmp_path / "trunc.mp4"
    bad.write_bytes(friday.read_bytes()[:4000])
    with pytest.raises(CorruptMedia):
        open_video(bad).frames_at([3.0])


def test_cached_tracks_are_read_without_the_ast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached track (what ``np.save`` writes) is read without ``np.load``'s ``ast.literal_eval``: on
    CPython 3.11 two threads building ASTs at once can raise ``SystemError: AST constructor recursion
    depth mismatch``, which once made a faithfulness item an internal error. Anything else, or a file
    cut short, still goes through ``np.load``, which says what is wrong."""
    import ast

    from murgat.media.audio import _read_npy

    tracks = [np.zeros(0, np.float32), np.float32([0.5]), np.random.default_rng(0).random(160_001, np.float32)]
    for k, x in enumerate(tracks):
        np.save(tmp_path / f"t{k}.npy", x)
    with monkeypatch.context() as m:
        m.setattr(ast, "literal_eval", lambda *a: (_ for _ in ()).throw(AssertionError("the AST was used")))
        for k, x in enumerate(tracks):
            got = _read_npy(tmp_path / f"t{k}.npy")
            assert got.dtype == np.float32 and np.array_equal(got, x)
    other = np.arange(6, dtype=np.int64).reshape(2, 3)
    np.save(tmp_path / "other.npy", other)
    assert np.array_equal(_read_npy(tmp_path / "other.npy"), other)
    cut = (tmp_path / "t2.npy").read_bytes()[:-4]
    (tmp_path / "cut.npy").write_bytes(cut)
    with pytest.raises(ValueError):
        _read_npy(tmp_path / "cut.npy")
    (tmp_path / "tiny.npy").write_bytes(b"\x93NUM")
    with pytest.raises(ValueError):
        _read_npy(tmp_path / "tiny.npy")
