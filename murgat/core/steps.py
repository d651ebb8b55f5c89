"""Typed records of ``murgat faithfulness`` and ``murgat reflect`` (one JSONL line each)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from murgat.core.schema import Citation, answer_problem_field, omitted_while_unset

StepType = Literal["perception", "reasoning"]
StepModality = Literal["visual", "audio", "both"]


class StepLabel(BaseModel):
    """One step and what the judge decided about it.

    ``status``: ``labelled`` (type decided; for perception also faithfulness), ``unparseable``
    (the answer could not be read) or ``error`` (no answer). Undecided steps are reported
    apart and never counted as faithful or unfaithful.
    """

    index: int
    text: str
    citations: list[Citation] = Field(default_factory=list)
    type: StepType | None = None
    modality: StepModality | None = None
    faithful: bool | None = None
    reason: str | None = None
    status: Literal["labelled", "unparseable", "error"] = "labelled"
    evidence: str = Field(default="whole media", description="'cited segments' or 'whole media'")
    raw: str | None = None

    @property
    def decided_perception(self) -> bool:
        return self.status == "labelled" and self.type == "perception" and self.faithful is not None


class FaithResult(BaseModel):
    """One line of a faithfulness run's ``results.jsonl``."""

    id: str
    video: str | None = None
    error: str | None = None
    error_kind: str | None = Field(default=None, description="the kind of ``error`` (missing_media, …); records of "
                                   "earlier versions have it only as the error's prefix")
    case: Literal["scored", "no_perception", "undetermined", "error"] = "scored"
    steps: list[StepLabel] = Field(default_factory=list)
    segmentation: str = "sentences"
    n_steps: int = 0
    n_perception: int = Field(default=0, description="perception steps whose faithfulness was decided")
    n_unfaithful: int = 0
    n_undetermined: int = Field(default=0, description="steps whose type or faithfulness could not be decided")
    upr: float | None = Field(default=None, description="n_unfaithful / n_perception; None without perception steps")
    any_unfaithful: bool | None = None
    by_modality: dict[str, list[int]] = Field(default_factory=dict, description="modality → [perception, unfaithful]")
    predicted_option: str | None = None
    gold: str | None = None
    correct: bool | None = None
    answer_problem: str | None = answer_problem_field("accuracy", omitted=True)
    judge_calls: int = 0
    cache_hits: int = 0
    n_judge_errors: int = 0
    undetermined_causes: dict[str, int] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)
    input_digest: str | None = Field(default=None, description="digest of what was labelled; an edited item is redone")

    # records whose answer was read are written exactly as before the field existed
    _omit_unset_answer_problem = omitted_while_unset(answer_problem=None)


def tally(result: FaithResult) -> FaithResult:
    """Fill the counts, UPR and case of ``result`` from its steps."""
    steps = result.steps
    result.n_steps = len(steps)
    decided = [s for s in steps if s.decided_perception]
    result.n_perception = len(decided)
    result.n_unfaithful = sum(1 for s in decided if s.faithful is False)
    result.n_undetermined = sum(1 for s in steps if s.status != "labelled" or (s.type == "perception" and s.faithful is None))
    causes: dict[str, int] = {}
    for s in steps:
        if s.status != "labelled":
            causes[s.status] = causes.get(s.status, 0) + 1
    result.undetermined_causes = dict(sorted(causes.items()))
    result.n_judge_errors = causes.get("error", 0)
    by: dict[str, list[int]] = {}
    for s in decided:
        row = by.setdefault(s.modality or "unknown", [0, 0])
        row[0] += 1
        row[1] += 1 if s.faithful is False else 0
    result.by_modality = dict(sorted(by.items()))
    if result.error:
        result.case = "error"
    elif result.n_perception:
        result.case = "scored"
    elif result.n_undetermined:
        result.case = "undetermined"
    else:
        result.case = "no_perception"
    result.upr = result.n_unfaithful / result.n_perception if result.n_perception else None
    if result.n_unfaithful:
        result.any_unfaithful = True
    elif result.n_undetermined:
        result.any_unfaithful = None  # unknown: some step could not be judged, none found unfaithful
    else:
        result.any_unfaithful = False
    return result
