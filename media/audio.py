"""Audio: a file's chosen audio stream as mono 16 kHz float32, sliced by time.

Decoding goes through an ``ffmpeg`` pipe with an explicit ``-map`` of the stream that
:mod:`murgat.media.streams` chose, so the samples match the reported duration. torchaudio is
avoided on purpose (its wheels break the CPU torch stack used here).

Slices are exact: a segment ``[start, end)`` has ``round(end*sr) - round(start*sr)``
samples (clamped to the track), so evidence for ``0:01-0:03`` at 16 kHz is 32,000 samples.

Two ways to hold a track, chosen by its length (:func:`open_audio` is the one entry point):

* **short** (at most :data:`LONG_AUDIO_S`): the whole track decoded once per process and kept
  on disk (namespace ``audio``) — exactly as before, so evidence bytes and cache keys of short
  files are unchanged;
* **long**: :class:`ChunkedAudio`, fixed :data:`CHUNK_S`-second chunks decoded only when a span
  needs them and kept per chunk (namespace ``audio-chunk``; memory: at most
  :data:`MAX_CHUNKS_IN_MEMORY` chunks in this process, whatever the length or number of files).
  A chunk is decoded by ffmpeg *input seeking* to :data:`SEEK_MARGIN_S` before it and dropping
  the margin, so the decoder and resampler have settled when the chunk begins.

Seeking returns the same samples as the whole-track decode only where the file's timestamps
agree with its sample count and the codec seeks exactly in ffmpeg. That is checked once per file
(:func:`seek_method`): the codec must be one of :data:`SEEK_EXACT_CODECS`, and chunks 1 and 2
decoded by seeking must equal the same seconds of a decode from the file start within
:data:`SEEK_TOLERANCE_RMS` (the MPEG decoder conformance criterion, ISO/IEC 11172-4 §2.6.3 and
14496-4: RMS below 2⁻¹⁵/√12) and :data:`SEEK_TOLERANCE_MAX` per sample. Measured here: MP4/AAC, MP3, FLAC and WAV files seek exactly
(identical samples); Vorbis and Opus in WebM/Ogg, and AAC whose timestamps were copied from a
Vorbis source, land 20–24 ms off. A file that fails the check is decoded *sequentially* instead —
one ffmpeg pass over the track, written chunk by chunk (exact by construction, bounded memory,
paid once per file). The check is on the file's first 30 s: a long file whose audio timestamps jump
later on (a spliced recording) is read by its timestamps, i.e. in step with its pictures, where a
whole-track decode would count samples and drift.
"""

from __future__ import annotations

import io
import math
import os
import re
import struct
import subprocess
import threading
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import numpy as np

from murgat.media import safewrite
from murgat.media.cache import MediaCache, default_cache, file_digest, make_key
from murgat.media.errors import CorruptMedia, NoAudioStream
from murgat.media.lru import Lru
from murgat.media.singleflight import lock_for
from murgat.media.streams import SAFE_INPUT_ARGS, ProbeResult, _tool, probe

SAMPLE_RATE = 16_000
#: a track longer than this (seconds) is read in chunks; at or below it, whole (as always)
LONG_AUDIO_S = 600.0
#: chunk length (whole seconds, so chunk boundaries fall on exact sample indices at any rate)
CHUNK_S = 10
#: a chunk is decoded from this many seconds before it (decoder and resampler warm-up)
SEEK_MARGIN_S = 1
#: chunks kept decoded in memory in this process (all files together): 96 × 10 s × 64 kB/s ≈ 61 MB
MAX_CHUNKS_IN_MEMORY = 96
#: codecs whose ffmpeg input seeking is sample-exact when the file's timestamps are regular
#: (each file is still checked once, see :func:`seek_method`)
SEEK_EXACT_CODECS = frozenset({"aac", "mp3", "mp2", "mp1", "flac", "alac", "wavpack", "tta"})
#: how close (samples in [-1, 1]) a chunk decoded by seeking must be to the same seconds decoded
#: from the file start to count as the same samples. RMS: the MPEG decoder conformance criterion
#: for full accuracy (ISO/IEC 11172-4 §2.6.3, ISO/IEC 14496-4: below 2⁻¹⁵/√12). Single samples:
#: at most 2⁻¹¹ (16 steps of 16-bit PCM) — looser than the standard's 2⁻¹⁴ against a reference
#: decoder, because a decoder started at a seek point legitimately differs in isolated samples
#: (AAC's perceptual noise substitution draws its noise from a generator whose state depends on
#: where decoding began; measured on the benchmark's AAC file: max 8.1e-5, RMS 1.5e-6). A
#: misaligned seek differs by 10⁻² to 10⁻¹ RMS, four orders of magnitude above either bound.
SEEK_TOLERANCE_MAX = 2.0**-11
SEEK_TOLERANCE_RMS = 2.0**-15 / math.sqrt(12.0)


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


