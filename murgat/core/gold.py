"""murgat's gold-evidence file: one JSON line per question, joined to responses by ``id``.

::

    {"id": "6706220611_5", "video": "6706220611", "duration": 90, "fps": 29.97,
     "question": "why did the baby ...", "answer": {"text": "arrange two pillows close together",
     "choices": ["resting", "to get up", "arrange two pillows close together", ...], "index": 2},
     "need": "any",
     "evidence": [{"modality": "visual", "start": 70.0, "end": 76.5, "role": "crucial",
                   "boxes": [{"t": 71.0, "x1": 0.1, "y1": 0.2, "x2": 0.5, "y2": 0.8}]},
                  {"modality": "page", "page": 3, "doc": "report.pdf",
                   "boxes": [{"x1": 0.1, "y1": 0.1, "x2": 0.4, "y2": 0.2}]}]}

``need`` says whether *any* of the crucial items is enough (NExT-GQA's several segments of
one question are alternatives) or *all* are needed (CiteVQA's multi-element evidence).
``duration`` stands in for the media, so grounding metrics need neither media nor judge.
Boxes are normalised 0–1 from the top-left (x1, y1, x2, y2); a box's ``t`` is the time of
the frame it was drawn on (absent for a box that holds for the whole item).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class GoldFormatError(ValueError):
    """A gold file or an official annotation file that cannot be read; the message names the place."""


class _Model(BaseModel):
    # NaN and infinities are refused where they are read: JSON has no spelling for them, so a gold
    # file holding one was written with ``null`` there and refused by murgat itself on the next read
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


#: the highest annotation frame rate accepted (a vIoU grid step of 1 µs); a larger one is a unit mistake
MAX_FPS = 1_000_000.0


class GoldBox(_Model):
    """A region, normalised 0–1 from the top-left."""

    t: float | None = Field(default=None, description="time (s) of the frame it was drawn on; None = whole item")
    x1: float
    y1: float
    x2: float
    y2: float

    @model_validator(mode="after")
    def _check(self) -> GoldBox:
        for name in ("x1", "y1", "x2", "y2"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"box {name}={v} is outside 0-1 (boxes are normalised)")
        if self.x2 <= self.x1 or self.y2 <= self.y1:
            raise ValueError(f"box ({self.x1}, {self.y1}, {self.x2}, {self.y2}) is empty: need x2 > x1 and y2 > y1")
        return self

    def xyxy(self) -> tuple[float, float, float, float]:
        return (self.x1, self.y1, self.x2, self.y2)


class GoldEvidence(_Model):
    """One annotated piece of evidence: a time span of one modality, or a page."""

    modality: Literal["visual", "audio", "page"]
    start: float | None = Field(default=None, description="seconds (visual/audio)")
    end: float | None = Field(default=None, description="seconds (visual/audio)")
    role: Literal["crucial", "auxiliary"] = "crucial"
    boxes: list[GoldBox] = Field(default_factory=list)
    doc: str | None = Field(default=None, description="document name, for multi-document items")
    page: int | None = Field(default=None, description="page number, from 1")

    @model_validator(mode="after")
    def _check(self) -> GoldEvidence:
        if self.modality == "page":
            if self.page is None or self.page < 1:
                raise ValueError("page evidence needs a page number from 1")
        else:
            if self.start is None or self.end is None:
                raise ValueError(f"{self.modality} evidence needs start and end")
            if self.start < 0 or self.end < self.start:
                raise ValueError(f"{self.modality} evidence {self.start}-{self.end}: need 0 <= start <= end")
        return self


class GoldAnswer(_Model):
    """The right answer: its text, the choices, and the index of the right one (from 0)."""

    text: str | None = None
    choices: list[str] | None = None
    index: int | None = None

    @model_validator(mode="after")
    def _check(self) -> GoldAnswer:
        if self.index is not None and (self.choices is None or not 0 <= self.index < len(self.choices)):
            raise ValueError(f"answer index {self.index} does not name one of the choices")
        return self


class GoldItem(_Model):
    """Gold for one question."""

    id: str
    video: str | None = Field(default=None, description="video (or document) id; used to cluster the bootstrap")
    duration: float | None = Field(default=None, description="media length in seconds (citations past it are invalid)")
    fps: float | None = Field(default=None, description="frame rate of the box annotations (vIoU time grid)")
    question: str | None = None
    question_type: str | None = None
    answer: GoldAnswer | None = None
    need: Literal["any", "all"] = "all"
    evidence: list[GoldEvidence] = Field(default_factory=list)
    source: str | None = Field(default=None, description="dataset it was imported from")

    @model_validator(mode="after")
    def _check(self) -> GoldItem:
        # a duration of 0 or less would make every citation "past the end": refused, not silently invalid
        if self.duration is not None and self.duration <= 0:
            raise ValueError(f"duration {self.duration} must be a positive number of seconds")
        if self.fps is not None and not 0 < self.fps <= MAX_FPS:
            raise ValueError(f"fps {self.fps} must be positive and at most {MAX_FPS:,.0f}")
        return self


def load_gold(path: str | Path) -> dict[str, GoldItem]:
    """Gold items by id; a bad line or a repeated id raises :class:`GoldFormatError` naming it."""
    from murgat.core.jsonl import iter_lines, loads_line

    out: dict[str, GoldItem] = {}
    p = Path(path)
    if not p.is_file():
        raise GoldFormatError(f"{p}: no such gold file")
    try:
        lines = list(iter_lines(p))
    except UnicodeDecodeError as exc:
        raise GoldFormatError(f"{p}: not UTF-8 text (byte {exc.start}); a gold file is JSONL") from None
    except OSError as exc:
        raise GoldFormatError(f"{p}: cannot be read ({exc.strerror or exc})") from None
    for lineno, line in lines:
        if not line.strip():
            continue
        try:
            item = GoldItem.model_validate(loads_line(line))
        except ValidationError as exc:
            raise GoldFormatError(f"{p}: line {lineno}: {_first_error(exc)}") from None
        except ValueError as exc:
            raise GoldFormatError(f"{p}: line {lineno}: not JSON ({exc})") from None
        if item.id in out:
            raise GoldFormatError(f"{p}: line {lineno}: id {item.id!r} appears twice")
        out[item.id] = item
    return out


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(x) for x in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


_BBOX_TAG = re.compile(r"<bbox\b(?P<attrs>[^<>]*?)/?>(?:\s*</bbox>)?", re.IGNORECASE)


_ATTR = re.compile(r"(\w+)\s*=\s*[\"']([^\"']*)[\"']")


def bbox_tags(text: str, where: str, strict: bool = True) -> tuple[list[GoldEvidence], list[str], str]:
    """Page evidence of the ``<bbox …/>`` tags of ``text``, the problems of bad tags, and the clean text.

    Shared by the CiteVQA importer (gold answers: ``strict``, a bad tag is an error) and the
    grounding scorer (answers of models citing CiteVQA-style: a bad tag is a problem, kept
    as an invalid citation), so both read one grammar.
    """
    items: list[GoldEvidence] = []
    problems: list[str] = []
    for m in _BBOX_TAG.finditer(text):
        attrs = {k.lower(): v for k, v in _ATTR.findall(m.group("attrs"))}
        try:
            page = int(attrs["page"])
            x1, y1, x2, y2 = (float(attrs[k]) / 1000.0 for k in ("x1", "y1", "x2", "y2"))
            box = GoldBox(x1=x1, y1=y1, x2=x2, y2=y2)
            items.append(GoldEvidence(modality="page", page=page, doc=attrs.get("doc"), boxes=[box]))
        except KeyError as exc:
            problems.append(f"tag {m.group(0)!r} lacks {exc.args[0]}")
        except (ValueError, ValidationError) as exc:
            msg = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            problems.append(f"tag {m.group(0)!r}: {msg} (coordinates are 0-1000)")
        if strict and problems:
            raise GoldFormatError(f"{where}: {problems[0]}")
    clean = re.sub(r"[ \t]{2,}", " ", _BBOX_TAG.sub("", text)).strip()
    return items, problems, clean
