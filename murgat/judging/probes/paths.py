"""How a probe is asked: through the very functions a run asks its judge with.

* :class:`EntailPath` — the entailment question (:func:`murgat.judging.entail.ask_entailment`) that
  ``score``'s stages, ``program``'s runtime check and ``program --score`` ask: the run's
  configuration (evidence settings, generation settings; ``variant`` = ``--entail-variant``), the
  run's judge object (provider options, endpoint, response cache), the run's text channels when the
  judge reads ASR/OCR text (:func:`murgat.judging.channels.text_channels`). A probe is one fact with
  one citation, so it is exactly one request, keyed and cached like any other.
* :class:`FaithPath` — ``faithfulness``' and ``reflect``'s step labelling, through the run's own
  labeller (:class:`murgat.judging.steps.Labeller`: its variant, step prompt, granularity and
  grounding description). Per step (``--granularity step``, and reflect's detector) each probe is
  one step labelled against its cited segment; per chain (``faithfulness``' default) the steps are
  labelled in one request against the whole clip, where time and one-modality probes mean nothing
  and are skipped. The command passes its step record type (``StepLabel``): this layer sits below
  the commands and knows none of them.

A path never changes what it is given: a run's probes are its own requests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from murgat.core.citations import check_durations, parse_citations
from murgat.core.schema import AtomicFact, Citation
from murgat.judges.base import Judge
from murgat.judges.parsing import clip_answer
from murgat.judges.replay import ReplayMiss
from murgat.judges.types import JudgeOutput
from murgat.judging.channels import text_channels
from murgat.judging.config import JudgingConfig
from murgat.judging.context import ItemContext
from murgat.judging.entail import ask_entailment
from murgat.judging.pool import CallPool
from murgat.judging.probes.clip import ProbeClip
from murgat.judging.probes.probeset import Probe
from murgat.media.streams import probe as probe_media


@dataclass
class Answer:
    """A probe's answer as the run would read it, and the judge outputs behind it."""

    verdict: str
    raw: str | None = None
    error: str | None = None
    outputs: list[JudgeOutput] = field(default_factory=list)


class ProbePath(Protocol):
    """One judge asked one way."""

    judge: Judge
    stage: str
    #: the call pool the path's requests go through (a run counts them with its own)
    pool: CallPool

    def applies(self, probe: Probe) -> bool: ...

    def key(self) -> tuple[object, ...]:
        """What makes two paths the same questions: the judge object and how it is asked."""
        ...

    async def ask_all(self, probes: list[Probe], clip: ProbeClip) -> list[Answer]: ...


def _citations(probe: Probe, durations: dict[str, float | None], tolerance: float) -> list[Citation]:
    cites = check_durations(parse_citations(probe.citation), durations, tolerance)
    if len(cites) != 1 or not cites[0].valid:
        raise ValueError(f"probe {probe.name}: citation {probe.citation!r} does not read as one valid citation")
    return cites


async def _contexts(cfg: JudgingConfig, clip: ProbeClip, n: int, with_text: bool) -> list[ItemContext]:
    """``n`` item contexts of the clip (one per probe: each keeps its own calls), sharing the text
    channels a run builds for an item (ASR words, OCR, sound tags) when the judge reads them."""
    info = await asyncio.to_thread(probe_media, clip.path)
    base = ItemContext(media=Path(clip.path), durations=info.durations(), config=cfg, _info=info)
    await text_channels(base, cfg, with_text)
    return [ItemContext(media=base.media, durations=base.durations, config=cfg, transcript=base.transcript,
                        screen=base.screen, sounds=base.sounds, _info=info) for _ in range(n)]


