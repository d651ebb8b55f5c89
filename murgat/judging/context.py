""":class:`ItemContext`: one item's media, its text channels and the evidence already built.

The evidence is planned, built and fitted to one request under the run's evidence limits
(:attr:`~murgat.judging.config.JudgingConfig.evidence_limits`, the provider's documented caps):
a segment over a cap is sampled or refused by the plan (:mod:`murgat.media.limits`), and a request over
a cap is thinned where its parts are made (:meth:`ItemContext.fitted`). What a limit changed
enters the cache key only when it changed something — the plan's sampling
(:meth:`SegmentPlan.sampling_key <media.evidence.SegmentPlan.sampling_key>`, known without
decoding) in :meth:`ItemContext.evidence_hint`, a request's thinning in :meth:`ItemContext.fitted_hint`
once it is built — so the evidence of a short file keys exactly as it did before limits existed.

Why not key by whether a limit *could* bite (an upper bound from the plan): a frame's bound is its
raw RGB size, about 20 times its JPEG, so a short file's request of 40 frames would have passed
OpenAI's 50 MB by the bound and changed keys though nothing is thinned; and a replay cassette's
fingerprints would have depended on the recording provider's limits.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from murgat.core.schema import Citation
from murgat.judges.evidence import fit_request
from murgat.judges.types import JudgeOutput
from murgat.judging.config import JudgingConfig
from murgat.media.cache import file_digest
from murgat.media.evidence import (
    CROP_MARGIN,
    CROP_SIDE,
    Evidence,
    EvidenceConfig,
    EvidenceSegment,
    SegmentPlan,
    build_evidence,
    plan_notes,
    plan_segments,
)
from murgat.media.limits import EvidenceLimits, EvidenceNote
from murgat.media.streams import probe


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
    voices: Any = None  # media.voices.VoiceSource of the file, with the sound channel
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

    @property
    def limits(self) -> EvidenceLimits:
        """What one request may carry (the run's :attr:`~murgat.judging.config.JudgingConfig.evidence_limits`)."""
        return self.config.evidence_limits

    def evidence_for(self, citations: Sequence[Citation], indices: Sequence[int]) -> Evidence:
        """Evidence for a subset of citations, building each citation's segment once (audio over
        the limit sampled or refused as the plan says)."""
        cfg: EvidenceConfig = self.config.evidence
        missing = [i for i in indices if _ckey(citations[i]) not in self._segments]
        if missing:
            ev = build_evidence(self.media, citations, cfg, indices=missing,
                                transcript=self.transcript, screen=self.screen, sounds=self.sounds, voices=self.voices,
                                limits=self.limits)
            for seg in ev.segments:
                self._segments[_ckey(citations[seg.citation_index])] = seg
        segs = []
        for i in indices:
            seg = self._segments[_ckey(citations[i])]
            segs.append(EvidenceSegment(**{**seg.__dict__, "citation_index": i}))
        segs.sort(key=lambda s: (s.start if s.available else float("inf"), s.modality, s.citation_index))
        return Evidence(media_path=str(self.media), segments=segs, config=cfg)

    def fitted(self, ev: Evidence, box_view: str = "both") -> Evidence:
        """``ev`` fitted to one request under the limits (images, audio, bytes): thinned or refused,
        with notes saying what (:func:`~murgat.judges.evidence.fit_request`; ``ev`` itself when
        nothing had to change)."""
        return fit_request(ev, self.limits, "crop" if box_view == "crop" else "both")

    @staticmethod
    def fitted_hint(hint: str, ev: Evidence) -> str:
        """The recipe of evidence that :meth:`fitted` thinned: the unfitted recipe ``hint`` and what
        was kept (frames and crops per segment, audio excerpts, the request's notes), so its answer
        is keyed apart from one to the whole evidence and found again when the same fit is made
        (:meth:`murgat.judges.base.Judge.generate` looks the built request up again)."""
        kept = [[s.label, len(s.frames), len(s.crops), [list(x) for x in s.excerpts], s.available]
                for s in ev.segments]
        blob = {"hint": hint, "kept": kept, "notes": [n.text for n in ev.request_notes]}
        return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()

    def segment_plans(self, citations: Sequence[Citation], indices: Sequence[int]) -> list[SegmentPlan]:
        """The segments :meth:`evidence_for` would build, from the probe alone (no decoding)."""
        return plan_segments(self.media, citations, self.config.evidence, indices, info=self.info, limits=self.limits)

    @property
    def info(self) -> Any:
        """The media file's probe (read once)."""
        if self._info is None:
            self._info = probe(self.media)
        return self._info

    def plan_notes(self, plans: Sequence[SegmentPlan]) -> list[EvidenceNote]:
        """What the limits change in these segments, known from the plan alone (a cached answer's too)."""
        return plan_notes(plans, self.config.evidence)

    def evidence_hint(self, plans: Sequence[SegmentPlan], with_text: bool, view: str | None = None) -> str:
        """The recipe of the evidence parts (see ``murgat.judges.cache``): stands for them in cache keys.

        A segment a limit sampled or refused adds what it changed (:func:`_plan_key`); that never
        happens on a short file's ordinary citations, whose keys are those of every earlier version."""
        if self._text_id is None:
            tid: dict[str, Any] = {"transcript": None, "screen": None, "sounds": None}
            if self.sounds is not None:  # a long file's chunked scores name their recipe, a whole file's its model
                tid["sounds"] = getattr(self.sounds, "identity", None) or self.sounds.model
            if self.voices is not None:  # only then: the keys of a run without the voice count stay as they were
                tid["voices"] = self.voices.identity
            if self.transcript is not None:  # likewise: a chunked transcript stands for any window by its recipe
                tid["transcript"] = getattr(self.transcript, "identity", None) or hashlib.sha256(
                    self.transcript.model_dump_json().encode()).hexdigest()
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
    sampled = p.sampling_key()  # audio sent as excerpts, or refused, by a limit (never on a short file)
    if sampled is not None:
        key.append(sampled)
    return key


def _ckey(c: Citation) -> tuple[Any, ...]:
    base = (c.modality, c.start, c.end, c.point, c.valid, c.reason)
    return (*base, tuple(b.coords() for b in c.boxes)) if c.boxes else base
