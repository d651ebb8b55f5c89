"""Frames: read pictures at given times or across a range, with their true timestamps.

decord opens each video once per process (an LRU of readers) and serves any number of
slices; its stream choice is the same as :mod:`murgat.media.streams`'s (checked on open). The
frame shown for instant ``t`` is the last frame whose presentation time is ``<= t`` —
what a player displays at ``t``.

A video longer than :data:`LONG_VIDEO_S` is read by seeking instead
(:class:`murgat.media.seekframes.SeekFrames`): decord indexes every frame of a file when it opens it,
which on an hour-long file is a pass over all of it before the first picture.
:func:`open_video` picks the reader; short files are read exactly as before.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from murgat.media.errors import CorruptMedia
from murgat.media.frame import Frame, start_reader
from murgat.media.lru import Lru
from murgat.media.streams import probe

if TYPE_CHECKING:
    from murgat.media.seekframes import SeekFrames


class VideoFrames:
    """Frame access for one file."""

    def __init__(self, path: str | Path) -> None:
        info, decord = start_reader(path, "decord", "decord is not installed (pip install decord, or decord2 on aarch64)")
        self.info = info
        self.path = info.path
        try:
            self._vr = decord.VideoReader(self.path, ctx=decord.cpu(0), num_threads=1)
        except Exception as exc:  # decord raises its own DECORDError
            first = str(exc).split("\n")[0][:200]
            raise CorruptMedia(self.path, f"video cannot be decoded ({first})") from exc
        self._lock = threading.RLock()
        self._frames: OrderedDict[int, np.ndarray] = OrderedDict()
        self._bytes = 0
        self.max_cache_bytes = 256 * 1024**2
        n = len(self._vr)
        if n == 0:
            raise CorruptMedia(self.path, "video stream has no frames")
        ts = self._vr.get_frame_timestamp(np.arange(n))
        self.starts = np.asarray(ts[:, 0], dtype=float)
        self.n_frames = n
        h, w = self._vr[0].shape[:2]
        # decord picks its own stream; say so if it is not the one probe() reported.
        self.stream_note = None if (w, h) == (info.width, info.height) else (
            f"decoder read a {w}x{h} stream; probe chose stream {info.video_stream} ({info.width}x{info.height})"
        )

    @property
    def duration(self) -> float:
        return float(self.info.video_duration or (self.starts[-1] if len(self.starts) else 0.0))

    def index_at(self, t: float) -> int:
        i = int(np.searchsorted(self.starts, t + 1e-6, side="right")) - 1
        return min(max(i, 0), self.n_frames - 1)

    def prefetch(self, indices: list[int]) -> None:
        """Decode the frames not yet in memory in one sorted batch (sequential decoding is
        far cheaper than one seek per citation)."""
        with self._lock:
            missing = sorted({i for i in indices if i not in self._frames})
            if not missing:
                return
            try:
                arr = self._vr.get_batch(missing).asnumpy()
            except Exception as exc:
                raise CorruptMedia(self.path, f"frames {missing[:3]}… cannot be decoded ({exc})") from exc
            for k, i in enumerate(missing):
                self._frames[i] = arr[k]
                self._bytes += arr[k].nbytes
            while self._bytes > self.max_cache_bytes and len(self._frames) > len(missing):
                _, old = self._frames.popitem(last=False)
                self._bytes -= old.nbytes

    def _get(self, indices: list[int]) -> np.ndarray:
        self.prefetch(indices)
        with self._lock:
            out = []
            for i in indices:
                if i not in self._frames:  # evicted by a concurrent prefetch; decode alone
                    self._frames[i] = self._vr.get_batch([i]).asnumpy()[0]
                    self._bytes += self._frames[i].nbytes
                self._frames.move_to_end(i)
                out.append(self._frames[i])
            return np.stack(out)

    def range_indices(self, start: float, end: float, fps: float = 1.0, max_frames: int = 8) -> list[int]:
        """Indices :meth:`frames_in` would return (for batching across citations)."""
        lo = int(np.searchsorted(self.starts, start - 1e-6, side="left"))
        hi = int(np.searchsorted(self.starts, end + 1e-6, side="right")) - 1
        if lo > hi:
            return [self.index_at(start)]
        want = max(1, min(max_frames, int(np.floor((end - start) * fps)) + 1))
        return sorted(set(np.linspace(lo, hi, want).round().astype(int).tolist()))

    def frames_at(self, times: list[float]) -> list[Frame]:
        idx = [self.index_at(t) for t in times]
        if not idx:
            return []
        arr = self._get(idx)
        return [Frame(i, float(self.starts[i]), arr[k]) for k, i in enumerate(idx)]

    def frames_in(self, start: float, end: float, fps: float = 1.0, max_frames: int = 8) -> list[Frame]:
        """Frames inside ``[start, end]`` at about ``fps``, at most ``max_frames``, evenly spread.

        Every returned frame's timestamp lies inside the range (the first frame at or after
        ``start`` is used when ``start`` falls between frames).
        """
        if end < start:
            raise ValueError(f"end {end} is before start {start}")
        picks = self.range_indices(start, end, fps, max_frames)
        arr = self._get(picks)
        return [Frame(i, float(self.starts[i]), arr[k]) for k, i in enumerate(picks)]


def resize_max_side(image: np.ndarray, max_side: int | None) -> np.ndarray:
    """Downscale so the longer side is at most ``max_side`` (never upscale)."""
    if not max_side:
        return image
    h, w = image.shape[:2]
    scale = max_side / max(h, w)
    if scale >= 1:
        return image
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return np.asarray(Image.fromarray(image).resize(size, Image.Resampling.BILINEAR))


#: a normalised ``(x1, y1, x2, y2)`` region, top-left origin (``murgat.core.boxes.Box.coords()``)
Region = tuple[float, float, float, float]


def _pixels(region: Region, w: int, h: int) -> tuple[int, int, int, int]:
    x1, y1, x2, y2 = region
    px1 = min(w - 1, max(0, int(np.floor(x1 * w))))
    py1 = min(h - 1, max(0, int(np.floor(y1 * h))))
    return px1, py1, max(px1 + 1, min(w, int(np.ceil(x2 * w)))), max(py1 + 1, min(h, int(np.ceil(y2 * h))))


def crop_region(image: np.ndarray, region: Region, margin: float = 0.15, side: int = 512) -> np.ndarray:
    """The region of ``image`` widened by ``margin`` (a fraction of the region's own width and
    height, on each side, clamped to the frame) and scaled so its longer side is ``side``.

    A judge reads small regions badly at frame scale: the crop is enlarged (bicubic) so the
    boxed object fills a readable image; the margin keeps a little context around it.
    """
    h, w = image.shape[:2]
    x1, y1, x2, y2 = region
    mx, my = (x2 - x1) * margin, (y2 - y1) * margin
    a, b, c, d = _pixels((max(0.0, x1 - mx), max(0.0, y1 - my), min(1.0, x2 + mx), min(1.0, y2 + my)), w, h)
    crop = image[b:d, a:c]
    ch, cw = crop.shape[:2]
    scale = side / max(ch, cw)
    size = (max(1, round(cw * scale)), max(1, round(ch * scale)))
    if size == (cw, ch):
        return np.ascontiguousarray(crop)
    return np.asarray(Image.fromarray(np.ascontiguousarray(crop)).resize(size, Image.Resampling.BICUBIC))


def draw_regions(image: np.ndarray, regions: list[Region], color: tuple[int, int, int] = (255, 0, 0)) -> np.ndarray:
    """A copy of ``image`` with each region outlined (line about 1/150 of the longer side)."""
    from PIL import ImageDraw

    h, w = image.shape[:2]
    pic = Image.fromarray(np.ascontiguousarray(image)).convert("RGB")
    pen = ImageDraw.Draw(pic)
    width = max(2, round(max(h, w) / 150))
    for region in regions:
        x1, y1, x2, y2 = _pixels(region, w, h)
        pen.rectangle((x1, y1, x2 - 1, y2 - 1), outline=color, width=width)
    return np.asarray(pic)


def encode_image(image: np.ndarray, fmt: str = "jpeg", quality: int = 90) -> bytes:
    """JPEG or PNG bytes of an RGB array."""
    buf = io.BytesIO()
    fmt = fmt.lower()
    if fmt in ("jpg", "jpeg"):
        Image.fromarray(image).save(buf, format="JPEG", quality=quality)
    elif fmt == "png":
        Image.fromarray(image).save(buf, format="PNG")
    else:
        raise ValueError(f"unsupported image format {fmt!r} (jpeg or png)")
    return buf.getvalue()


#: a video stream longer than this (seconds) is read by seeking (:mod:`murgat.media.seekframes`)
LONG_VIDEO_S = 600.0

#: readers kept open, keyed by the file's content identity and path (a reader reads the file it
#: opened: a file replaced under the same name needs a new one)
_READERS: Lru[tuple[str, str], VideoFrames | SeekFrames] = Lru(4)


def open_video(path: str | Path) -> VideoFrames | SeekFrames:
    """A shared reader for ``path`` (kept open across citations: decode once, slice many):
    decord for a short file, :class:`~murgat.media.seekframes.SeekFrames` for a long one."""
    from murgat.media.cache import file_digest

    real = str(Path(path).resolve())
    key = (file_digest(real), real)
    found = _READERS.get(key)
    if found is not None:
        return found
    info = probe(path)
    if info.has_video and float(info.video_duration or 0.0) > LONG_VIDEO_S:
        from murgat.media.seekframes import SeekFrames

        return _READERS.put(key, SeekFrames(path))
    return _READERS.put(key, VideoFrames(path))


def clear_readers() -> None:
    _READERS.clear()
