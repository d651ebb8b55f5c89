"""Frames of a long video by seeking: no index of the whole file, memory independent of length.

decord (:class:`murgat.media.frames.VideoFrames`) reads every packet of a file when it opens it, to
index all frames; on an hour-long file that is a full pass over gigabytes before the first
frame. :class:`SeekFrames` asks the demuxer to seek to the keyframe before each wanted instant
and decodes forward from there (PyAV, the libav* bindings), so the cost follows the frames
asked for, not the file.

Frame choice follows :class:`~murgat.media.frames.VideoFrames` with one difference: without an index
it does not know every frame's timestamp in advance, so a frame *number* ``i`` stands for the
nominal instant ``i / rate`` (the stream's average frame rate) and is decoded as the frame shown
then (within half a frame). On constant-rate video — nearly all long recordings — that is the
same frame decord picks (``tests/media/test_seekframes.py`` checks picks and pixels against
decord); on variable-rate video the pick can differ by a frame. Every :class:`Frame` carries the
decoded frame's true timestamp. Times are counted from the stream's first timestamp, as decord
counts them.

Decoding is single-threaded per file (a lock per reader); the decoded-frame cache is bounded
(:data:`MAX_CACHE_BYTES`).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np

from murgat.media.errors import CorruptMedia
from murgat.media.frame import Frame, start_reader

#: decoded frames kept per long file (bytes)
MAX_CACHE_BYTES = 32 * 1024**2
#: a wanted frame less than this far (s) after the last decoded one is reached by decoding
#: forward, farther ones by a new seek
FORWARD_S = 2.0


class SeekFrames:
    """Frame access for one long file by seeking (same methods as :class:`~murgat.media.frames.VideoFrames`)."""

    def __init__(self, path: str | Path) -> None:
        info, av = start_reader(path, "av", "PyAV is not installed (pip install av)")
        assert info.video_stream is not None  # start_reader refuses a file without one
        self.info = info
        self.path = info.path
        self._av = av
        try:
            self._container: Any = cast(Any, av.open(self.path, options={"protocol_whitelist": "file"}))
            self._stream: Any = cast(Any, self._container.streams[int(info.video_stream)])
        except (av.FFmpegError, IndexError) as exc:
            raise CorruptMedia(self.path, f"video cannot be decoded ({str(exc)[:200]})") from exc
        self._stream.thread_type = "SLICE"
        self._stream.codec_context.thread_count = 1
        self._tb = float(self._stream.time_base)
        self._pts0 = int(self._stream.start_time or 0)
        rate = self._stream.average_rate or self._stream.guessed_rate
        self.rate = float(rate) if rate else float(info.fps or 25.0)
        if not self.rate > 0:
            raise CorruptMedia(self.path, "the video stream has no frame rate")
        n = int(self._stream.frames or 0)
        self.n_frames = n if n > 0 else max(1, math.floor(float(info.video_duration or 0.0) * self.rate + 1e-6))
        self._lock = threading.RLock()
        self._frames: OrderedDict[int, tuple[float, np.ndarray]] = OrderedDict()
        self._bytes = 0
        self.max_cache_bytes = MAX_CACHE_BYTES
        self._it: Iterator[Any] | None = None
        self._prev: Any = None
        self._ahead: Any = None
        self.seeks = 0
        self.decoded = 0
        w, h = self._stream.codec_context.width, self._stream.codec_context.height
        self.stream_note = None if (w, h) == (info.width, info.height) else (
            f"decoder read a {w}x{h} stream; probe chose stream {info.video_stream} ({info.width}x{info.height})")

    @property
    def duration(self) -> float:
        return float(self.info.video_duration or self.n_frames / self.rate)

    # ----- which frames -----
    def index_at(self, t: float) -> int:
        """The frame shown at ``t`` (nominal: the last frame number whose instant is ``<= t``)."""
        return min(max(math.floor((t + 1e-6) * self.rate), 0), self.n_frames - 1)

    def range_indices(self, start: float, end: float, fps: float = 1.0, max_frames: int = 8) -> list[int]:
        """Frame numbers inside ``[start, end]`` at about ``fps``, at most ``max_frames``, evenly
        spread (the rule of :meth:`murgat.media.frames.VideoFrames.range_indices`)."""
        lo = max(0, math.ceil((start - 1e-6) * self.rate))
        hi = min(self.n_frames - 1, math.floor((end + 1e-6) * self.rate))
        if lo > hi:
            return [self.index_at(start)]
        want = max(1, min(max_frames, int(np.floor((end - start) * fps)) + 1))
        return sorted(set(np.linspace(lo, hi, want).round().astype(int).tolist()))

    # ----- decoding -----
    def _time(self, frame: Any) -> float:
        return (int(frame.pts) - self._pts0) * self._tb

    def _seek(self, t: float) -> None:
        self.seeks += 1
        target = self._pts0 + int(max(0.0, t) / self._tb)
        try:
            self._container.seek(target, stream=self._stream, backward=True, any_frame=False)
        except self._av.FFmpegError as exc:
            raise CorruptMedia(self.path, f"cannot seek to {t:.2f} s ({exc})") from exc
        self._it = self._container.decode(self._stream)
        self._prev = self._ahead = None

    def _next(self) -> Any:
        assert self._it is not None
        while True:
            try:
                fr = next(self._it)
            except StopIteration:
                return None
            except self._av.FFmpegError as exc:
                raise CorruptMedia(self.path, f"frames cannot be decoded ({exc})") from exc
            self.decoded += 1
            if fr.pts is not None:
                return fr

    def _shown_at(self, t: float, tol: float) -> Any:
        """The last frame whose time is ``<= t + tol`` (the first frame when ``t`` precedes it)."""
        prev_t = self._time(self._prev) if self._prev is not None else None
        if self._it is None or prev_t is None or t + tol < prev_t or t - prev_t > FORWARD_S:
            self._seek(t)
        if self._ahead is not None:
            if self._time(self._ahead) > t + tol:
                return self._prev if self._prev is not None else self._ahead
            self._prev, self._ahead = self._ahead, None
        while True:
            fr = self._next()
            if fr is None:
                return self._prev
            if self._time(fr) > t + tol:
                self._ahead = fr
                return self._prev if self._prev is not None else fr
            self._prev = fr

    def prefetch(self, indices: list[int]) -> None:
        """Decode the frames not yet in memory, in frame order (forward where they are close)."""
        with self._lock:
            missing = sorted({i for i in indices if i not in self._frames})
            for i in missing:
                fr = self._shown_at(i / self.rate, 0.5 / self.rate)
                if fr is None:
                    raise CorruptMedia(self.path, f"frame {i} ({i / self.rate:.2f} s) cannot be decoded")
                img = fr.to_ndarray(format="rgb24")
                self._frames[i] = (self._time(fr), img)
                self._bytes += img.nbytes
            keep = set(indices)
            for i in [i for i in self._frames if i not in keep]:  # oldest first; never what was asked for
                if self._bytes <= self.max_cache_bytes:
                    break
                self._bytes -= self._frames.pop(i)[1].nbytes

    def _get(self, indices: list[int]) -> list[tuple[float, np.ndarray]]:
        with self._lock:
            self.prefetch(indices)
            out = []
            for i in indices:
                if i not in self._frames:  # evicted by a concurrent prefetch
                    self.prefetch([i])
                self._frames.move_to_end(i)
                out.append(self._frames[i])
            return out

    def frames_at(self, times: list[float]) -> list[Any]:
        idx = [self.index_at(t) for t in times]
        return [Frame(i, t, img) for i, (t, img) in zip(idx, self._get(idx), strict=True)]

    def frames_in(self, start: float, end: float, fps: float = 1.0, max_frames: int = 8) -> list[Any]:
        """Frames inside ``[start, end]`` at about ``fps``, at most ``max_frames``, evenly spread."""
        if end < start:
            raise ValueError(f"end {end} is before start {start}")
        picks = self.range_indices(start, end, fps, max_frames)
        return [Frame(i, t, img) for i, (t, img) in zip(picks, self._get(picks), strict=True)]

    def close(self) -> None:
        with self._lock:
            self._it = None
            self._container.close()
