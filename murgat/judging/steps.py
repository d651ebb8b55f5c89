"""Segmenting chains into steps and labelling each step (type, modality, faithfulness).

Evidence for a step: its cited segments when it cites (valid citations only, the same
evidence builder ``score`` uses), otherwise the whole media — frames sampled across the
video within ``max_frames`` and the whole sound track. Prompt variants:

* ``vanilla`` — the step and the evidence;
* ``grounding`` (default) — the judge first writes a detailed description of the media
  (one call per media file, reused for every step and response about it: memoised in the
  run and stored in the response cache), which is put in front of every question;
* ``grounding+rationale`` — as ``grounding``, and the judge writes its rationale before the
  labels.

Step prompts (``step_prompt``, per-step labelling only): ``faith_step`` (default, what
``murgat faithfulness`` labels with: false when any part of a perception step is not there)
or ``faith_detect`` (the self-reflection detector's: question-aware, a perception step is
flagged only when the wrong detail matters to the question, minor slips are ignored — it
drives regenerations, where flagging a harmless slip costs calls and rewrites good steps).

Granularity: ``chain`` (one call labels every step; cheap, the default) or ``step`` (one
call per step with that step's own evidence; precise). An answer that cannot be read is
``unparseable`` and an answer that never came is ``error``; neither counts as faithful.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from murgat import prompts
from murgat.core.citations import check_durations, make_citation, parse_citations
from murgat.core.steps import StepLabel
from murgat.judges.base import Judge
from murgat.judges.evidence import evidence_parts
from murgat.judges.parsing import clip_answer, parse_json_answer, shared_answer_note
from murgat.judges.types import JudgeRequest, Part, TextPart
from murgat.judging.context import ItemContext
from murgat.judging.pool import CallPool
from murgat.judging.sentences import sentences_of
from murgat.media.evidence import build_evidence

Variant = Literal["vanilla", "grounding", "grounding+rationale"]
VARIANTS: tuple[str, ...] = ("vanilla", "grounding", "grounding+rationale")
#: per-step prompts by their option name (``murgat reflect --detector-prompt``)
STEP_PROMPTS: dict[str, str] = {"detect": "faith_detect", "label": "faith_step"}
STEP_SCHEMA = {
    "type": "object",
    "properties": {"rationale": {"type": "string"}, "type": {"type": "string", "enum": ["perception", "reasoning"]},
                   "modality": {"type": ["string", "null"]}, "faithful": {"type": ["boolean", "null"]},
                   "reason": {"type": "string"}},
    "required": ["type"],
}
CHAIN_SCHEMA = {"type": "object", "properties": {"steps": {"type": "array", "items": STEP_SCHEMA}}, "required": ["steps"]}
SEGMENT_SCHEMA = {"type": "object", "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
                  "required": ["steps"]}

_FORMAT = ('Answer with JSON only: {"type": "perception" or "reasoning", "modality": "visual", "audio", "both" or null, '
           '"faithful": true, false or null, "reason": "a few words"}')
_FORMAT_RATIONALE = ('Answer with JSON only, writing the rationale first: {"rationale": "what the evidence shows that bears '
                     'on the step", "type": "perception" or "reasoning", "modality": "visual", "audio", "both" or null, '
                     '"faithful": true, false or null, "reason": "a few words"}')
_CHAIN_FORMAT = ('Answer with JSON only: {"steps": [{"index": 0, "type": ..., "modality": ..., "faithful": ..., '
                 '"reason": "a few words"}, ...]} with one entry per step, in order.')
_CHAIN_FORMAT_RATIONALE = ('Answer with JSON only: {"steps": [{"index": 0, "rationale": "what the evidence shows", '
                           '"type": ..., "modality": ..., "faithful": ..., "reason": "a few words"}, ...]} with one '
                           'entry per step, in order.')


@dataclass
class Labeller:
    """Labels steps of chains about one media file's items (holds the grounding memo)."""

    judge: Judge
    pool: CallPool
    variant: str = "grounding"
    granularity: str = "chain"
    max_frames: int = 16
    step_prompt: str = "faith_step"
    _grounding: dict[str, asyncio.Future[str | None]] = field(default_factory=dict)

    # ----- evidence -----
    def whole_media_parts(self, ctx: ItemContext) -> list[Part]:
        cites = []
        for mod in ("visual", "audio"):
            dur = ctx.durations.get(mod)
            if dur:
                cites.append(make_citation(mod, 0.0, dur))
        cfg = ctx.config.evidence
        vdur = ctx.durations.get("visual") or 0.0
        if vdur:
            cfg = cfg.model_copy(update={"fps": max(self.max_frames / vdur, 1e-3), "max_frames": self.max_frames})
        ev = ctx.fitted(build_evidence(ctx.media, cites, cfg, transcript=ctx.transcript, screen=ctx.screen,
                                       limits=ctx.limits))  # a long file's audio sampled, never sent whole
        return evidence_parts(ev, ctx.config.evidence_text or self.judge.needs_evidence_text)

    async def _whole(self, ctx: ItemContext) -> list[Part]:
        return await asyncio.to_thread(self.whole_media_parts, ctx)

    async def grounding(self, ctx: ItemContext) -> str | None:
        """The judge's description of the media, once per file in this run (and cached across runs)."""
        if not self.variant.startswith("grounding"):
            return None
        key = str(ctx.media)
        fut = self._grounding.get(key)
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self._grounding[key] = fut
            try:
                parts = [TextPart(prompts.render("faith_describe")), *(await self._whole(ctx))]
                req = JudgeRequest(parts=parts, config=ctx.config.generate, task="faith_describe",
                                   inputs={"media": ctx.media.name})
                out = await self.pool.ask(self.judge, req)
                ctx.calls.append(out)
                fut.set_result(None if out.error else (out.text or "").strip() or None)
            except BaseException as exc:
                self._grounding.pop(key, None)
                if isinstance(exc, asyncio.CancelledError):  # the run stops: the memo stops with it, and a
                    fut.cancel()  # cancelled future is no "exception never retrieved" at exit
                else:
                    fut.set_exception(exc)  # items waiting on this file get it; this one raises it
                    fut.exception()  # seen here: asyncio need not report it again when nobody else waited
                raise
        return await asyncio.shield(fut)

    def _grounding_block(self, description: str | None) -> str:
        if not description:
            return ""
        return ("\n\nA detailed description of this video, written beforehand by looking at it:\n"
                f"{description}\n\nUse it together with the evidence given below.")

    # ----- segmentation -----
    async def segment(self, text: str, ctx: ItemContext, how: str) -> tuple[list[StepLabel], str | None]:
        """Steps of ``text`` (citations parsed and checked); a note when the judge's split was unusable."""
        sents = sentences_of(text, ctx.durations, ctx.config.end_tolerance_s)
        by_sentences = [StepLabel(index=i, text=s.text, citations=s.citations) for i, s in enumerate(sents)]
        if how == "sentences" or not text.strip():
            return by_sentences, None
        req = JudgeRequest(parts=[TextPart(prompts.render("faith_segment", chain=text))], schema=SEGMENT_SCHEMA,
                           config=ctx.config.generate, task="faith_segment", inputs={"chain": text})
        out = await self.pool.ask(self.judge, req)
        ctx.calls.append(out)
        value = out.parsed if out.parsed is not None else parse_json_answer(out.text)[0]
        steps = value.get("steps") if isinstance(value, dict) else None
        if out.error or not isinstance(steps, list) or not steps or not all(isinstance(x, str) and x.strip() for x in steps):
            why = out.error or "unparseable segmentation"
            return by_sentences, f"judge segmentation unusable ({why}); sentences used"
        return [StepLabel(index=i, text=t.strip(), citations=check_durations(parse_citations(t), ctx.durations,
                                                                            ctx.config.end_tolerance_s))
                for i, t in enumerate(steps)], None

    # ----- labelling -----
    async def label(self, steps: list[StepLabel], ctx: ItemContext, question: str) -> list[StepLabel]:
        if not steps:
            return steps
        description = await self.grounding(ctx)
        if self.granularity == "step":
            await asyncio.gather(*(self.label_step(steps, i, ctx, question, description) for i in range(len(steps))))
            return steps
        await self._label_chain(steps, ctx, question, description)
        return steps

    async def label_step(self, steps: list[StepLabel], i: int, ctx: ItemContext, question: str,
                         description: str | None, *, task: str | None = None) -> StepLabel:
        """Label step ``i`` with its own evidence (cited segments, else the whole media), asking
        with ``step_prompt`` (the request's task is the prompt's name unless ``task`` is given)."""
        step = steps[i]
        valid = [c for c in step.citations if c.valid]
        if valid:
            ev = ctx.fitted(await asyncio.to_thread(ctx.evidence_for, valid, list(range(len(valid)))))
            parts = evidence_parts(ev, ctx.config.evidence_text or self.judge.needs_evidence_text)
            step.evidence = "cited segments"
        else:
            parts = await self._whole(ctx)
            step.evidence = "whole media"
        context = "\n".join(f"{s.index}. {s.text}" for s in steps[:i]) or "(none)"
        rationale = self.variant == "grounding+rationale"
        prompt = prompts.render(self.step_prompt, grounding=self._grounding_block(description), question=question or "(not given)",
                                context=context, step=step.text, answer_format=_FORMAT_RATIONALE if rationale else _FORMAT)
        req = JudgeRequest(parts=[TextPart(prompt), *parts], schema=STEP_SCHEMA, config=ctx.config.generate,
                           task=task or self.step_prompt,
                           inputs={"step": step.text, "index": i})
        out = await self.pool.ask(self.judge, req)
        ctx.calls.append(out)
        step.raw = clip_answer(out.text)
        if out.error:
            step.status, step.reason = "error", out.error
            return step
        value = out.parsed if out.parsed is not None else parse_json_answer(out.text)[0]
        apply_label(step, value)
        return step

    async def _label_chain(self, steps: list[StepLabel], ctx: ItemContext, question: str, description: str | None) -> None:
        parts = await self._whole(ctx)
        rationale = self.variant == "grounding+rationale"
        listing = "\n".join(f"{s.index}. {s.text}" for s in steps)
        prompt = prompts.render("faith_chain", grounding=self._grounding_block(description),
                                question=question or "(not given)", steps=listing,
                                answer_format=_CHAIN_FORMAT_RATIONALE if rationale else _CHAIN_FORMAT)
        req = JudgeRequest(parts=[TextPart(prompt), *parts], schema=CHAIN_SCHEMA, config=ctx.config.generate,
                           task="faith_chain", inputs={"steps": [s.text for s in steps]})
        out = await self.pool.ask(self.judge, req)
        ctx.calls.append(out)
        for k, s in enumerate(steps):  # the chain's one answer is kept once (clipped), on the first step
            s.evidence = "whole media"
            s.raw = clip_answer(out.text) if k == 0 else shared_answer_note("step", steps[0].index)
        if out.error:
            for s in steps:
                s.status, s.reason = "error", out.error
            return
        value = out.parsed if out.parsed is not None else parse_json_answer(out.text)[0]
        rows = value.get("steps") if isinstance(value, dict) else value if isinstance(value, list) else None
        if not isinstance(rows, list):
            for s in steps:
                s.status, s.reason = "unparseable", "answer has no list of steps"
            return
        by_index: dict[int, Any] = {}
        for k, row in enumerate(rows):
            idx = row.get("index", k) if isinstance(row, dict) else k
            by_index[idx if isinstance(idx, int) else k] = row
        for s in steps:
            apply_label(s, by_index.get(s.index))


def apply_label(step: StepLabel, value: Any) -> None:
    """Read one label object into ``step``; anything malformed leaves it ``unparseable``."""
    if not isinstance(value, dict):
        step.status, step.reason = "unparseable", "no label object for this step"
        return
    kind = str(value.get("type", "")).strip().lower()
    if kind not in ("perception", "reasoning"):
        step.status, step.reason = "unparseable", f"type {value.get('type')!r} is neither perception nor reasoning"
        return
    step.type = kind  # type: ignore[assignment]
    step.reason = str(value.get("reason") or value.get("rationale") or "")[:500] or None
    step.status = "labelled"
    if kind == "reasoning":
        step.modality, step.faithful = None, None
        return
    mod = str(value.get("modality") or "").strip().lower()
    step.modality = mod if mod in ("visual", "audio", "both") else None  # type: ignore[assignment]
    f = value.get("faithful")
    if isinstance(f, str) and f.strip().lower() in ("true", "false", "yes", "no"):
        f = f.strip().lower() in ("true", "yes")
    if not isinstance(f, bool):
        step.status, step.reason = "unparseable", f"faithful {value.get('faithful')!r} is not true/false"
        step.faithful = None
        return
    step.faithful = f
