"""The records of a ``murgat ground`` run folder: one :class:`GroundRecord` per response (``results.jsonl``) and
the :class:`GroundSummary` (``summary.json``), read by ``ground`` and by ``summarize`` of ground runs."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from murgat.core.schema import answer_problem_field


class ClaimOverlap(BaseModel):
    """Set-level overlap of one cited fact (or sentence) with the gold time."""

    unit: Literal["fact", "sentence"]
    index: int
    iop: float
    iog: float
    iou: float


class GroundRecord(BaseModel):
    """One line of ``results.jsonl``: a response's grounding against its gold."""

    id: str
    video: str | None = None
    error: str | None = None
    correct: bool | None = None
    answer_problem: str | None = answer_problem_field("accuracy, Acc@GQA and SAA", omitted=False)
    correct_from: str | None = Field(default=None, description="option rule | record grade | answer_score | score run")
    n_citations: int = 0
    n_invalid: int = 0
    n_valid_visual: int = 0
    predicted_span: tuple[float, float] | None = Field(default=None, description="hull of the valid visual citations")
    nextgqa_iou: float | None = None
    nextgqa_iop: float | None = None
    first_span: tuple[float, float] | None = None
    rextime_iou: float | None = None
    iop: float | None = None
    iog: float | None = None
    iou: float | None = None
    claims: list[ClaimOverlap] = Field(default_factory=list)
    evidence_recall: float | None = None
    evidence_precision: float | None = None
    gold_hit: list[bool] = Field(default_factory=list)
    viou: float | None = None
    murgat_s: float | None = None
    saa: bool | None = None
    saa_cite: bool | None = None


class GroundSummary(BaseModel):
    """``summary.json`` of a ground run; every figure an :class:`~murgat.core.schema.Interval`."""

    kind: Literal["ground"] = "ground"
    n_responses: int
    n_errors: int
    n_gold: int
    n_gold_without_response: int
    nextgqa: dict[str, Any] = Field(default_factory=dict, description="official eval_ground.py figures, in percent")
    rextime: dict[str, Any] = Field(default_factory=dict, description="ReXTime / E.T.Bench figures, in percent")
    overlap: dict[str, Any] = Field(default_factory=dict, description="murgat's set-level IoP / IoG / IoU")
    evidence: dict[str, Any] = Field(default_factory=dict, description="CiteVQA-style evidence recall / precision")
    boxes: dict[str, Any] = Field(default_factory=dict, description="vIoU of boxes over time")
    answers: dict[str, Any] = Field(default_factory=dict, description="accuracy, SAA and SAA_cite")
    settings: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list, description="what the figures cannot say (e.g. no CI from one video)")