#: decoded tracks, open containers, chunks and seek methods held in this process are keyed by the
#: file's content identity (:func:`murgat.media.cache.file_digest`, memoised by stat identity), never by
#: its path: a file replaced under the same name is another file (a long-lived process — a notebook,
#: the inspect scorer, a Ray worker — would otherwise keep sending the old audio)
_TRACKS: Lru[tuple[str, int, int], AudioTrack] = Lru(8)


def _decode_cmd(path: str, stream: int, sr: int, seek: float | None = None, duration: float | None = None) -> list[str]:
    """The one ffmpeg command line for decoding: the whole track, or (``seek``) from an input seek."""
    ss = ["-ss", f"{seek:.6f}"] if seek else []
    t = ["-t", f"{duration:.6f}"] if duration is not None else []
    return [_tool("ffmpeg"), "-v", "error", "-nostdin", *SAFE_INPUT_ARGS, *ss, "-i", "file:" + str(path), "-map",
            f"0:{stream}", *t, "-ac", "1", "-ar", str(sr), "-f", "f32le", "-acodec", "pcm_f32le", "pipe:1"]


#: The header :func:`np.save` writes for a track (a 1-D little-endian float32 array), read without
#: ``np.load``: that parses the header with ``ast.literal_eval``, and CPython 3.11 counts the AST
#: constructor's recursion depth in interpreter-wide state, so two threads building ASTs at once can
#: raise ``SystemError: AST constructor recursion depth mismatch`` (seen on 3.11.7 when a faithfulness
#: run read cached tracks on its worker threads; cf. CPython gh-106905). Tracks are read on several
#: threads, so murgat's own cache files never go through the AST; any other ``.npy`` falls back to
#: ``np.load``, one thread at a time.
_TRACK_HEADER = re.compile(r"\{'descr': '<f4', 'fortran_order': False, 'shape': \((\d+),\), \} *\n")
_NPY_LOCK = threading.Lock()


def _read_npy(path: str | os.PathLike[str]) -> np.ndarray:
    with open(path, "rb") as f:
        head = f.read(10)
        if len(head) == 10 and head[:8] == b"\x93NUMPY\x01\x00":
            (size,) = struct.unpack("<H", head[8:])
            m = _TRACK_HEADER.fullmatch(f.read(size).decode("latin1"))
            if m:
                n = int(m.group(1))
                data = np.fromfile(f, dtype="<f4", count=n)
                if data.size == n:
                    return data
    with _NPY_LOCK:  # not a track murgat wrote, or cut short: np.load says why (ValueError / OSError)
        return cast(np.ndarray, np.load(path))


def _decode(path: str, stream: int, sr: int, seek: float | None = None, duration: float | None = None) -> np.ndarray:
    cmd = _decode_cmd(path, stream, sr, seek, duration)
    proc = subprocess.run(cmd, capture_output=True)
    if proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().split("\n")
        raise CorruptMedia(path, f"audio decode failed ({msg[-1] if msg else 'ffmpeg error'})")
    return np.frombuffer(proc.stdout, dtype="<f4").astype(np.float32)


def load_audio(path: str | os.PathLike[str], sr: int = SAMPLE_RATE, use_disk_cache: bool = True) -> AudioTrack:
    """The file's audio as one mono track, decoded once per process (and cached on disk)."""
    info = probe(path)
    if not info.has_audio or info.audio_stream is None:
        raise NoAudioStream(str(path), "the file has no audio stream")
    digest = file_digest(info.path)
    with lock_for(("audio", digest, sr)):  # single-flight per file content
        return _load_audio(info, sr, use_disk_cache, digest)


