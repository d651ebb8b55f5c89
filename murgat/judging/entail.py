"""One entailment question: is a claim entailed by the evidence of some of its citations?

``score`` asks it for every fact (jointly, alone, leave-one-out: :mod:`murgat.commands.score.stages`) and
``program``'s runtime check asks it of each description against its own segments. The cache key
comes from the evidence's recipe (the probe alone); frames and samples are decoded only when the
answer is not cached.

What the evidence limits changed is in the question's record (:attr:`JudgeCall.evidence_notes
<murgat.core.schema.JudgeCall.evidence_notes>`): the segments' notes from the plan, the request's from
the answer (it carries the notes of the request it answered, so a cached answer's record is the
same); a request the limits refuse is not sent (``over limit: …``, an undetermined cause apart from
judge errors)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from murgat import prompts
from murgat.core.citations import strip_citations
from murgat.core.schema import AtomicFact, JudgeCall, Verdict
from murgat.judges.base import Judge
from murgat.judges.budget import sized_request
from murgat.judges.evidence import evidence_parts
from murgat.judges.parsing import clip_answer, read_verdict
from murgat.judges.types import JudgeOutput, JudgeRequest, TextPart
from murgat.judging.context import ItemContext
from murgat.judging.pool import CallPool
from murgat.media.errors import MediaError

#: the yes/no answer schema of the ``json`` prompt variants
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string"}, "label": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["label"],
}


#: how a request the evidence limits refused is recognised in records (``undetermined_causes``:
#: ``over_limit``, never a judge error that ``--retry-errors`` would ask again)
OVER_LIMIT = "over limit: "


class _EvidenceBroken(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Refused(_EvidenceBroken):
    """The evidence cannot fit one request under the provider's limits (nothing was sent); ``notes``
    say what was tried and why it was refused."""

    def __init__(self, reason: str, notes: list[dict[str, Any]]) -> None:
        super().__init__(reason)
        self.notes = notes


def judge_call(stage: str, out: JudgeOutput, verdict: Verdict | None, evidence: list[int] | None = None,
               notes: list[dict[str, Any]] | None = None) -> JudgeCall:
    """The record of one answered question (its raw answer clipped, and what the limits changed)."""
    return JudgeCall(stage=stage, evidence=evidence or [], verdict=verdict, raw=clip_answer(out.text),
                     error=out.error or out.parse_error, cached=out.cached, evidence_notes=notes or [],
                     sent=out.sent.model_dump(mode="json", exclude_defaults=True) if out.sent is not None else None)


def call_notes(plan_notes: list[dict[str, Any]], out: JudgeOutput | None) -> list[dict[str, Any]]:
    """The notes of one question: those its answer carries (the request it answered: segments
    then request, as built), else the plan's (an answer cached before notes were recorded, or no
    answer at all)."""
    return list(out.evidence_notes) if out is not None and out.evidence_notes else plan_notes


async def ask_entailment(pool: CallPool, judge: Judge, fact: AtomicFact, subset: frozenset[int], ctx: ItemContext, *,
                         variant: Literal["simple", "json"] = "simple", box_view: Literal["both", "crop"] = "both",
                         stage: str = "entail", repeat: int = 0) -> tuple[Verdict, JudgeCall]:
    """Is ``fact`` entailed by the evidence of its citations ``subset``? ``variant`` names the
    prompt (``entail_simple``/``entail_json``); ``box_view="crop"`` shows boxed segments as their
    enlarged boxes only (the wrong-box check); ``stage`` names the question in the record;
    ``repeat``: which repeat of the question (``score --repeats``, :func:`~murgat.judging.pool.repeat_of`)."""
    cfg = ctx.config
    idx = sorted(subset)
    try:
        plans = ctx.segment_plans(fact.citations, idx)  # probe-only arithmetic: a thread hop would cost more
    except MediaError as exc:
        return "error", JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"evidence: {exc}")
    plan_notes = [n.model_dump() for n in ctx.plan_notes(plans)]
    unsendable = _unsendable(plans, idx, stage, plan_notes)
    if unsendable is not None:
        return "error", unsendable
    with_text = cfg.evidence_text or judge.needs_evidence_text
    claim = strip_citations(fact.text)
    head = TextPart(prompts.render(f"entail_{variant}", fact=claim))
    tail = TextPart(prompts.render(f"entail_{variant}_question"))
    crop = box_view == "crop"
    labels = [f"{p.label} (box enlarged only)" if crop and p.boxes else p.label for p in plans]
    schema = VERDICT_SCHEMA if variant == "json" else None
    inputs = {"fact": claim, "evidence": labels}
    hint = ctx.evidence_hint(plans, with_text, view="crop" if crop else None)
    sent, key_config = sized_request(cfg.generate, "entail", variant, cfg.sized_answers)

    async def materialize() -> JudgeRequest:
        ev = await asyncio.to_thread(ctx.evidence_for, fact.citations, idx)
        bad = [s for s in ev.segments if not s.available]
        if bad:
            raise _EvidenceBroken("; ".join(f"{s.label}: {s.reason}" for s in bad))
        ev = ctx.fitted(ev, box_view)
        no = [n for n in ev.request_notes if n.kind == "refused"]
        if no:
            raise _Refused(no[0].text, [n.model_dump() for n in ev.notes])
        return JudgeRequest(parts=[head, *evidence_parts(ev, with_text, box_view), tail],
                            key_hint=ctx.fitted_hint(hint, ev) if ev.request_notes else hint, schema=schema,
                            config=sent, key_config=key_config, task="entail", inputs=inputs, expects="verdict",
                            evidence_notes=[n.model_dump() for n in ev.notes])

    req = JudgeRequest(parts=[head, tail], key_hint=hint, schema=schema, config=sent, key_config=key_config,
                       task="entail", inputs=inputs, expects="verdict")
    try:
        out = await pool.ask(judge, req, materialize, repeat=repeat)
    except _Refused as exc:
        return "error", JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"{OVER_LIMIT}{exc.reason}",
                                  evidence_notes=exc.notes)
    except _EvidenceBroken as exc:
        return "error", JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"evidence unavailable: {exc.reason}")
    except MediaError as exc:
        return "error", JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"evidence: {exc}")
    ctx.calls.append(out)
    return _verdict_call(stage, out, idx, call_notes(plan_notes, out))


def _unsendable(plans: list[Any], idx: list[int], stage: str, plan_notes: list[dict[str, Any]]) -> JudgeCall | None:
    """The error call of a question that is not asked: a segment over a limit with ``--over-limit
    refuse`` (not sent, and not a media failure), or a segment the media cannot give (only valid
    citations reach here, so a missing segment is a media failure, not a "no")."""
    refused = [p for p in plans if p.note is not None and p.note.kind == "refused"]
    if refused:
        reason = "; ".join(f"{p.label}: {p.reason}" for p in refused)
        return JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"{OVER_LIMIT}{reason}",
                         evidence_notes=plan_notes)
    broken = [p for p in plans if not p.available]
    if broken:
        reason = "; ".join(f"{p.label}: {p.reason}" for p in broken)
        return JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"evidence unavailable: {reason}")
    return None


def _verdict_call(stage: str, out: JudgeOutput, idx: list[int], notes: list[dict[str, Any]]) -> tuple[Verdict, JudgeCall]:
    """The verdict read from an answer (an error stays an error; an unparseable one keeps why)."""
    if out.error:
        return "error", judge_call(stage, out, "error", idx, notes)
    verdict, problem = read_verdict(out)
    call = judge_call(stage, out, verdict, idx, notes)
    if problem and verdict == "unparseable":
        call.error = problem
    return verdict, call
