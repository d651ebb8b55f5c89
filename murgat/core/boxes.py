"""Regions of a frame: the :class:`Box` a citation (or a gold evidence item) points at.

A box is stored one way only — normalised to the frame, ``0 <= x1 < x2 <= 1`` and
``0 <= y1 < y2 <= 1``, origin at the top-left — whatever convention it was written in, so
that two boxes compare (IoU) without knowing who wrote them. The text as written is kept in
``raw`` because conversions lose it (``box1000=100,200,550,800`` and ``box 0.1,0.2,0.55,0.8``
are the same region).

Models write boxes in three unit systems and two orders:

* ``norm``: 0-1 fractions of the frame (murgat's canonical form);
* ``1000``: 0-1000 integers (Qwen2-VL / Qwen3-VL, GLM-V, CiteVQA pages);
* ``px``: pixels of a frame whose size must be known (the native frame, or the resized
  frame the model was shown);
* order ``xyxy`` (everyone's default) or ``yxyx`` (Gemini's ``box_2d``).

:func:`make_box` turns written numbers into a :class:`Box` or raises :class:`BoxError` with
a reason a person can act on; the citation grammar turns that reason into an invalid
citation. Everything here is pure arithmetic (no media, no I/O).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

BoxUnits = Literal["norm", "1000", "px"]
BoxOrder = Literal["xyxy", "yxyx"]

#: keyword written in a citation → the units it fixes (``box`` takes the run's ``--box-units``)
KEYWORD_UNITS: dict[str, BoxUnits | None] = {"box": None, "box1000": "1000", "boxpx": "px"}


class BoxError(ValueError):
    """Written numbers that do not make a box; ``reason`` says why, in words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Box(BaseModel):
    """A rectangle in normalised frame coordinates (0-1, top-left origin), with its text.

    The invariants (inside the frame, positive width and height) hold for every instance,
    so consumers never re-check them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    x1: float = Field(ge=0.0, le=1.0, description="left edge, fraction of the frame width")
    y1: float = Field(ge=0.0, le=1.0, description="top edge, fraction of the frame height")
    x2: float = Field(ge=0.0, le=1.0, description="right edge (> x1)")
    y2: float = Field(ge=0.0, le=1.0, description="bottom edge (> y1)")
    raw: str = Field(default="", description="the box as written, e.g. 'box1000=100,200,550,800'")

    @model_validator(mode="after")
    def _ordered(self) -> Box:
        if not self.x2 > self.x1:
            raise ValueError(f"x2 ({self.x2}) must be greater than x1 ({self.x1})")
        if not self.y2 > self.y1:
            raise ValueError(f"y2 ({self.y2}) must be greater than y1 ({self.y1})")
        return self

    def coords(self) -> tuple[float, float, float, float]:
        return (self.x1, self.y1, self.x2, self.y2)

    def to_pixels(self, width: int, height: int) -> tuple[int, int, int, int]:
        """Integer pixel edges on a ``width`` × ``height`` frame (at least one pixel wide/high)."""
        x1 = min(width - 1, max(0, math.floor(self.x1 * width)))
        y1 = min(height - 1, max(0, math.floor(self.y1 * height)))
        x2 = max(x1 + 1, min(width, math.ceil(self.x2 * width)))
        y2 = max(y1 + 1, min(height, math.ceil(self.y2 * height)))
        return x1, y1, x2, y2

    def label(self) -> str:
        """Canonical text, e.g. ``box 0.100,0.200,0.550,0.800`` (what a judge is told)."""
        return "box " + ",".join(f"{v:.3f}" for v in self.coords())


def box_area(b: Box) -> float:
    """Area as a fraction of the frame."""
    return (b.x2 - b.x1) * (b.y2 - b.y1)


def box_intersection(a: Box, b: Box) -> float:
    """Area of the overlap of ``a`` and ``b`` (0 when they do not overlap)."""
    w = min(a.x2, b.x2) - max(a.x1, b.x1)
    h = min(a.y2, b.y2) - max(a.y1, b.y1)
    return w * h if w > 0 and h > 0 else 0.0


def box_iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes, in [0, 1]."""
    inter = box_intersection(a, b)
    union = box_area(a) + box_area(b) - inter
    return inter / union if union > 0 else 0.0


def yxyx_to_xyxy(values: Sequence[float]) -> tuple[float, float, float, float]:
    """``(y1, x1, y2, x2)`` → ``(x1, y1, x2, y2)`` (Gemini writes y first)."""
    if len(values) != 4:
        raise BoxError(f"a box needs four numbers, got {len(values)}")
    y1, x1, y2, x2 = values
    return x1, y1, x2, y2


def _checked(x1: float, y1: float, x2: float, y2: float, raw: str) -> Box:
    if x2 <= x1:
        raise BoxError(f"x2 ({x2:g}) is not greater than x1 ({x1:g})")
    if y2 <= y1:
        raise BoxError(f"y2 ({y2:g}) is not greater than y1 ({y1:g})")
    return Box(x1=x1, y1=y1, x2=x2, y2=y2, raw=raw)