class EntailPath:
    """The entailment question of ``score`` and ``program`` (see the module docstring)."""

    stage = "entail"

    def __init__(self, judge: Judge, cfg: JudgingConfig, pool: CallPool | None = None, *,
                 variant: Literal["simple", "json"] = "simple") -> None:
        self.judge = judge
        self.cfg = cfg
        self.pool = pool if pool is not None else CallPool()
        self.variant = variant

    def applies(self, probe: Probe) -> bool:
        return True

    def key(self) -> tuple[object, ...]:
        return (id(self.judge), self.stage, self.variant, self.cfg.evidence.model_dump_json(),
                self.cfg.generate.model_dump_json())

    async def ask_all(self, probes: list[Probe], clip: ProbeClip) -> list[Answer]:
        cfg = self.cfg
        # a run whose entail judge reads text has evidence text on (score forces it): so have its probes
        ctxs = await _contexts(cfg, clip, len(probes), bool(cfg.evidence.text))

        async def one(p: Probe, ctx: ItemContext) -> Answer:
            fact = AtomicFact(index=0, sentence_index=0, text=p.claim,
                              citations=_citations(p, ctx.durations, cfg.end_tolerance_s))
            try:
                verdict, call = await ask_entailment(self.pool, self.judge, fact, frozenset({0}), ctx,
                                                     variant=self.variant)
            except ReplayMiss as exc:  # a cassette recorded without probes: this probe is unanswered, not the run
                return Answer(verdict="error", error=f"replay: {exc}")
            return Answer(verdict=str(verdict), raw=call.raw, error=call.error, outputs=list(ctx.calls))

        return list(await asyncio.gather(*(one(p, c) for p, c in zip(probes, ctxs, strict=True))))


class FaithPath:
    """Step labelling of ``faithfulness`` and ``reflect`` through the run's labeller; ``step`` makes a
    step record (``murgat.core.steps.StepLabel``) from ``index``, ``text``, ``citations``."""

    def __init__(self, labeller: Any, cfg: JudgingConfig, step: Callable[..., Any], question: str = "") -> None:
        self.labeller = labeller
        self.judge: Judge = labeller.judge
        self.cfg = cfg
        self.step = step
        self.question = question
        self.pool: CallPool = labeller.pool
        # the request task asked: faith_step / faith_chain, or the step prompt per step (reflect's detector
        # asks faith_detect)
        prompt = getattr(labeller, "step_prompt", "faith_step")
        self.stage = prompt if labeller.granularity == "step" and prompt != "faith_step" else f"faith_{labeller.granularity}"

    def applies(self, probe: Probe) -> bool:
        return self.labeller.granularity == "step" or probe.whole_media

    def key(self) -> tuple[object, ...]:
        lab = self.labeller
        return (id(self.judge), self.stage, lab.variant, lab.max_frames, self.question,
                self.cfg.evidence.model_dump_json(), self.cfg.generate.model_dump_json())

    async def ask_all(self, probes: list[Probe], clip: ProbeClip) -> list[Answer]:
        cfg = self.cfg
        with_text = bool(cfg.evidence.text or cfg.evidence_text or self.judge.needs_evidence_text)
        per_step = self.labeller.granularity == "step"
        ctxs = await _contexts(cfg, clip, len(probes) + 1 if per_step else 1, with_text)
        steps = [self.step(index=i, text=f"{p.claim[:-1]} {p.citation}.",
                           citations=_citations(p, ctxs[0].durations, cfg.end_tolerance_s))
                 for i, p in enumerate(probes)]
        if per_step:
            # what Labeller.label does per step (grounding once, then each step with its own evidence),
            # each step in its own context so that each probe keeps its own request
            description = await self.labeller.grounding(ctxs[0])
            await asyncio.gather(*(self.labeller.label_step(steps, i, ctxs[i + 1], self.question, description)
                                   for i in range(len(steps))))
            shared = list(ctxs[0].calls)
            per = [list(c.calls) for c in ctxs[1:]]
        else:
            await self.labeller.label(steps, ctxs[0], self.question)
            shared, per = list(ctxs[0].calls), [[] for _ in steps]
        answers = []
        for k, s in enumerate(steps):
            if s.status == "error":
                verdict = "error"
            elif s.status == "unparseable":
                verdict = "unparseable"
            elif s.type != "perception" or s.faithful is None:
                verdict = "unknown"
            else:
                verdict = "yes" if s.faithful else "no"
            # the requests behind the answers: each step's own; the grounding description and the one
            # chain request are counted once, on the first probe
            answers.append(Answer(verdict=verdict, raw=clip_answer(s.raw), error=s.reason if verdict == "error" else None,
                                  outputs=(shared if k == 0 else []) + per[k]))
        return answers
