"""Self-reflection (Algorithm 2): repair the first unfaithful perception step, then continue.

For one chain R = r1..rT about a video:

1. check the steps in order with the detector;
2. at the first unfaithful perception step r_i, ask the model to regenerate r_i (the
   question, the media, r_1..r_{i-1}, the rejected step and the detector's reason; from the
   second attempt on, the original rejected step with its reason and the latest rejected
   attempt with its reason), until the detector accepts it or K attempts are used (an
   unresolved step keeps its last attempt, marked, and the process goes on);
3. give r_1..r_i' back to the model to continue the rest of the chain (a continuation prompt:
   murgat's judge interface has no assistant prefill), and resume checking from r_{i+1};
4. stop after the last step.

A step the detector cannot label (unparseable answer, provider error) is never treated as
faithful: it is recorded as undetermined, left as it is, and checking goes on. Detectors: a
judge labelling steps (per step, with its own question-aware prompt ``faith_detect`` that
ignores minor slips, or the labelling prompt ``faith_step`` as a variant) or ``self`` (the
model assesses its own step with the vanilla prompt — the weak baseline of the method).

Every regeneration reaches the model. Each attempt's prompt is distinct (attempt 1 names
the rejected step; later attempts name the attempt number and the latest rejected version),
so the response cache, whose key is the request, can never answer attempt k+1 with attempt
k's answer — at temperature > 0 the retries are real re-samples — while a rerun of the same
folder sends the same requests and is served every answer it already paid for.

What is measured, and by whom (:func:`reflect_item`): the before/after UPR comes from an
independent labeller (``--judge``, labelling the original and the final chain as ``murgat
faithfulness`` would); the detector's own verdicts (the labels that drove the walk) are kept
as a second, labelled view. Without ``--judge`` the labeller is the detector's judge, and the
run says so.

Bounds (documented, configurable): at most ``k`` attempts per step, ``max_regenerations``
attempts per item over all its steps, ``max_steps`` steps checked per item (continuations
included). Past a bound the item's walk records why it stopped; nothing is silently dropped.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from murgat import prompts
from murgat.core.citations import check_durations, parse_citations
from murgat.core.steps import FaithResult, StepLabel, tally
from murgat.core.text import preprocess, strip_thinking
from murgat.judges.types import JudgeRequest, MediaPart, TextPart
from murgat.judging.answering import Model
from murgat.judging.context import ItemContext
from murgat.judging.pool import CallPool
from murgat.judging.steps import Labeller

#: defaults of the per-item bounds (``--max-regenerations``, ``--max-steps``)
MAX_REGENERATIONS = 15
MAX_STEPS = 100


class Attempt(BaseModel):
    attempt: int
    text: str | None = None
    verdict: str = ""
    reason: str | None = None
    error: str | None = None


class StepEvent(BaseModel):
    """One checked step in the walk, with its regeneration attempts and continuation."""

    index: int
    text: str
    verdict: str = Field(description="faithful | unfaithful | reasoning | undetermined")
    reason: str | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    resolved: bool | None = None
    not_regenerated: str | None = Field(default=None, description="why an unfaithful step was left as it is")
    continuation: str | None = None
    continuation_error: str | None = None


class ReflectTrace(BaseModel):
    id: str
    original: str
    final: str = ""
    events: list[StepEvent] = Field(default_factory=list)
    regenerations: int = Field(default=0, description="steps whose regeneration was invoked")
    attempts: int = Field(default=0, description="regeneration requests to the model, all steps together")
    resolved_after: dict[str, int] = Field(default_factory=dict, description="attempts used → count of resolved steps")
    unresolved: int = 0
    not_regenerated: int = Field(default=0, description="unfaithful steps left as they were: regeneration cap reached")
    undetermined: int = Field(default=0, description="checks (first checks and regenerated steps) the detector could "
                                                     "not label")
    unchecked: int = Field(default=0, description="steps past the step cap, kept in the chain but never checked")
    stopped: str | None = Field(default=None, description="which bound ended the walk early, if one did")
    calls: int = 0
    error: str | None = None


def verdict_of(step: StepLabel) -> str:
    if step.status != "labelled" or step.type is None or (step.type == "perception" and step.faithful is None):
        return "undetermined"
    if step.type == "reasoning":
        return "reasoning"
    return "faithful" if step.faithful else "unfaithful"


def options_block(options: list[str] | None) -> str:
    return ("Options:\n" + "\n".join(f"({chr(65 + i)}) {o}" for i, o in enumerate(options))) if options else ""


def fresh_steps(steps: list[StepLabel]) -> list[StepLabel]:
    """The steps' text and citations without any label (what a labeller starts from)."""
    return [StepLabel(index=k, text=s.text, citations=s.citations) for k, s in enumerate(steps)]


