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
  labelled as whole chains against the whole clip, where time and one-modality probes mean nothing
  and are skipped: :data:`~murgat.judging.probes.probeset.N_CHAINS` chains, one request each, every one
  holding every chain probe in an order drawn from the probe seed, so that a judge that labels by
  position (or always the same) fails some probe in some chain. The command passes its step
  record type (``StepLabel``): this layer sits below
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
from murgat.judging.probes.probeset import Probe, chain_orders
from murgat.judging.probes.tokens import Recorder, TokenAccount, carries_only, from_reported, from_twin, twin_of
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


#: what an answer cut off by the deadline says (``judge check`` names these probes)
UNFINISHED = "not finished before the probes' deadline"


async def bounded(coros: list[Any], deadline_s: float | None) -> list[Any]:
    """Run ``coros`` concurrently; with ``deadline_s``, those unfinished by then are cancelled and
    become unanswered :class:`Answer` s saying so (the check ends in bounded time)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    if not tasks:
        return []
    done, pending = await asyncio.wait(tasks, timeout=deadline_s)
    for t in pending:
        t.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    for t in done:  # every failure seen: the first is raised below, the others were printed at exit as unseen
        if not t.cancelled():
            t.exception()
    return [t.result() if t in done else Answer(verdict="error", error=f"{UNFINISHED} ({deadline_s:g} s)")
            for t in tasks]


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
                        screen=base.screen, sounds=base.sounds, voices=base.voices,
                        _info=info) for _ in range(n)]


class EntailPath:
    """The entailment question of ``score`` and ``program`` (see the module docstring)."""

    stage = "entail"

    def __init__(self, judge: Judge, cfg: JudgingConfig, pool: CallPool | None = None, *,
                 variant: Literal["simple", "json"] = "simple", deadline_s: float | None = None) -> None:
        self.judge = judge
        self.cfg = cfg
        self.pool = pool if pool is not None else CallPool()
        self.variant = variant
        #: seconds all of this path's probes may take (``judge check --deadline``); None: no bound
        self.deadline_s = deadline_s
        #: what the server's token counts said, once :meth:`ask_all` ran
        self.tokens: list[TokenAccount] = []

    def applies(self, probe: Probe) -> bool:
        return True

    def key(self) -> tuple[object, ...]:
        return (id(self.judge), self.stage, self.variant, self.cfg.evidence.model_dump_json(),
                self.cfg.generate.model_dump_json())

    async def ask_all(self, probes: list[Probe], clip: ProbeClip) -> list[Answer]:
        cfg = self.cfg
        # a run whose entail judge reads text has evidence text on (score forces it): so have its probes
        ctxs = await _contexts(cfg, clip, len(probes), bool(cfg.evidence.text))
        recorders = [Recorder(self.judge) for _ in probes]

        async def one(p: Probe, ctx: ItemContext, rec: Recorder) -> Answer:
            fact = AtomicFact(index=0, sentence_index=0, text=p.claim,
                              citations=_citations(p, ctx.durations, cfg.end_tolerance_s))
            try:
                verdict, call = await ask_entailment(self.pool, rec, fact, frozenset({0}), ctx,  # type: ignore[arg-type]
                                                     variant=self.variant)
            except ReplayMiss as exc:  # a cassette recorded without probes: this probe is unanswered, not the run
                return Answer(verdict="error", error=f"replay: {exc}")
            return Answer(verdict=str(verdict), raw=call.raw, error=call.error, outputs=list(ctx.calls))

        t0 = asyncio.get_running_loop().time()
        answers = list(await bounded([one(p, c, r) for p, c, r in zip(probes, ctxs, recorders, strict=True)],
                                     self.deadline_s))
        left = None if self.deadline_s is None else max(0.1, self.deadline_s - (asyncio.get_running_loop().time() - t0))
        self.tokens = await self._account(probes, answers, recorders, left)
        return answers

    async def _account(self, probes: list[Probe], answers: list[Answer], recorders: list[Recorder],
                       deadline_s: float | None) -> list[TokenAccount]:
        """The token account (:mod:`murgat.judging.probes.tokens`) of each modality, from the first probe whose
        request carried it alone: the provider's own count, else a twin request without the media."""
        out: list[TokenAccount] = []
        for modality in ("audio", "image"):
            pick = next(((p, a, r) for p, a, r in zip(probes, answers, recorders, strict=True)
                         if a.outputs and carries_only(a.outputs[-1], modality) and r.built is not None), None)
            if pick is None:
                continue
            p, a, r = pick
            last = a.outputs[-1]
            acc = from_reported(p.name, modality, last)
            if acc is None:
                assert r.built is not None
                try:
                    twin = await bounded([self.pool.ask(self.judge, twin_of(r.built))], deadline_s)
                    got: JudgeOutput | None = twin[0] if isinstance(twin[0], JudgeOutput) else None
                except ReplayMiss:
                    got = None
                acc = from_twin(p.name, modality, last, got)
            out.append(acc)
        return out


