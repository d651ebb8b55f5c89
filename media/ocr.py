"""On-screen text: PP-OCR (rapidocr, weights inside the wheel) on sampled frames.

Frames are sampled at ``fps`` across the whole video; each recognised line keeps the time
of its frame, its box and its confidence. :meth:`ScreenText.text_in` answers "what text
was visible in [a, b]". Results are cached per file digest and sampling settings.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from murgat.media.cache import MediaCache, default_cache, file_digest, make_key
from murgat.media.errors import ToolMissing
from murgat.media.frames import open_video, resize_max_side
from murgat.media.interrupt import run_aside


class OcrLine(BaseModel):
    time: float
    text: str
    score: float
    box: list[list[float]]


class ScreenText(BaseModel):
    """Recognised text lines of one video, with the frame times they were seen at."""

    fps: float
    times: list[float] = Field(default_factory=list, description="times of the frames that were read")
    lines: list[OcrLine] = Field(default_factory=list)

    def lines_in(self, start: float, end: float) -> list[OcrLine]:
        return [ln for ln in self.lines if start - 1e-6 <= ln.time <= end + 1e-6]

    def text_in(self, start: float, end: float) -> str:
        """Distinct lines seen inside the range, in order of first appearance."""
        seen: list[str] = []
        for ln in self.lines_in(start, end):
            if ln.text not in seen:
                seen.append(ln.text)
        return "\n".join(seen)


_ENGINE: Any = None
_ENGINE_LOCK = threading.Lock()


def _engine() -> Any:
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            from murgat.media.stages import stage

            stage("loading the text recognition (OCR) model", once="ocr-model")
            try:
                from rapidocr import RapidOCR
            except ImportError as exc:
                raise ToolMissing("rapidocr", "pip install 'murgat[ocr]'") from exc
            # its ONNX sessions are built in C (seconds): aside, so a Ctrl-C is not held up
            _ENGINE = run_aside(lambda: RapidOCR(params={"Global.log_level": "error"}), name="murgat-ocr-load")
        return _ENGINE


def read_text(image: np.ndarray, min_score: float = 0.5) -> list[tuple[str, float, list[list[float]]]]:
    """OCR of one RGB frame: ``(text, score, box)`` per line."""
    res = _engine()(image)
    if res is None or res.txts is None:
        return []
    boxes = res.boxes.tolist() if res.boxes is not None else [[]] * len(res.txts)
    return [(t, float(s), b) for t, s, b in zip(res.txts, res.scores, boxes, strict=False) if float(s) >= min_score]


def screen_text(
    path: str | Path,
    fps: float = 1.0,
    max_side: int = 1280,
    min_score: float = 0.5,
    cache: MediaCache | None = None,
    progress: Callable[[float, float], None] | None = None,
) -> ScreenText:
    """OCR the video's frames sampled at ``fps`` (cached). Frames are read 16 at a time (memory:
    16 frames, whatever the length); ``progress(seconds_done, seconds_total)`` after each batch.
    For a few cited windows of a long video use :class:`LazyScreen`, which reads only those."""
    vf = open_video(path)
    cache = cache or default_cache()
    key = make_key("ocr", file_digest(vf.path), fps=fps, max_side=max_side, min_score=min_score, engine="rapidocr")
    hit = cache.get_json("ocr", key)
    if hit is not None:
        return ScreenText.model_validate(hit)
    step = 1.0 / fps
    times = list(np.arange(0.0, max(vf.duration, 1e-3), step))
    out = ScreenText(fps=fps)
    for chunk in range(0, len(times), 16):
        for fr in vf.frames_at(times[chunk : chunk + 16]):
            img = resize_max_side(fr.image, max_side)
            out.times.append(fr.time)
            for text, score, box in read_text(img, min_score):
                out.lines.append(OcrLine(time=fr.time, text=text, score=score, box=box))
        if progress is not None:
            progress(min(vf.duration, float(times[min(chunk + 15, len(times) - 1)])), vf.duration)
    cache.put_json("ocr", key, out.model_dump())
    return out


class LazyScreen:
    """On-screen text read only where it is asked for: the frames inside the cited visual
    segments, on the same 1/``fps`` grid as :func:`screen_text`, each frame OCR'd once and
    cached on disk (key: file digest, frame time, settings). Scoring a few citations on a
    long video no longer reads every frame of it."""

    def __init__(self, path: str | Path, fps: float = 1.0, max_side: int = 1280, min_score: float = 0.5,
                 cache: MediaCache | None = None) -> None:
        self.path = str(path)
        self.fps = fps
        self.max_side = max_side
        self.min_score = min_score
        self.cache = cache or default_cache()
        self.digest = file_digest(self.path)
        self.identity = make_key("ocr-lazy", self.digest, fps=fps, max_side=max_side, min_score=min_score, engine="rapidocr")
        self._memo: dict[float, list[OcrLine]] = {}
        self._lock = threading.Lock()
        self.frames_read = 0

    def frame_times(self, start: float, end: float) -> list[float]:
        k0, k1 = int(np.ceil(start * self.fps - 1e-9)), int(np.floor(end * self.fps + 1e-9))
        times = [k / self.fps for k in range(k0, k1 + 1)]
        return times or [round(start * self.fps) / self.fps]

    def lines_at(self, times: list[float]) -> list[OcrLine]:
        with self._lock:
            missing = []
            for t in times:
                if t in self._memo:
                    continue
                hit = self.cache.get_json("ocrf", make_key("ocrf", self.identity, t=round(t, 4)))
                if hit is not None:
                    self._memo[t] = [OcrLine.model_validate(x) for x in hit]
                else:
                    missing.append(t)
            if missing:
                vf = open_video(self.path)
                wanted = [t for t in missing if t < max(vf.duration, 1e-3)]
                for t in set(missing) - set(wanted):
                    self._memo[t] = []
                for fr, t in zip(vf.frames_at(wanted), wanted, strict=True) if wanted else []:
                    img = resize_max_side(fr.image, self.max_side)
                    found = [OcrLine(time=t, text=text, score=score, box=box)
                             for text, score, box in read_text(img, self.min_score)]
                    self.frames_read += 1
                    self._memo[t] = found
                    self.cache.put_json("ocrf", make_key("ocrf", self.identity, t=round(t, 4)),
                                        [x.model_dump() for x in found])
            return [ln for t in times for ln in self._memo.get(t, [])]

    def text_in(self, start: float, end: float) -> str:
        seen: list[str] = []
        for ln in self.lines_at(self.frame_times(start, end)):
            if ln.text not in seen:
                seen.append(ln.text)
        return "\n".join(seen)


_LAZY: dict[tuple[str, str, float, int, float], LazyScreen] = {}
_LAZY_LOCK = threading.Lock()


def lazy_screen(path: str | Path, fps: float = 1.0, max_side: int = 1280, min_score: float = 0.5) -> LazyScreen:
    """One :class:`LazyScreen` per file and settings in this process (items share frames read)."""
    real = str(Path(path).resolve())
    key = (file_digest(real), real, fps, max_side, min_score)  # the file's content, not its name alone
    with _LAZY_LOCK:
        if key not in _LAZY:
            if len(_LAZY) > 256:
                _LAZY.clear()
            _LAZY[key] = LazyScreen(path, fps, max_side, min_score)
        return _LAZY[key]