def counts(steps: list[StepLabel], item_id: str) -> dict[str, int]:
    r = tally(FaithResult(id=item_id, steps=steps))
    return {"perception": r.n_perception, "unfaithful": r.n_unfaithful, "undetermined": r.n_undetermined}


def step_view(steps: list[StepLabel]) -> list[dict[str, Any]]:
    """What a labeller decided per step, without the raw answers (they can be large)."""
    return [{"index": s.index, "text": s.text, "type": s.type, "modality": s.modality, "faithful": s.faithful,
             "status": s.status, "reason": s.reason} for s in steps]


@dataclass
class Reflector:
    model: Model
    detector: Labeller
    pool: CallPool
    k: int = 3
    cite: bool = False
    max_regenerations: int = MAX_REGENERATIONS
    max_steps: int = MAX_STEPS

    def _rule(self) -> str:
        return (", ending each observed fact with its evidence as (visual, MM:SS) or (audio, MM:SS-MM:SS)"
                if self.cite else "")

    def _step(self, i: int, text: str, ctx: ItemContext) -> StepLabel:
        cites = check_durations(parse_citations(text), ctx.durations, ctx.config.end_tolerance_s)
        return StepLabel(index=i, text=text, citations=cites)

    @staticmethod
    def detector_question(question: str, options: list[str] | None) -> str:
        """The question as the detector sees it: with its options, since whether a wrong detail
        matters depends on what the answer has to choose between."""
        opts = options_block(options)
        return f"{question or '(not given)'}\n{opts}" if opts else (question or "")

    async def _ask_model(self, ctx: ItemContext, prompt: str, task: str, inputs: dict[str, Any]) -> tuple[str | None, str | None]:
        req = JudgeRequest(parts=[MediaPart(str(ctx.media), fps=ctx.config.evidence.fps, max_frames=64), TextPart(prompt)],
                           config=ctx.config.generate, task=task, inputs=inputs)
        out = await self.pool.ask(self.model, req)
        ctx.calls.append(out)
        if out.error or out.text is None:
            return None, out.error or "empty answer"
        return strip_thinking(out.text)[0].strip(), None

    async def detect(self, steps: list[StepLabel], i: int, ctx: ItemContext, question: str) -> StepLabel:
        description = await self.detector.grounding(ctx)
        fresh = steps[i].model_copy(update={"type": None, "modality": None, "faithful": None, "reason": None,
                                             "status": "labelled", "raw": None})
        steps[i] = fresh
        return await self.detector.label_step(steps, i, ctx, question, description)

    async def detector_view(self, steps: list[StepLabel], ctx: ItemContext, question: str,
                            options: list[str] | None) -> list[StepLabel]:
        """Every step labelled by the detector as the walk would check it (same requests: the
        walk's first checks of these steps are then served from the cache)."""
        dq = self.detector_question(question, options)
        description = await self.detector.grounding(ctx)
        n = min(len(steps), self.max_steps)
        await asyncio.gather(*(self.detector.label_step(steps, i, ctx, dq, description) for i in range(n)))
        for s in steps[n:]:
            s.status, s.reason = "error", "not checked: step cap reached"
        return steps

    def _regenerate_prompt(self, question: str, options: list[str] | None, prefix: str, attempt: int,
                           original: tuple[str, str], latest: tuple[str, str]) -> tuple[str, str]:
        """(template, rendered prompt) of one attempt; every attempt's prompt is distinct."""
        common = {"question": question or "(not given)", "options": options_block(options), "previous": prefix,
                  "cite_rule": self._rule()}
        if attempt == 1:
            return "reflect_regenerate", prompts.render("reflect_regenerate", rejected=original[0], reason=original[1],
                                                        **common)
        return "reflect_regenerate_again", prompts.render(
            "reflect_regenerate_again", attempt=attempt, original=original[0], original_reason=original[1],
            latest_attempt=attempt - 1, latest=latest[0], reason=latest[1], **common)

    async def run(self, item_id: str, text: str, ctx: ItemContext, question: str,
                  options: list[str] | None) -> tuple[ReflectTrace, list[StepLabel], str | None]:
        """Walk the chain; returns the trace, the final steps (with their last verdicts) and the answer line."""
        trace = ReflectTrace(id=item_id, original=text)
        walk = _Walk(self, trace, ctx, question, options, self.detector_question(question, options))
        pre = preprocess(text, len(options or []) or 10, options)
        walk.answer = pre.answer or None
        steps, _ = await self.detector.segment(pre.reasoning, ctx, "sentences")
        n_calls_before = len(ctx.calls)
        i = 0
        while i < len(steps):
            if i >= self.max_steps:
                trace.unchecked = len(steps) - i
                trace.stopped = (f"step cap reached (--max-steps {self.max_steps}): {trace.unchecked} later step(s) "
                                 "kept unchecked")
                for s in steps[i:]:
                    s.status, s.reason = "error", "not checked: step cap reached"
                break
            ev = await walk.check(steps, i)
            if ev.verdict == "unfaithful" and walk.may_regenerate(ev):
                await walk.regenerate(steps, i, ev)
                steps = await walk.continued(steps, i, ev)
            i += 1
        # calls the walk added beyond labelling the original chain (answers served from the cache are free)
        trace.calls = sum(1 for c in ctx.calls[n_calls_before:] if not c.cached)
        body = " ".join(s.text for s in steps)
        trace.final = f"{body}\n{walk.answer}" if walk.answer else body
        return trace, steps, walk.answer