class FaithPath:
    """Step labelling of ``faithfulness`` and ``reflect`` through the run's labeller; ``step`` makes a
    step record (``murgat.core.steps.StepLabel``) from ``index``, ``text``, ``citations``."""

    def __init__(self, labeller: Any, cfg: JudgingConfig, step: Callable[..., Any], question: str = "", *,
                 deadline_s: float | None = None) -> None:
        self.labeller = labeller
        #: seconds all of this path's probes may take (``judge check --deadline``); None: no bound
        self.deadline_s = deadline_s
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
        if self.labeller.granularity != "step":
            return await self._chains(probes, clip, with_text)
        ctxs = await _contexts(cfg, clip, len(probes) + 1, with_text)
        steps = [self.step(index=i, text=f"{p.claim[:-1]} {p.citation}.",
                           citations=_citations(p, ctxs[0].durations, cfg.end_tolerance_s))
                 for i, p in enumerate(probes)]
        # what Labeller.label does per step (grounding once, then each step with its own evidence),
        # each step in its own context so that each probe keeps its own request
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        grounded = await bounded([self.labeller.grounding(ctxs[0])], self.deadline_s)
        if isinstance(grounded[0], Answer):  # the description itself ran past the deadline: no step was asked
            return [grounded[0] for _ in probes]
        left = None if self.deadline_s is None else max(0.1, self.deadline_s - (loop.time() - t0))
        done = await bounded([self.labeller.label_step(steps, i, ctxs[i + 1], self.question, grounded[0])
                              for i in range(len(steps))], left)
        shared = list(ctxs[0].calls)
        per = [list(c.calls) for c in ctxs[1:]]
        answers: list[Answer] = []
        for k, s in enumerate(steps):
            if isinstance(done[k], Answer):  # cut off by the deadline
                answers.append(done[k])
                continue
            verdict = _step_verdict(s)
            # the requests behind the answers: each step's own; the grounding description is counted
            # once, on the first probe
            answers.append(Answer(verdict=verdict, raw=clip_answer(s.raw), error=s.reason if verdict == "error" else None,
                                  outputs=(shared if k == 0 else []) + per[k]))
        return answers

    async def _chains(self, probes: list[Probe], clip: ProbeClip, with_text: bool) -> list[Answer]:
        """Per chain: the probes labelled as chains in seeded orders (:func:`chain_orders`), each
        chain one request; a probe passes only when every chain gave it the expected answer."""
        orders = chain_orders(probes, clip.seed)
        ctxs = await _contexts(self.cfg, clip, len(orders), with_text)
        cites = [_citations(p, ctxs[0].durations, self.cfg.end_tolerance_s) for p in probes]
        chains = [[self.step(index=pos, text=f"{probes[i].claim[:-1]} {probes[i].citation}.", citations=cites[i])
                   for pos, i in enumerate(order)] for order in orders]
        done = await bounded([self.labeller.label(steps, ctx, self.question)
                              for steps, ctx in zip(chains, ctxs, strict=True)], self.deadline_s)
        cut = next((d for d in done if isinstance(d, Answer)), None)
        if cut is not None:  # a chain ran past the deadline: each probe lacks one of its answers
            return [cut for _ in probes]
        got: list[list[tuple[str, Any]]] = [[] for _ in probes]
        for order, steps in zip(orders, chains, strict=True):
            for pos, i in enumerate(order):
                got[i].append((_step_verdict(steps[pos]), steps[pos]))
        shared = [o for c in ctxs for o in c.calls]  # the chain requests, counted once, on the first probe
        answers = []
        for k, (p, seen) in enumerate(zip(probes, got, strict=True)):
            verdict, step = _worst(p.expected, seen)
            raw = "; ".join(f"chain {c + 1}: {clip_answer(st.raw) or v}" for c, (v, st) in enumerate(seen))
            answers.append(Answer(verdict=verdict, raw=raw, error=step.reason if verdict == "error" else None,
                                  outputs=shared if k == 0 else []))
        return answers


def _step_verdict(s: Any) -> str:
    """A labelled probe step read as a probe answer."""
    if s.status == "error":
        return "error"
    if s.status == "unparseable":
        return "unparseable"
    if s.type != "perception" or s.faithful is None:
        return "unknown"
    return "yes" if s.faithful else "no"


def _worst(expected: str, seen: list[tuple[str, Any]]) -> tuple[str, Any]:
    """One answer for a probe asked in several chains: the expected one only when every chain gave
    it; else a wrong yes/no before an abstention before an unread answer (a judge right in one
    chain and wrong in another answers by something other than the media)."""
    rank = {"yes": 0, "no": 0, "unknown": 1, "unparseable": 2, "error": 3}
    wrong = [(v, st) for v, st in seen if v != expected]
    return min(wrong, key=lambda x: rank.get(x[0], 4)) if wrong else seen[0]
