"""Long audio: spans decoded by seeking into cached chunks, sample for sample the whole-track decode.

Real files are made "long" by lowering :data:`murgat.media.audio.LONG_AUDIO_S` and the chunk length, so
chunk boundaries fall inside the spans compared. The tolerance is the MPEG audio decoder
conformance criterion (ISO/IEC 11172-4 §2.6.3, ISO/IEC 14496-4): at most 2⁻¹⁴ of full scale per
sample, RMS below 2⁻¹⁵/√12 — the documented accuracy a decoder must reach against the reference.
On these files ffmpeg's seeked output is in fact bit-identical. (The per-file check in
:func:`murgat.media.audio.seek_method` allows single samples up to 2⁻¹¹ for AAC's noise substitution;
these files need none of it.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import murgat.media.audio as ma
from murgat.media.audio import SEEK_TOLERANCE_RMS, AudioTrack, ChunkedAudio, load_audio, open_audio
from murgat.media.lru import Lru
from murgat.media.streams import probe
from tests.conftest import real_media

SEEKABLE = ["nasa_13013.mp4", "jfk.flac", "apollo11.mp3", "countdown.mp3", "pyannote_sample.wav",
            "voices-around-a-fire.mp3"]


@pytest.fixture()
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ma, "CHUNK_S", 2)
    monkeypatch.setattr(ma, "LONG_AUDIO_S", 5.0)
    ma.clear_memory_cache()


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert len(a) == len(b)
    if len(a):
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        assert d.max() <= 2.0**-14
        assert float(np.sqrt(np.mean(d ** 2))) < SEEK_TOLERANCE_RMS


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("name", SEEKABLE)
def test_span_by_seeking_equals_span_of_whole_track(name: str) -> None:
    path = real_media(name)
    info = probe(path)
    whole = load_audio(path)
    chunked = open_audio(path)
    assert isinstance(chunked, ChunkedAudio) and chunked.method == "seek"
    dur = whole.duration
    for a, b in [(0.0, 1.3), (1.9, 2.1), (3.25, 7.75), (dur / 2, dur / 2 + 2.5), (dur - 1.5, dur + 3.0), (0.0, dur)]:
        _same(chunked.slice(a, b), whole.slice(a, b))
    assert chunked.slice(dur + 5, dur + 6).size == 0 and info.audio_stream == chunked.stream


@pytest.mark.usefixtures("small_chunks")
def test_file_whose_seeks_land_off_is_streamed_exactly() -> None:
    """Vorbis in WebM: ffmpeg's seek lands ~23 ms off here, so the file is decoded in one
    sequential pass into the same chunks — exact, not approximately aligned."""
    path = real_media("tears-of-steel-battle-clip-medium.webm")
    chunked = open_audio(path)
    assert isinstance(chunked, ChunkedAudio) and chunked.method == "stream"
    whole = load_audio(path)
    for a, b in [(0.0, 3.3), (10.5, 13.0), (60.0, 80.0)]:
        assert np.array_equal(chunked.slice(a, b), whole.slice(a, b))


@pytest.mark.usefixtures("small_chunks")
def test_a_span_decodes_only_its_chunks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The whole track is never decoded for a span of a long file (it was, before)."""
    monkeypatch.setenv("MURGAT_CACHE_DIR", str(tmp_path / "cache"))  # nothing decoded yet
    path = real_media("apollo11.mp3")
    chunked = open_audio(path)
    assert isinstance(chunked, ChunkedAudio)
    assert chunked.method == "seek"  # the one-time check decodes the first 3 chunks; now count
    calls: list[tuple[float | None, float | None]] = []
    whole_decodes: list[int] = []
    real_seek, real_whole = ma._seek_decode, ma._decode

    def spy(p: str, stream: int, sr: int, seek: float, duration: float) -> np.ndarray:
        calls.append((seek, duration))
        return real_seek(p, stream, sr, seek, duration)

    def whole(*a: object, **k: object) -> np.ndarray:
        whole_decodes.append(1)
        return real_whole(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(ma, "_seek_decode", spy)
    monkeypatch.setattr(ma, "_decode", whole)
    x = chunked.slice(80.0, 82.0)
    assert len(x) == 32000
    assert calls == [(79.0, ma.CHUNK_S + ma.SEEK_MARGIN_S)] and not whole_decodes  # chunk 40 only, by seeking
    calls.clear()
    assert np.array_equal(open_audio(path).slice(80.0, 82.0), x) and not calls  # cached in memory
    ma.clear_memory_cache()
    assert np.array_equal(ChunkedAudio(probe(path)).slice(80.0, 82.0), x) and not calls  # and on disk


@pytest.mark.usefixtures("small_chunks")
def test_memory_is_bounded_by_the_chunk_lru(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ma, "_CHUNKS", Lru(3))
    chunked = ChunkedAudio(probe(real_media("apollo11.mp3")))
    for t in range(0, 80, 4):
        chunked.slice(float(t), t + 1.0)
    assert len(ma._CHUNKS._items) <= 3


def test_short_file_is_read_whole_as_before(friday: Path) -> None:
    assert isinstance(open_audio(friday), AudioTrack)