@dataclass
class _Walk:
    """One chain being walked by a :class:`Reflector` (Algorithm 2, steps 1-3)."""

    r: Reflector
    trace: ReflectTrace
    ctx: ItemContext
    question: str
    options: list[str] | None
    dq: str  # the question as the detector sees it
    answer: str | None = None

    async def check(self, steps: list[StepLabel], i: int) -> StepEvent:
        """Step ``i`` checked by the detector (an undetermined check is counted)."""
        lab = await self.r.detect(steps, i, self.ctx, self.dq)
        ev = StepEvent(index=i, text=lab.text, verdict=verdict_of(lab), reason=lab.reason)
        self.trace.events.append(ev)
        if ev.verdict == "undetermined":
            self.trace.undetermined += 1
        return ev

    def may_regenerate(self, ev: StepEvent) -> bool:
        """Whether the item's regeneration budget allows another step to be regenerated."""
        r, trace = self.r, self.trace
        if trace.attempts < r.max_regenerations:
            return True
        ev.not_regenerated = f"regeneration cap reached (--max-regenerations {r.max_regenerations})"
        trace.not_regenerated += 1
        trace.stopped = trace.stopped or (f"regeneration cap reached (--max-regenerations {r.max_regenerations}): "
                                          "later unfaithful steps left as they are")
        return False

    async def regenerate(self, steps: list[StepLabel], i: int, ev: StepEvent) -> None:
        """Step ``i`` regenerated (≤ K attempts) until the detector accepts it; the last attempt is kept."""
        r, trace = self.r, self.trace
        trace.regenerations += 1
        original = (ev.text, ev.reason or "(no reason given)")
        latest = original
        prefix = "\n".join(s.text for s in steps[:i]) or "(no steps yet)"
        ev.resolved = False
        for attempt in range(1, r.k + 1):
            if trace.attempts >= r.max_regenerations:
                trace.stopped = f"regeneration cap reached (--max-regenerations {r.max_regenerations}) during step {i}"
                break
            template, prompt = r._regenerate_prompt(self.question, self.options, prefix, attempt, original, latest)
            trace.attempts += 1
            new_text, err = await r._ask_model(self.ctx, prompt, template, {"id": trace.id, "index": i,
                                                                           "attempt": attempt, "rejected": latest[0]})
            at = Attempt(attempt=attempt, text=new_text, error=err)
            ev.attempts.append(at)
            if err is not None or not new_text:
                at.verdict = "error"
                break
            steps[i] = r._step(i, " ".join(new_text.split()), self.ctx)
            lab2 = await r.detect(steps, i, self.ctx, self.dq)
            at.verdict, at.reason = verdict_of(lab2), lab2.reason
            if at.verdict in ("faithful", "reasoning"):
                ev.resolved = True
                trace.resolved_after[str(attempt)] = trace.resolved_after.get(str(attempt), 0) + 1
                break
            if at.verdict == "undetermined":
                trace.undetermined += 1
                break  # the detector cannot tell: stop regenerating, never call it faithful
            latest = (steps[i].text, lab2.reason or "(no reason given)")
        if not ev.resolved:
            trace.unresolved += 1

    async def continued(self, steps: list[StepLabel], i: int, ev: StepEvent) -> list[StepLabel]:
        """The chain continued by the model from r_1..r_i' (its later steps replace the old ones)."""
        r = self.r
        prefix_now = "\n".join(s.text for s in steps[: i + 1])
        cont, err = await r._ask_model(
            self.ctx, prompts.render("reflect_continue", question=self.question or "(not given)",
                                     options=options_block(self.options), prefix=prefix_now, cite_rule=r._rule()),
            "reflect_continue", {"id": self.trace.id, "index": i, "prefix": prefix_now})
        ev.continuation, ev.continuation_error = cont, err
        if cont is None:
            return steps
        cpre = preprocess(cont, len(self.options or []) or 10, self.options)
        rest, _ = await r.detector.segment(cpre.reasoning, self.ctx, "sentences")
        if cpre.answer:
            self.answer = cpre.answer
        return steps[: i + 1] + [r._step(i + 1 + k, s.text, self.ctx) for k, s in enumerate(rest)]


