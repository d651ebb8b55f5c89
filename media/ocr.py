"""On-screen text: PP-OCR (rapidocr, weights inside the wheel) on sampled frames.

Frames are sampled at ``fps`` across the whole video; each recognised line keeps the time
of its frame, its box and its confidence. :meth:`ScreenText.text_in` answers "what text
was visible in [a, b]". Results are cached per file digest and sampling settings.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from media.cache import MediaCache, default_cache, file_digest, make_key
from media.errors import ToolMissing
from media.frames import open_video, resize_max_side


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
            try:
                from rapidocr import RapidOCR
            except ImportError as exc:
                raise ToolMissing("rapidocr", "pip install 'murgat[ocr]'") from exc
            _ENGINE = RapidOCR(params={"Global.log_level": "error"})
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
) -> ScreenText:
    """OCR the video's frames sampled at ``fps`` (cached)."""
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
    cache.put_json("ocr", key, out.model_dump())
    return out
