"""Typed records that cross module and file boundaries.

Everything murgat writes to disk (``results.jsonl``, ``summary.json``) is one of these
pydantic models, so a JSON round trip is lossless and a reader can rebuild the exact
object that was scored. The models hold data only; the logic lives in ``citations``,
``text``, ``metric`` and the pipeline.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from murgat.core.boxes import Box

Modality = Literal["visual", "audio"]
"""The two evidence channels a citation may point at."""

Verdict = Literal["yes", "no", "unknown", "unparseable", "error"]
"""A judge's answer to one yes/no question.

``unknown`` is an abstention (the judge said it cannot tell), ``unparseable`` means the
answer could not be read, ``error`` means no answer came back (timeout, refusal,
provider failure). Only ``yes`` and ``no`` are decisions; the other three are counted
and reported apart, never folded into ``no``.
"""

DECIDED: frozenset[str] = frozenset({"yes", "no"})


def without_empty(data: dict[str, Any], **empty: bool) -> dict[str, Any]:
    """A wrap serializer's ``data`` without the fields named true in ``empty``: a field added to a
    record after run folders existed is left out while it is empty, so those folders resume, compare
    and digest unchanged (``data`` is the handler's dict; anything else passes through)."""
    if isinstance(data, dict):
        for name, is_empty in empty.items():
            if is_empty:
                data.pop(name, None)
    return data


def omitted_while_unset(**unset: Any) -> Any:
    """A record's wrap serializer, for its class body (``_omit = omitted_while_unset(boxes=[])``): each
    named field is left out of the dump while it holds its unset value (``None`` by identity, else by
    equality: ``[]``, ``{}``, ``0``), so run folders written before the field existed resume, compare
    and digest unchanged (:func:`without_empty`). One home for the rule every such record follows."""
    def omit(self: BaseModel, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return without_empty(handler(self), **{name: _is_unset(getattr(self, name), value)
                                               for name, value in unset.items()})

    return model_serializer(mode="wrap")(omit)


def _is_unset(value: Any, unset: Any) -> bool:
    return value is None if unset is None else bool(value == unset)


def answer_problem_field(counted_in: str, *, omitted: bool) -> Any:
    """The ``answer_problem`` field of every record that holds an answer to a question with options,
    its meaning said once; ``counted_in``: the figures of the record's command that count such an
    item as not correct; ``omitted``: the record leaves the field out while it is ``None``."""
    return Field(default=None, description=(
        "why the answer could not be read when the item has a gold option (correct is then None, never False; "
        f"it counts as not correct in {counted_in}, and n_answer_unknown counts it)"
        + ("; omitted when None" if omitted else "")))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class Citation(_Model):
    """One time reference into one modality of the media.

    ``start == end`` with ``point=True`` is a point citation (``(visual, 0:12)``).
    A citation that could not be understood is still kept, with ``valid=False`` and the
    ``reason``; it then supports nothing when scoring.
    """

    modality: str | None = Field(description="'visual' or 'audio' when understood, else the raw label")
    start: float | None = Field(default=None, description="start time in seconds")
    end: float | None = Field(default=None, description="end time in seconds (== start for a point)")
    point: bool = Field(default=False, description="written as a single time rather than a range")
    raw: str = Field(description="the exact text of this entry inside the citation group")
    span: tuple[int, int] = Field(description="character span of this entry in its source text")
    group_span: tuple[int, int] = Field(description="character span of the whole bracketed group")
    valid: bool = True
    reason: str | None = None
    boxes: list[Box] = Field(
        default_factory=list,
        description="regions of the frame (visual only; several = any of them); omitted from records when empty")

    # a citation without boxes is written exactly as before boxes existed
    _omit_empty_boxes = omitted_while_unset(boxes=[])

    def key(self) -> tuple[Any, ...]:
        """Identity used to compare citation sets (the raw spelling does not matter).

        Boxes count by their numbers as written (not by the run's reading of them), so a
        fact's re-parsed citation matches its sentence's under any ``--box-units``.
        """
        low = self.raw.lower()
        if "box" not in low:
            return (self.modality, self.start, self.end)
        # the box tail as written: its keywords and numbers (normalised as floats), nothing else;
        # read here rather than by the citation parser, which imports this module
        tail = low[low.index("box"):]
        tokens = tuple(str(float(t)) if t[0] in "+-.0123456789" else t
                       for t in re.findall(r"box(?:1000|px)?|[-+]?(?:\d+\.?\d*|\.\d+)", tail))
        return (self.modality, self.start, self.end, tokens)


class TimeLike(_Model):
    """Time-like text that the citation grammar did not read as a citation (``<t>3.0</t>``,
    ``at 1:05``, ``(audio, 3-5)``): reported with the nearest accepted spelling, never dropped
    silently (see :func:`murgat.core.citations.find_time_like`)."""

    text: str = Field(description="the text as written (at most 80 characters)")
    span: tuple[int, int] = Field(description="character span in the text it was found in")
    nearest: str | None = Field(default=None, description="the nearest accepted spelling, e.g. '(visual, 0:03)'")
    reason: str = Field(description="why it is not a citation")


class Sentence(_Model):
    """A sentence of a response, identified by its position (two equal sentences stay two)."""

    index: int
    text: str = Field(description="sentence text including its citation groups")
    span: tuple[int, int] = Field(description="character span in the preprocessed reasoning text")
    citations: list[Citation] = Field(default_factory=list)
    time_like: list[TimeLike] = Field(
        default_factory=list,
        description="time-like text in the sentence that is not a citation; omitted from records when empty")

    # a sentence without time-like text is written exactly as before the field existed
    _omit_empty_time_like = omitted_while_unset(time_like=[])


class AtomicFact(_Model):
    """One self-contained claim taken from a sentence, with the citations it inherits."""

    index: int
    sentence_index: int
    text: str
    citations: list[Citation] = Field(default_factory=list)
    dropped_citations: list[Citation] = Field(
        default_factory=list,
        description="citations the decomposer attached that the sentence never cited (guard)",
    )

    @property
    def only_invalid_citations(self) -> bool:
        """It cites, but no citation is valid: no judge was asked about it (it counts as not entailed
        by the metric's rule), so every view shows it as ``invalid citation``, never as the judge's "no"."""
        return bool(self.citations) and not any(c.valid for c in self.citations)


class JudgeCall(_Model):
    """A record of one judge question and its answer, kept for inspection."""

    stage: str
    evidence: list[int] = Field(default_factory=list, description="citation indices shown")
    verdict: Verdict | None = None
    raw: str | None = None
    error: str | None = None
    cached: bool = False
    evidence_notes: list[dict[str, Any]] = Field(
        default_factory=list, description="what the evidence limits changed in this question's media (media.limits."
        "EvidenceNote: kind, text, label, …): frames sampled, audio sampled, images or bytes capped, refused; "
        "omitted from records when empty")
    sent: dict[str, Any] | None = Field(
        default=None, description="what the request carried, as the provider's client sent it (images and their "
        "pixel sizes, each image's time label, audio and clip seconds, bytes: murgat.judges.account.Sent, its "
        "non-default fields); None where no request was built (a provider that builds none, an evidence failure), "
        "and then omitted from records")

    # a question whose evidence no limit touched, and one that built no request, are written exactly as
    # before notes and the account of what was sent existed
    _omit_empty_accounts = omitted_while_unset(evidence_notes=[], sent=None)


class FactVerdict(_Model):
    """Entailment outcome of one fact under one precision mode.

    ``recall`` and ``precision`` are ``None`` when the fact could not be judged
    (abstention, unparseable answer, provider error); ``status`` then says why.
    """

    fact_index: int
    joint: Verdict | None = None
    alone: dict[int, Verdict] = Field(default_factory=dict)
    leave_one_out: dict[int, Verdict] = Field(default_factory=dict)
    precise: list[bool | None] = Field(default_factory=list)
    recall: float | None = None
    precision: float | None = None
    status: Literal["judged", "undetermined"] = "judged"
    reason: str | None = None
    calls: list[JudgeCall] = Field(default_factory=list)


class SentenceResult(_Model):
    """Everything decided about one sentence."""

    sentence: Sentence
    decontextualized: str | None = None
    decontext_fallback: str | None = Field(default=None, description="why the original text was kept")
    verifiable: bool | None = None
    verify_verdict: Verdict | None = None
    verify_raw: str | None = None
    facts: list[AtomicFact] = Field(default_factory=list)
    verdicts: list[FactVerdict] = Field(default_factory=list)
    decompose_raw: str | None = None
    notes: list[str] = Field(default_factory=list)


class Scores(_Model):
    """Response-level figures; ``None`` where the response is excluded or undetermined."""

    coverage: float | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    murgat_s: float | None = None


ResponseCase = Literal["scored", "no_verifiable", "no_cited_facts", "undetermined", "excluded", "error"]


class ResponseResult(_Model):
    """One line of ``results.jsonl``."""

    id: str
    error: str | None = None
    error_kind: str | None = Field(default=None, description="the kind of ``error`` (missing_media, corrupt_media, "
                                   "internal_error, …); records of earlier versions have it only as the error's prefix")
    scores: Scores = Field(default_factory=Scores)
    case: ResponseCase = "scored"
    n_sentences: int = 0
    n_verifiable: int = 0
    n_verifiable_cited: int = 0
    n_verify_undetermined: int = 0
    n_facts: int = 0
    n_facts_judged: int = 0
    n_facts_undetermined: int = 0
    n_empty_decompositions: int = Field(
        default=0, description="verifiable cited sentences the decomposer split into no facts (flagged, not scored 0)")
    n_judge_errors: int = Field(
        default=0, description="judge calls of this item that got no answer (timeouts, provider failures)")
    undetermined_causes: dict[str, int] = Field(
        default_factory=dict,
        description="why verdicts stayed undecided: 'error' (no answer), 'unknown' (abstention), 'unparseable', "
        "'over_limit' (a fact over --max-citations-per-fact or --max-evidence-s, not judged)")
    judge_failure: str | None = Field(
        default=None, description="the first judge failure of this item, with its cause (e.g. connection refused, the "
        "URL, the HTTP status and the first bytes of the body), or the first unreadable answer; None when every "
        "request was answered readably")
    video: str | None = None
    answer: str | None = None
    predicted_option: str | None = None
    gold: str | None = None
    correct: bool | None = None
    answer_problem: str | None = answer_problem_field("accuracy", omitted=True)
    sentences: list[SentenceResult] = Field(default_factory=list)
    n_time_like: int = Field(default=0, description="time-like texts of the sentences that the citation grammar did not "
                             "read as citations (each listed in its sentence's time_like); omitted when 0")
    judge_calls: int = Field(default=0, description="judge requests this item made (sent + cache hits + deduplicated)")
    cache_hits: int = Field(default=0, description="requests answered from the SQLite response cache")
    deduplicated: int = Field(default=0, description="requests answered by an identical request of the same run")
    evidence_notes: dict[str, int] = Field(
        default_factory=dict, description="the evidence notes of this item's judge questions, by kind (frames_sampled, "
        "audio_sampled, images_capped, bytes_capped, refused); omitted when none")
    meta: dict[str, Any] = Field(default_factory=dict)
    input_digest: str | None = Field(
        default=None, description="digest of what was scored (item fields + media content); an edited item is rescored")

    # records whose answer was read (and with no time-like text) are written exactly as before the fields existed
    _omit_unset_answer_problem = omitted_while_unset(answer_problem=None, n_time_like=0, evidence_notes={})


class Interval(_Model):
    """A point estimate with a bootstrap confidence interval."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0


class RunSummary(_Model):
    """Run-level aggregates written to ``summary.json``."""

    n_items: int
    n_errors: int
    n_scored: int
    coverage: Interval
    precision: Interval
    recall: Interval
    f1: Interval
    murgat_s: Interval
    accuracy: Interval | None = Field(
        default=None, description="answer accuracy over the items with a gold option; an answer that could not be read "
        "counts as not correct (as the benchmarks' official scorers count it)")
    attributed_accuracy: Interval | None = Field(
        default=None, description="answer right AND MURGAT-S >= attributed_threshold, over the same items as accuracy")
    n_answer_unknown: int = Field(default=0, description="items with a gold option whose answer could not be read")
    accuracy_answered: Interval | None = Field(
        default=None, description="accuracy over the items whose answer was read (null with n 0 when none was)")
    n_time_like: int = Field(default=0, description="time-like texts not read as citations, over the items summarised")
    attributed_threshold: float = 0.5
    cases: dict[str, int] = Field(default_factory=dict)
    precision_mode: str = "alce"
    empty_policy: str = "zero"
    bootstrap: dict[str, Any] = Field(default_factory=dict)
    judge_calls: int = Field(default=0, description="judge requests of the items summarised (all invocations)")
    cache_hits: int = Field(default=0, description="of those, answered from the response cache")
    deduplicated: int = Field(default=0, description="of those, answered by an identical request in the same run")
    sent: int = Field(default=0, description="of those, sent to a provider (judge_calls - cache_hits - deduplicated)")
    n_judge_errors: int = Field(default=0, description="judge requests that got no answer, over the items summarised")
    n_empty_decompositions: int = Field(default=0, description="cited verifiable sentences split into no facts")
    undetermined_causes: dict[str, int] = Field(default_factory=dict, description="undecided verdicts by cause")
    evidence_notes: dict[str, int] = Field(
        default_factory=dict, description="the evidence notes of the judge questions (what a limit changed: frames "
        "sampled, audio sampled, images or bytes capped, refused), by kind, over the items summarised")
    extra: dict[str, Any] = Field(default_factory=dict)


class Item(_Model):
    """One response to score, with what is needed to find its media and answer."""

    model_config = ConfigDict(extra="allow")

    id: str
    media: str | None = Field(default=None, description="path or id of the video/audio file")
    question: str | None = None
    options: list[str] | None = None
    gold: str | None = Field(default=None, description="gold option letter or answer text")
    response: str = ""
    question_type: str | None = None
    input_problem: str | None = Field(
        default=None, exclude=True,
        description="why this item cannot be read (set by the loader, e.g. a response over the size cap); never "
        "written out, never part of the item's digest")
    meta: dict[str, Any] = Field(
        default_factory=dict,
        description="the input's own fields beyond murgat's (a benchmark's task type, domain, duration, audio "
        "classes, …), kept so that figures can be grouped on them; not part of what identifies an item's work "
        "(murgat.engine.loop.DIGEST_FIELDS), so adding or editing them redoes nothing")

    @field_validator("meta", mode="before")
    @classmethod
    def _meta_object(cls, value: Any) -> Any:
        # an input whose own field happens to be called "meta" and is not an object (it was an ordinary
        # extra field before meta existed) keeps its value instead of being refused
        if value is None:
            return {}
        return value if isinstance(value, dict) else {"meta": value}