async def reflect_item(item_id: str, original: str, ctx: ItemContext, reflector: Reflector, judge: Labeller,
                       question: str, options: list[str] | None) -> tuple[dict[str, Any], ReflectTrace]:
    """Reflect one chain and measure it: the detector's view before/after and the judge's.

    Returns the ``traces.jsonl`` row (without answer correctness, which needs the gold) and the
    trace. ``before``/``after`` are the judge's counts (the figures the summary's UPR is made
    of); ``detector_before``/``detector_after`` are the detector's, the labels that drove the
    walk (after: each step's last verdict; steps past the step cap are undetermined).
    """
    n0 = len(ctx.calls)
    pre = preprocess(original, len(options or []) or 10, options)
    steps, _ = await reflector.detector.segment(pre.reasoning, ctx, "sentences")
    detector_before = await reflector.detector_view(fresh_steps(steps), ctx, question, options)
    n_before_calls = len(ctx.calls) - n0
    trace, final_steps, _answer = await reflector.run(item_id, original, ctx, question, options)
    n1 = len(ctx.calls)
    judged_before = await judge.label(fresh_steps(steps), ctx, question)
    judged_after = await judge.label(fresh_steps(final_steps), ctx, question)
    row: dict[str, Any] = {
        "id": item_id, "trace": trace.model_dump(),
        "before": counts(judged_before, item_id), "after": counts(judged_after, item_id),
        "detector_before": counts(detector_before, item_id), "detector_after": counts(final_steps, item_id),
        "judge_labels": {"before": step_view(judged_before), "after": step_view(judged_after)},
        "calls_before_labelling": n_before_calls, "extra_calls": trace.calls,
        "judge_calls": sum(1 for c in ctx.calls[n1:] if not c.cached),
        "cost_usd": sum(c.cost_usd for c in ctx.calls if not c.cached),
    }
    return row, trace
