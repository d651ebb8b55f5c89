"""One entailment question: is a claim entailed by the evidence of some of its citations?

``score`` asks it for every fact (jointly, alone, leave-one-out: :mod:`murgat.score.stages`) and
``program``'s runtime check asks it of each description against its own segments. The cache key
comes from the evidence's recipe (the probe alone); frames and samples are decoded only when the
answer is not cached."""

from __future__ import annotations

import asyncio
from typing import Literal

import prompts
from media.errors import MediaError
from murgat.citations import strip_citations
from murgat.judges.base import Judge
from murgat.judges.evidence import evidence_parts
from murgat.judges.parsing import clip_answer, parse_verdict
from murgat.judges.types import JudgeOutput, JudgeRequest, TextPart
from murgat.judging.context import ItemContext
from murgat.judging.pool import CallPool
from murgat.schema import AtomicFact, JudgeCall, Verdict

#: the yes/no answer schema of the ``json`` prompt variants
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string"}, "label": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["label"],
}


class _EvidenceBroken(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def judge_call(stage: str, out: JudgeOutput, verdict: Verdict | None, evidence: list[int] | None = None) -> JudgeCall:
    """The record of one answered question (its raw answer clipped)."""
    return JudgeCall(stage=stage, evidence=evidence or [], verdict=verdict, raw=clip_answer(out.text),
                     error=out.error or out.parse_error, cached=out.cached,
                     sent=out.sent.model_dump(mode="json", exclude_defaults=True) if out.sent is not None else None)


async def ask_entailment(pool: CallPool, judge: Judge, fact: AtomicFact, subset: frozenset[int], ctx: ItemContext, *,
                         variant: Literal["simple", "json"] = "simple", box_view: Literal["both", "crop"] = "both",
                         stage: str = "entail") -> tuple[Verdict, JudgeCall]:
    """Is ``fact`` entailed by the evidence of its citations ``subset``? ``variant`` names the
    prompt (``entail_simple``/``entail_json``); ``box_view="crop"`` shows boxed segments as their
    enlarged boxes only (the wrong-box check); ``stage`` names the question in the record."""
    cfg = ctx.config
    idx = sorted(subset)
    try:
        plans = ctx.segment_plans(fact.citations, idx)  # probe-only arithmetic: a thread hop would cost more
    except MediaError as exc:
        return "error", JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"evidence: {exc}")
    broken = [p for p in plans if not p.available]
    if broken:
        # Only valid citations reach here, so a missing segment is a media failure, not a "no".
        reason = "; ".join(f"{p.label}: {p.reason}" for p in broken)
        return "error", JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"evidence unavailable: {reason}")
    with_text = cfg.evidence_text or judge.needs_evidence_text
    claim = strip_citations(fact.text)
    head = TextPart(prompts.render(f"entail_{variant}", fact=claim))
    tail = TextPart(prompts.render(f"entail_{variant}_question"))
    crop = box_view == "crop"
    labels = [f"{p.label} (box enlarged only)" if crop and p.boxes else p.label for p in plans]
    schema = VERDICT_SCHEMA if variant == "json" else None
    inputs = {"fact": claim, "evidence": labels}
    hint = ctx.evidence_hint(plans, with_text, view="crop" if crop else None)

    async def materialize() -> JudgeRequest:
        ev = await asyncio.to_thread(ctx.evidence_for, fact.citations, idx)
        bad = [s for s in ev.segments if not s.available]
        if bad:
            raise _EvidenceBroken("; ".join(f"{s.label}: {s.reason}" for s in bad))
        return JudgeRequest(parts=[head, *evidence_parts(ev, with_text, box_view), tail], key_hint=hint, schema=schema,
                            config=cfg.generate, task="entail", inputs=inputs, expects="verdict")

    req = JudgeRequest(parts=[head, tail], key_hint=hint, schema=schema, config=cfg.generate, task="entail",
                       inputs=inputs, expects="verdict")
    try:
        out = await pool.ask(judge, req, materialize)
    except _EvidenceBroken as exc:
        return "error", JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"evidence unavailable: {exc.reason}")
    except MediaError as exc:
        return "error", JudgeCall(stage=stage, evidence=idx, verdict="error", error=f"evidence: {exc}")
    ctx.calls.append(out)
    if out.error:
        return "error", judge_call(stage, out, "error", idx)
    verdict, problem = parse_verdict(out.text)
    call = judge_call(stage, out, verdict, idx)
    if problem and verdict == "unparseable":
        call.error = problem
    return verdict, call