def _load_audio(info: Any, sr: int, use_disk_cache: bool, digest: str) -> AudioTrack:
    key = (digest, sr, int(info.audio_stream))
    known = _TRACKS.get(key)
    if known is not None:
        return known
    samples: np.ndarray | None = None
    cache = default_cache() if use_disk_cache else None
    if cache is not None:
        ckey = make_key("audio", digest, sr=sr, stream=info.audio_stream)
        hit = cache.lookup("audio", ckey, ".npy")
        if hit is not None:
            try:
                samples = _read_npy(hit)
            except (OSError, ValueError):
                samples = None
        if samples is None:
            samples = _decode(info.path, info.audio_stream, sr)
            data = samples

            def _write(p: Path) -> None:
                with safewrite.open_file(p, "w") as f:
                    np.save(f, data)

            cache.keep("audio", ckey, ".npy", _write)  # the samples are in hand: kept if the cache can take them
    else:
        samples = _decode(info.path, info.audio_stream, sr)
    return _TRACKS.put(key, AudioTrack(path=info.path, samples=samples, sr=sr, stream=info.audio_stream))


def clear_memory_cache() -> None:
    """Forget decoded tracks and chunks held in this process (the disk cache stays)."""
    _TRACKS.clear()
    _CHUNKS.clear()
    _METHODS.clear()


class AudioSource(Protocol):
    """What evidence needs from a track, whole or chunked: samples of ``[start, end)`` by time."""

    path: str
    sr: int
    stream: int

    @property
    def duration(self) -> float: ...

    def slice(self, start: float, end: float) -> np.ndarray: ...

    def window(self, t: float, pad_s: float) -> tuple[float, float, np.ndarray]: ...


def is_long(info: ProbeResult) -> bool:
    """Whether the file's audio is read in chunks (longer than :data:`LONG_AUDIO_S`)."""
    return float(info.audio_duration or 0.0) > LONG_AUDIO_S


def open_audio(path: str | os.PathLike[str], sr: int = SAMPLE_RATE) -> AudioTrack | ChunkedAudio:
    """The file's audio for slicing: the whole track for a short file (:func:`load_audio`, as
    before), a :class:`ChunkedAudio` for a long one (nothing decoded until a span is asked for)."""
    info = probe(path)
    if not info.has_audio or info.audio_stream is None:
        raise NoAudioStream(str(path), "the file has no audio stream")
    if not is_long(info):
        return load_audio(path, sr)
    return ChunkedAudio(info, sr)


_CHUNKS: Lru[tuple[str, int, int, int], np.ndarray] = Lru(MAX_CHUNKS_IN_MEMORY)
_METHODS: Lru[tuple[str, int, int, int], str] = Lru(256)

SeekMethod = Literal["seek", "stream"]


