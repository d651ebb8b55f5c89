"""Self-reflection (Algorithm 2): repair the first unfaithful perception step, then continue.

For one chain R = r1..rT about a video:

1. check the steps in order with the detector;
2. at the first unfaithful perception step r_i, ask the model to regenerate r_i (the
   question, the media, r_1..r_{i-1}, the rejected step and the detector's reason), until the
   detector accepts it or K attempts are used (an unresolved step keeps its last attempt,
   marked, and the process goes on);
3. give r_1..r_i' back to the model to continue the rest of the chain (a continuation prompt:
   murgat's judge interface has no assistant prefill), and resume checking from r_{i+1};
4. stop after the last step.

A step the detector cannot label (unparseable answer, provider error) is never treated as
faithful: it is recorded as undetermined, left as it is, and checking goes on. Detectors: a
judge labelling steps (the faithfulness labeller, per step) or ``self`` (the model assesses
its own step with the vanilla prompt — the weak baseline of the method).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

import prompts
from murgat.citations import check_durations, parse_citations
from murgat.faithfulness.label import Labeller
from murgat.faithfulness.records import StepLabel
from murgat.judges.base import Judge
from murgat.judges.types import JudgeRequest, MediaPart, TextPart
from murgat.pipeline.stages import CallPool, ItemContext
from murgat.text import preprocess, strip_thinking

MAX_STEPS = 200  # continuations may add steps; a chain never grows past this


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
    continuation: str | None = None
    continuation_error: str | None = None


class ReflectTrace(BaseModel):
    id: str
    original: str
    final: str = ""
    events: list[StepEvent] = Field(default_factory=list)
    regenerations: int = 0
    resolved_after: dict[str, int] = Field(default_factory=dict, description="attempts used → count of resolved steps")
    unresolved: int = 0
    undetermined: int = 0
    calls: int = 0
    error: str | None = None


def verdict_of(step: StepLabel) -> str:
    if step.status != "labelled" or (step.type == "perception" and step.faithful is None):
        return "undetermined"
    if step.type == "reasoning":
        return "reasoning"
    return "faithful" if step.faithful else "unfaithful"


@dataclass
class Reflector:
    model: Judge
    detector: Labeller
    pool: CallPool
    k: int = 3
    cite: bool = False

    def _opts(self, options: list[str] | None) -> str:
        return ("Options:\n" + "\n".join(f"({chr(65 + i)}) {o}" for i, o in enumerate(options))) if options else ""

    def _rule(self) -> str:
        return (", ending each observed fact with its evidence as (visual, MM:SS) or (audio, MM:SS-MM:SS)"
                if self.cite else "")

    def _step(self, i: int, text: str, ctx: ItemContext) -> StepLabel:
        cites = check_durations(parse_citations(text), ctx.durations, ctx.config.end_tolerance_s)
        return StepLabel(index=i, text=text, citations=cites)

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

    async def run(self, item_id: str, text: str, ctx: ItemContext, question: str,
                  options: list[str] | None) -> tuple[ReflectTrace, list[StepLabel], str | None]:
        """Walk the chain; returns the trace, the final steps (with their last verdicts) and the answer line."""
        trace = ReflectTrace(id=item_id, original=text)
        pre = preprocess(text, len(options or []) or 10)
        answer = pre.answer or None
        steps, _ = await self.detector.segment(pre.reasoning, ctx, "sentences")
        n_calls_before = len(ctx.calls)
        i = 0
        while i < len(steps) and i < MAX_STEPS:
            lab = await self.detect(steps, i, ctx, question)
            ev = StepEvent(index=i, text=lab.text, verdict=verdict_of(lab), reason=lab.reason)
            trace.events.append(ev)
            if ev.verdict == "undetermined":
                trace.undetermined += 1
            if ev.verdict != "unfaithful":
                i += 1
                continue
            trace.regenerations += 1
            rejected, reason = lab.text, lab.reason or "(no reason given)"
            prefix = "\n".join(s.text for s in steps[:i]) or "(no steps yet)"
            ev.resolved = False
            for attempt in range(1, self.k + 1):
                prompt = prompts.render("reflect_regenerate", question=question or "(not given)",
                                        options=self._opts(options), previous=prefix, rejected=rejected, reason=reason,
                                        cite_rule=self._rule())
                new_text, err = await self._ask_model(ctx, prompt, "reflect_regenerate",
                                                      {"id": item_id, "index": i, "attempt": attempt, "rejected": rejected})
                at = Attempt(attempt=attempt, text=new_text, error=err)
                ev.attempts.append(at)
                if err is not None or not new_text:
                    at.verdict = "error"
                    break
                steps[i] = self._step(i, " ".join(new_text.split()), ctx)
                lab2 = await self.detect(steps, i, ctx, question)
                at.verdict, at.reason = verdict_of(lab2), lab2.reason
                if at.verdict in ("faithful", "reasoning"):
                    ev.resolved = True
                    trace.resolved_after[str(attempt)] = trace.resolved_after.get(str(attempt), 0) + 1
                    break
                if at.verdict == "undetermined":
                    break  # the detector cannot tell: stop regenerating, never call it faithful
                rejected, reason = steps[i].text, lab2.reason or "(no reason given)"
            if not ev.resolved:
                trace.unresolved += 1
            # continue the chain from r_1..r_i'
            prefix_now = "\n".join(s.text for s in steps[: i + 1])
            cont, err = await self._ask_model(
                ctx, prompts.render("reflect_continue", question=question or "(not given)", options=self._opts(options),
                                    prefix=prefix_now, cite_rule=self._rule()),
                "reflect_continue", {"id": item_id, "index": i, "prefix": prefix_now})
            ev.continuation, ev.continuation_error = cont, err
            if cont is not None:
                cpre = preprocess(cont, len(options or []) or 10)
                rest, _ = await self.detector.segment(cpre.reasoning, ctx, "sentences")
                steps = steps[: i + 1] + [self._step(i + 1 + k, s.text, ctx) for k, s in enumerate(rest)]
                if cpre.answer:
                    answer = cpre.answer
            i += 1
        # calls the walk added beyond labelling the original chain (answers served from the cache are free)
        trace.calls = sum(1 for c in ctx.calls[n_calls_before:] if not c.cached)
        body = " ".join(s.text for s in steps)
        trace.final = f"{body}\n{answer}" if answer else body
        return trace, steps, answer
