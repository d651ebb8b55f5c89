"""Audio: decode a file's chosen audio stream once to mono 16 kHz float32, then slice.

Decoding goes through an ``ffmpeg`` pipe with an explicit ``-map`` of the stream that
:mod:`media.probe` chose, so the samples match the reported duration. torchaudio is
avoided on purpose (its wheels break the CPU torch stack used here).

Slices are exact: a segment ``[start, end)`` has ``round(end*sr) - round(start*sr)``
samples (clamped to the track), so evidence for ``0:01-0:03`` at 16 kHz is 32,000 samples.
"""

from __future__ import annotations

import io
import subprocess
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from media.cache import default_cache, file_digest, make_key
from media.errors import CorruptMedia, NoAudioStream
from media.lru import Lru
from media.probe import SAFE_INPUT_ARGS, _tool, probe
from media.singleflight import lock_for

SAMPLE_RATE = 16_000


@dataclass(frozen=True)
class AudioTrack:
    """A decoded mono track; ``samples`` is float32 in [-1, 1]."""

    path: str
    samples: np.ndarray
    sr: int
    stream: int

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sr

    def index(self, t: float) -> int:
        return int(min(max(round(t * self.sr), 0), len(self.samples)))

    def slice(self, start: float, end: float) -> np.ndarray:
        """Samples in ``[start, end)`` seconds, clamped to the track."""
        if end < start:
            raise ValueError(f"end {end} is before start {start}")
        return self.samples[self.index(start) : self.index(end)]

    def window(self, t: float, pad_s: float) -> tuple[float, float, np.ndarray]:
        """A padded window around instant ``t`` (an instant of sound is empty)."""
        a, b = max(0.0, t - pad_s), min(self.duration, t + pad_s)
        return a, b, self.slice(a, b)


def wav_bytes(samples: np.ndarray, sr: int = SAMPLE_RATE) -> bytes:
    """16-bit PCM WAV bytes for ``samples``."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


_TRACKS: Lru[tuple[str, int], AudioTrack] = Lru(8)


def _decode(path: str, stream: int, sr: int) -> np.ndarray:
    cmd = [_tool("ffmpeg"), "-v", "error", "-nostdin", *SAFE_INPUT_ARGS, "-i", "file:" + str(path), "-map", f"0:{stream}",
           "-ac", "1", "-ar", str(sr), "-f", "f32le", "-acodec", "pcm_f32le", "pipe:1"]
    proc = subprocess.run(cmd, capture_output=True)
    if proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().split("\n")
        raise CorruptMedia(path, f"audio decode failed ({msg[-1] if msg else 'ffmpeg error'})")
    return np.frombuffer(proc.stdout, dtype="<f4").astype(np.float32)


def load_audio(path: str | Path, sr: int = SAMPLE_RATE, use_disk_cache: bool = True) -> AudioTrack:
    """The file's audio as one mono track, decoded once per process (and cached on disk)."""
    info = probe(path)
    if not info.has_audio or info.audio_stream is None:
        raise NoAudioStream(str(path), "the file has no audio stream")
    with lock_for(("audio", info.path, sr)):  # single-flight per file
        return _load_audio(info, sr, use_disk_cache)


def _load_audio(info: Any, sr: int, use_disk_cache: bool) -> AudioTrack:
    key = (info.path, sr)
    known = _TRACKS.get(key)
    if known is not None:
        return known
    samples: np.ndarray | None = None
    cache = default_cache() if use_disk_cache else None
    if cache is not None:
        ckey = make_key("audio", file_digest(info.path), sr=sr, stream=info.audio_stream)
        hit = cache.lookup("audio", ckey, ".npy")
        if hit is not None:
            try:
                samples = np.load(hit)
            except (OSError, ValueError):
                samples = None
        if samples is None:
            samples = _decode(info.path, info.audio_stream, sr)
            data = samples

            def _write(p: Path) -> None:
                with open(p, "wb") as f:
                    np.save(f, data)

            cache.get_or_create("audio", ckey, ".npy", _write)
    else:
        samples = _decode(info.path, info.audio_stream, sr)
    return _TRACKS.put(key, AudioTrack(path=info.path, samples=samples, sr=sr, stream=info.audio_stream))


def clear_memory_cache() -> None:
    _TRACKS.clear()