class ChunkedAudio:
    """A long file's track, decoded chunk by chunk when spans need it (see the module docstring).

    Memory does not grow with the file: a span holds only its own samples, and decoded chunks
    are shared through one bounded LRU. Slices follow :meth:`AudioTrack.slice` exactly
    (``round(t*sr)`` sample indices, clamped to the end of the track).
    """

    def __init__(self, info: ProbeResult, sr: int = SAMPLE_RATE, cache: MediaCache | None = None) -> None:
        if info.audio_stream is None:
            raise NoAudioStream(info.path, "the file has no audio stream")
        self.info = info
        self.path = info.path
        self.sr = sr
        self.stream = int(info.audio_stream)
        self.cache = cache or default_cache()
        self.chunk_samples = CHUNK_S * sr
        self.digest = file_digest(self.path)  # what the chunks in memory are keyed by (the content, not the path)
        self.chunks_decoded = 0  # this object's own count (tests and benchmarks read it)

    @property
    def duration(self) -> float:
        return float(self.info.audio_duration or 0.0)

    @property
    def method(self) -> SeekMethod:
        return seek_method(self.info, self.sr, self.cache)

    def index(self, t: float) -> int:
        return max(round(t * self.sr), 0)

    def slice(self, start: float, end: float) -> np.ndarray:
        """Samples in ``[start, end)`` seconds, clamped to the track."""
        if end < start:
            raise ValueError(f"end {end} is before start {start}")
        i0, i1 = self.index(start), self.index(end)
        if i1 <= i0:
            return np.zeros(0, dtype=np.float32)
        parts = []
        for k in range(i0 // self.chunk_samples, (i1 - 1) // self.chunk_samples + 1):
            chunk = self.chunk(k)
            base = k * self.chunk_samples
            parts.append(chunk[max(0, i0 - base): max(0, i1 - base)])
            if len(chunk) < self.chunk_samples:
                break  # the track ends in this chunk
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def window(self, t: float, pad_s: float) -> tuple[float, float, np.ndarray]:
        a, b = max(0.0, t - pad_s), min(self.duration, t + pad_s)
        return a, b, self.slice(a, b)

    def _key(self, k: int) -> str:
        return make_key("audio-chunk", self.digest, sr=self.sr, stream=self.stream, chunk_s=CHUNK_S,
                        margin_s=SEEK_MARGIN_S, index=k, v=1)

    def chunk(self, k: int) -> np.ndarray:
        """Chunk ``k`` (samples ``[k*CHUNK_S*sr, (k+1)*CHUNK_S*sr)``; shorter or empty at the end)."""
        mem_key = (self.digest, self.stream, self.sr, k)
        hit = _CHUNKS.get(mem_key)
        if hit is not None:
            return hit
        with lock_for(("audio-chunk", *mem_key)):
            hit = _CHUNKS.get(mem_key)
            if hit is not None:
                return hit
            arr = self._load(k)
            if arr is None:
                if self.method == "seek":
                    arr = self._decode_chunk(k)
                    self._store(k, arr)
                else:
                    stream_all_chunks(self)
                    arr = self._load(k)
                    if arr is None:  # past the end of the track
                        arr = np.zeros(0, dtype=np.float32)
            return _CHUNKS.put(mem_key, arr)

    def _load(self, k: int) -> np.ndarray | None:
        hit = self.cache.lookup("audio-chunk", self._key(k), ".npy")
        if hit is None:
            return None
        try:
            arr = _read_npy(hit)
        except (OSError, ValueError):
            return None
        return arr.astype(np.float32, copy=False)

    def _store(self, k: int, arr: np.ndarray) -> None:
        def write(p: Path) -> None:
            with safewrite.open_file(p, "w") as f:
                np.save(f, arr)

        self.cache.keep("audio-chunk", self._key(k), ".npy", write)

    def _decode_chunk(self, k: int) -> np.ndarray:
        """Chunk ``k`` by input seeking to :data:`SEEK_MARGIN_S` before it, the margin dropped."""
        self.chunks_decoded += 1
        n = self.chunk_samples
        if k == 0:
            return _decode(self.path, self.stream, self.sr, None, CHUNK_S)[:n].copy()
        x = _seek_decode(self.path, self.stream, self.sr, k * CHUNK_S - SEEK_MARGIN_S + _ffmpeg_offset(self.info),
                         CHUNK_S + SEEK_MARGIN_S)
        m = SEEK_MARGIN_S * self.sr
        return x[m: m + n].copy()


class _OpenAudio:
    """One file's audio stream held open in this process (PyAV) for decoding spans by seeking:
    ``ffmpeg -ss`` would parse the file's index again on every call (a tenth of a second on an
    hour-long MP4), an open container seeks in microseconds."""

    def __init__(self, path: str, stream: int) -> None:
        import av

        self.av = av
        self.lock = threading.Lock()
        try:
            self.container: Any = cast(Any, av.open(path, options={"protocol_whitelist": "file"}))
            self.stream: Any = cast(Any, self.container.streams[stream])
        except (av.FFmpegError, IndexError) as exc:
            raise CorruptMedia(path, f"audio cannot be opened ({str(exc)[:200]})") from exc
        self.path = path
        self.start_s = (self.container.start_time or 0) / 1_000_000  # ffmpeg's -ss counts from here

    def decode(self, seek: float, duration: float, sr: int) -> np.ndarray:
        """What ``ffmpeg -ss seek -i FILE -map 0:S -t duration -ac 1 -ar sr -f f32le`` writes: the
        source samples from ``seek`` (trimmed exactly, at the source rate, before resampling, as
        ffmpeg's accurate seek does), downmixed and resampled, the first ``duration*sr`` output
        samples (the resampler fed past the end, so the last ones are not a flushed tail)."""
        av = self.av
        want = round(duration * sr)
        with self.lock:
            target = self.start_s + seek
            tb = float(self.stream.time_base)
            try:
                self.container.seek(int(target / tb), stream=self.stream, backward=True, any_frame=False)
            except av.FFmpegError as exc:
                raise CorruptMedia(self.path, f"cannot seek to {seek:.2f} s ({exc})") from exc
            resampler = av.AudioResampler(format="flt", layout="mono", rate=sr)
            out: list[np.ndarray] = []
            got = 0
            ended = True
            try:
                for frame in self.container.decode(self.stream):
                    if frame.pts is None:
                        continue
                    rate = frame.sample_rate
                    first = round(float(frame.pts) * tb * rate)  # the frame's first sample, at its own rate
                    skip = round(target * rate) - first
                    if skip >= frame.samples:
                        continue
                    if skip > 0:
                        frame = _trimmed(av, frame, skip)
                    for o in resampler.resample(frame):
                        x = o.to_ndarray().reshape(-1)
                        out.append(x)
                        got += len(x)
                    if got >= want:
                        ended = False
                        break
            except av.FFmpegError as exc:
                raise CorruptMedia(self.path, f"audio decode failed ({exc})") from exc
            if ended:  # the stream ended within the span: flush, as ffmpeg does at the end of a file
                for o in resampler.resample(None):
                    out.append(o.to_ndarray().reshape(-1))
        x = np.concatenate(out) if out else np.zeros(0, dtype=np.float32)
        return x[:want].astype(np.float32, copy=False)


def _trimmed(av: Any, frame: Any, skip: int) -> Any:
    """``frame`` without its first ``skip`` samples (same format, layout, rate; pts moved on)."""
    arr = frame.to_ndarray()
    fmt = frame.format.name
    cut = arr[:, skip:] if frame.format.is_planar else arr[:, skip * len(frame.layout.channels):]
    new = av.AudioFrame.from_ndarray(np.ascontiguousarray(cut), format=fmt, layout=frame.layout.name)
    new.sample_rate = frame.sample_rate
    new.time_base = frame.time_base
    new.pts = None
    return new


_OPEN: Lru[tuple[str, str, int], _OpenAudio] = Lru(8)


def _seek_decode(path: str, stream: int, sr: int, seek: float, duration: float) -> np.ndarray:
    """``_decode(path, stream, sr, seek, duration)`` by an open container (see :class:`_OpenAudio`)."""
    key = (file_digest(path), path, stream)  # an open container reads the file it opened: keyed by content
    track = _OPEN.get(key) or _OPEN.put(key, _OpenAudio(path, stream))
    return track.decode(seek, duration, sr)


def _ffmpeg_offset(info: ProbeResult) -> float:
    """ffmpeg's ``-ss`` counts from the container's start time; the track's own time 0 is its
    stream's start. Their difference shifts every seek (0 for almost every file)."""
    a = info.stream(info.audio_stream).start_time if info.audio_stream is not None else None
    f = info.start_time
    return float(a - f) if a is not None and f is not None else 0.0


def seek_method(info: ProbeResult, sr: int = SAMPLE_RATE, cache: MediaCache | None = None) -> SeekMethod:
    """``"seek"`` when chunks of this file may be decoded by input seeking, else ``"stream"``
    (see the module docstring). Checked once per file and kept in the media cache."""
    assert info.audio_stream is not None
    mem = (file_digest(info.path), int(info.audio_stream), sr, CHUNK_S)
    known = _METHODS.get(mem)
    if known is not None:
        return known  # type: ignore[return-value]
    cache = cache or default_cache()
    key = make_key("audio-seek", file_digest(info.path), sr=sr, stream=info.audio_stream, chunk_s=CHUNK_S,
                   margin_s=SEEK_MARGIN_S, v=1)
    with lock_for(("audio-seek", key)):
        found = cache.get_json("audio-seek", key)
        method = found.get("method") if isinstance(found, dict) else None
        if method not in ("seek", "stream"):
            method, detail = _check_seeking(info, sr)
            cache.put_json("audio-seek", key, {"method": method, "detail": detail})
        _METHODS.put(mem, method)
        return method


def _check_seeking(info: ProbeResult, sr: int) -> tuple[SeekMethod, str]:
    """Decode the first two chunks from the file start, and by seeking chunk 1 and the second half
    of chunk 1 (a seek into the middle of a chunk); the file seeks exactly when they agree within
    the tolerance. The three decodes run at once (each is mostly ffmpeg starting and reading the
    file's index)."""
    from concurrent.futures import ThreadPoolExecutor

    assert info.audio_stream is not None
    codec = info.stream(info.audio_stream).codec or "?"
    if codec not in SEEK_EXACT_CODECS and not codec.startswith("pcm_"):
        return "stream", f"codec {codec} is not known to seek sample-exactly in ffmpeg"
    n = CHUNK_S * sr
    half = CHUNK_S // 2
    stream, off = int(info.audio_stream), _ffmpeg_offset(info)
    with ThreadPoolExecutor(3) as pool:
        ref_f = pool.submit(_decode, info.path, stream, sr, None, 2 * CHUNK_S)
        one_f = pool.submit(ChunkedAudio(info, sr)._decode_chunk, 1)
        mid_f = pool.submit(_seek_decode, info.path, stream, sr, CHUNK_S + half - SEEK_MARGIN_S + off,
                            half + SEEK_MARGIN_S)
        ref, one, mid = ref_f.result(), one_f.result(), mid_f.result()[SEEK_MARGIN_S * sr:]
    worst = 0.0
    for name, got, want in (("chunk 1", one, ref[n:2 * n]), ("the middle of chunk 1", mid, ref[n + half * sr:2 * n])):
        if len(got) != len(want):
            return "stream", f"{name} by seeking has {len(got)} samples, {len(want)} from the start"
        if not len(want):
            continue
        d = np.abs(got.astype(np.float64) - want)
        rms = float(np.sqrt(np.mean(d ** 2)))
        if float(d.max()) > SEEK_TOLERANCE_MAX or rms >= SEEK_TOLERANCE_RMS:
            return "stream", (f"{name} by seeking differs from the decode from the start (max {float(d.max()):.2e}, "
                              f"rms {rms:.2e}): the file's timestamps and sample count disagree")
        worst = max(worst, float(d.max()))
    return "seek", f"{codec}: seeked decodes within {worst:.1e} of the decode from the start"


def stream_all_chunks(track: ChunkedAudio, progress: Any = None) -> int:
    """Decode the whole track in one sequential ffmpeg pass, writing every chunk to the cache as
    it arrives (memory: one chunk). Used for files that do not seek exactly. Returns the number
    of chunks written (0 when another caller had already written them)."""
    with lock_for(("audio-stream", track.path, track.stream, track.sr)):
        if track._load(0) is not None and track._load(max(0, int(track.duration // CHUNK_S))) is not None:
            return 0
        cmd = _decode_cmd(track.path, track.stream, track.sr)
        nbytes = track.chunk_samples * 4
        k = 0
        last_full = True
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            while last_full:
                buf = _read_exactly(proc.stdout, nbytes)
                last_full = len(buf) == nbytes
                if not buf:
                    break
                track._store(k, np.frombuffer(buf[: len(buf) // 4 * 4], dtype="<f4").astype(np.float32))
                track.chunks_decoded += 1
                k += 1
                if progress is not None:
                    progress(min(k * CHUNK_S, track.duration), track.duration)
            err = proc.stderr.read()
            code = proc.wait()
        if code != 0:
            msg = err.decode(errors="replace").strip().split("\n")
            raise CorruptMedia(track.path, f"audio decode failed ({msg[-1] if msg else 'ffmpeg error'})")
        if last_full:  # the track ended on a chunk boundary: an empty chunk marks the end
            track._store(k, np.zeros(0, dtype=np.float32))
        return k


def _read_exactly(f: Any, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        b = f.read(n - len(out))
        if not b:
            break
        out += b
    return bytes(out)
