""":class:`ItemContext`: one item's media, its text channels and the evidence already built."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from media.cache import file_digest
from media.evidence import (
    CROP_MARGIN,
    CROP_SIDE,
    Evidence,
    EvidenceConfig,
    EvidenceSegment,
    SegmentPlan,
    build_evidence,
    plan_segments,
)
from media.probe import probe
from murgat.judges.types import JudgeOutput
from murgat.judging.config import JudgingConfig
from murgat.schema import Citation


@dataclass
class ItemContext:
    """Per-item state: media, text channels and evidence already built."""

    media: Path
    durations: dict[str, float | None]
    config: JudgingConfig
    question: str = ""
    transcript: Any = None
    screen: Any = None
    sounds: Any = None  # media.sounds.SoundScores of the file, when the sound tagger is installed
    _segments: dict[tuple[Any, ...], EvidenceSegment] = field(default_factory=dict)
    calls: list[JudgeOutput] = field(default_factory=list)
    _text_id: dict[str, Any] | None = None
    _info: Any = None
    _digest: str | None = None
    _evidence_dump: dict[str, Any] | None = None

    def _evidence_json(self) -> dict[str, Any]:
        if self._evidence_dump is None:
            self._evidence_dump = self.config.evidence.model_dump()
        return self._evidence_dump

    def evidence_for(self, citations: Sequence[Citation], indices: Sequence[int]) -> Evidence:
        """Evidence for a subset of citations, building each citation's segment once."""
        cfg: EvidenceConfig = self.config.evidence
        missing = [i for i in indices if _ckey(citations[i]) not in self._segments]
        if missing:
            ev = build_evidence(self.media, citations, cfg, indices=missing,
                                transcript=self.transcript, screen=self.screen, sounds=self.sounds)
            for seg in ev.segments:
                self._segments[_ckey(citations[seg.citation_index])] = seg
        segs = []
        for i in indices:
            seg = self._segments[_ckey(citations[i])]
            segs.append(EvidenceSegment(**{**seg.__dict__, "citation_index": i}))
        segs.sort(key=lambda s: (s.start if s.available else float("inf"), s.modality, s.citation_index))
        return Evidence(media_path=str(self.media), segments=segs, config=cfg)

    def segment_plans(self, citations: Sequence[Citation], indices: Sequence[int]) -> list[SegmentPlan]:
        """The segments :meth:`evidence_for` would build, from the probe alone (no decoding)."""
        if self._info is None:
            self._info = probe(self.media)
        return plan_segments(self.media, citations, self.config.evidence, indices, info=self._info)

    def evidence_hint(self, plans: Sequence[SegmentPlan], with_text: bool, view: str | None = None) -> str:
        """The recipe of the evidence parts (see ``murgat.judges.cache``): stands for them in cache keys."""
        if self._text_id is None:
            tid = {"transcript": None, "screen": None, "sounds": self.sounds.model if self.sounds is not None else None}
            if self.transcript is not None:
                tid["transcript"] = hashlib.sha256(self.transcript.model_dump_json().encode()).hexdigest()
            if self.screen is not None:
                tid["screen"] = getattr(self.screen, "identity", None) or hashlib.sha256(
                    self.screen.model_dump_json().encode()).hexdigest()
            self._text_id = tid
        if self._digest is None:
            self._digest = file_digest(self.media)
        blob = {"file": self._digest, "evidence": self._evidence_json(),
                "segments": [_plan_key(p) for p in plans],
                "text": self._text_id if with_text else None}
        if view is not None:  # another rendering of the same segments (e.g. boxes cropped only)
            blob["view"] = view
        return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


def _plan_key(p: SegmentPlan) -> list[Any]:
    """A segment's part of the evidence recipe. A boxed segment adds its boxes and the crop
    settings (the judge is shown different pictures); a box-less one keys exactly as before
    boxes existed, so existing response caches keep answering."""
    key: list[Any] = [p.modality, p.cited_start, p.cited_end, p.start, p.end]
    if p.boxes:
        key.append({"boxes": [list(r) for r in p.boxes], "crop": [CROP_MARGIN, CROP_SIDE]})
    return key


def _ckey(c: Citation) -> tuple[Any, ...]:
    base = (c.modality, c.start, c.end, c.point, c.valid, c.reason)
    return (*base, tuple(b.coords() for b in c.boxes)) if c.boxes else base