def box_from_norm(x1: float, y1: float, x2: float, y2: float, raw: str = "") -> Box:
    """A box from 0-1 fractions (xyxy)."""
    vals = (x1, y1, x2, y2)
    if any(v < 0 for v in vals):
        raise BoxError("a box coordinate is negative")
    if any(v > 1 for v in vals):
        if all(v <= 1000 for v in vals):
            raise BoxError("values above 1 in a 0-1 box; they look like 0-1000: write box1000")
        raise BoxError("values above 1 in a 0-1 box")
    return _checked(x1, y1, x2, y2, raw)


def box_from_1000(x1: float, y1: float, x2: float, y2: float, raw: str = "") -> Box:
    """A box from 0-1000 coordinates (xyxy), as Qwen-VL, GLM-V and CiteVQA write them."""
    vals = (x1, y1, x2, y2)
    if any(v < 0 for v in vals):
        raise BoxError("a box coordinate is negative")
    if any(v > 1000 for v in vals):
        raise BoxError("a box1000 value is above 1000")
    if x2 <= x1 or y2 <= y1:
        _checked(x1, y1, x2, y2, raw)  # raises, naming the numbers as they were written
    return _checked(x1 / 1000, y1 / 1000, x2 / 1000, y2 / 1000, raw)


def box_from_px(x1: float, y1: float, x2: float, y2: float, width: int, height: int, raw: str = "") -> Box:
    """A box from pixels of a ``width`` × ``height`` frame (xyxy)."""
    if width <= 0 or height <= 0:
        raise BoxError(f"frame size {width}x{height} is not positive")
    if any(v < 0 for v in (x1, y1, x2, y2)):
        raise BoxError("a box coordinate is negative")
    if x1 > width or x2 > width or y1 > height or y2 > height:
        raise BoxError(f"pixels past the {width}x{height} frame")
    if x2 <= x1 or y2 <= y1:
        _checked(x1, y1, x2, y2, raw)  # raises, naming the numbers as they were written
    return _checked(x1 / width, y1 / height, x2 / width, y2 / height, raw)


def make_box(
    values: Sequence[float], units: BoxUnits = "norm", order: BoxOrder = "xyxy", frame_size: tuple[int, int] | None = None, raw: str = ""
) -> Box:
    """A :class:`Box` from four written numbers, or :class:`BoxError` saying what is wrong.

    ``frame_size`` is ``(width, height)`` and is needed only for ``px``.
    """
    if len(values) != 4:
        raise BoxError(f"a box needs four numbers (x1,y1,x2,y2), got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise BoxError("a box coordinate is not a finite number")
    x1, y1, x2, y2 = yxyx_to_xyxy(values) if order == "yxyx" else tuple(values)
    if units == "norm":
        return box_from_norm(x1, y1, x2, y2, raw)
    if units == "1000":
        return box_from_1000(x1, y1, x2, y2, raw)
    if frame_size is None:
        raise BoxError("a pixel box needs the frame size (score against the media, or give --box-frame-size WxH)")
    return box_from_px(x1, y1, x2, y2, frame_size[0], frame_size[1], raw)


_FRAME_RE = re.compile(r"^\s*([0-9]{1,6})\s*[xX×]\s*([0-9]{1,6})\s*$")


def parse_frame_size(text: str) -> tuple[int, int]:
    """``"1280x720"`` → ``(1280, 720)``; :class:`BoxError` for anything else."""
    m = _FRAME_RE.match(text)
    if not m or int(m.group(1)) == 0 or int(m.group(2)) == 0:
        raise BoxError(f"frame size {text!r} is not WIDTHxHEIGHT in pixels (e.g. 1280x720)")
    return int(m.group(1)), int(m.group(2))


class BoxConvention(BaseModel):
    """How a run reads boxes a model wrote without saying (``--box-units/--box-order/--box-frame-size``).

    ``units`` applies to the bare ``box`` keyword only (``box1000``/``boxpx`` say their own);
    ``order`` applies to every box; ``frame_size`` is the frame pixel boxes refer to (the model
    saw a resized frame) — unset, the media's native frame is used.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    units: BoxUnits = Field(default="norm", description="what a bare 'box' means: norm (0-1), 1000 (0-1000), px")
    order: BoxOrder = Field(default="xyxy", description="number order of every box: xyxy, or yxyx (Gemini)")
    frame_size: tuple[int, int] | None = Field(
        default=None, description="(width, height) the pixel boxes refer to; None: the media's native frame"
    )

    def is_default(self) -> bool:
        return self == BoxConvention()

    def with_native(self, width: int | None, height: int | None) -> BoxConvention:
        """This convention with the media's frame filled in where none was given."""
        if self.frame_size is not None or not width or not height:
            return self
        return self.model_copy(update={"frame_size": (int(width), int(height))})
