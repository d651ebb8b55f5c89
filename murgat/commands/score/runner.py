"""One response scored (:func:`score_item`), ``score``'s item task (:class:`ScoreTask`) and the
run's summary.

Failure policy: a bad item (missing or corrupt media, unreadable input; a response over
``--max-response-chars`` is marked by the loader and given its error record by the engine)
becomes an error record and the run goes on; an answer that cannot be read is unknown
(``correct`` null, ``answer_problem`` says why), never wrong; a judge that cannot answer leaves the affected facts
undetermined (reported apart); a replay cassette miss stops the run loudly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from murgat.commands.score.repeats import Repeats, repeat_summary
from murgat.commands.score.stages import (
    BOX_CHECK_STAGES,
    StageJudges,
    attach_citations,
    box_check_counts,
    box_check_summary,
    decompose,
    decompose_response,
    decontextualize,
    entail_fact,
    first_judge_failure,
    verify,
)
from murgat.core.aio import gather_all
from murgat.core.answers import grade
from murgat.core.breakdown import Breakdown, breakdown, item_fields, record_fields
from murgat.core.metric import FactScore, ResponseFigures, modality_figures, score_response, summarize_results
from murgat.core.schema import AtomicFact, FactVerdict, Item, ResponseResult, RunSummary, Scores, Sentence, SentenceResult
from murgat.core.text import preprocess
from murgat.engine.folder import RunFolder
from murgat.engine.loop import plan_work, run_items
from murgat.engine.outcome import ItemFailure
from murgat.engine.preflight import ItemMediaError, MediaPlace, open_media
from murgat.judges.parsing import shared_answer_note
from murgat.judging.channels import text_channels
from murgat.judging.context import ItemContext
from murgat.judging.entail import OVER_LIMIT
from murgat.judging.pool import CallPool
from murgat.judging.sentences import sentences_of
from murgat.media.errors import MediaError
from murgat.media.limits import EvidenceNote, count_notes
from murgat.media.streams import ProbeResult
from murgat.settings.score_resolved import ScoreConfig

log = logging.getLogger("murgat.score")

#: how a fact left undetermined by an unusable decomposition is recognised (``undetermined_causes``)
DECOMPOSITION = "decomposition: "

#: one decomposed sentence: (fact texts or None when unusable, raw answer, problem)
Decomposed = tuple[list[str] | None, str | None, str | None]
Judged = list[tuple[FactVerdict, FactScore]]


def decompose_context(sents: Sequence[Any], i: int, n_sentences: int, n_chars: int) -> str:
    """The text before sentence ``i`` a decomposer sees: at most ``n_sentences`` sentences and
    ``n_chars`` characters (the end is kept, since the nearest sentences resolve references).

    Bounded on purpose: the whole prefix made cost and memory quadratic in response length.
    """
    if n_sentences <= 0 or n_chars <= 0:
        return ""
    text = " ".join(s.text for s in sents[max(0, i - n_sentences) : i])
    if len(text) > n_chars:
        cut = text[-n_chars:]
        space = cut.find(" ")
        text = "…" + (cut[space + 1 :] if 0 <= space < 40 else cut)
    return text


def fail(rr: ResponseResult, failure: ItemFailure) -> ResponseResult:
    rr.error, rr.error_kind = failure.line, failure.kind
    return rr


@dataclass
class _Scoring:
    """One response being scored: its record, sentences, media context and judges."""

    rr: ResponseResult
    cfg: ScoreConfig
    judges: StageJudges
    pool: CallPool
    ctx: ItemContext
    #: ``--repeats`` over 1: each yes/no question asked K times (:mod:`murgat.commands.score.repeats`)
    repeats: Repeats | None = None

    def decomposed(self, sr: SentenceResult) -> bool:
        """Whether the sentence's facts are needed: it is cited and verifiable (with repeats: for some repeat)."""
        verifiable = sr.verifiable or (self.repeats is not None and self.repeats.any_verifiable(sr))
        return bool(verifiable and sr.sentence.citations)

    async def facts_of(self, sr: SentenceResult, out: Decomposed) -> Judged:
        """Facts of one decomposed sentence, entailed at once (local indices, renumbered later)."""
        texts, raw, problem = out
        sr.decompose_raw = raw
        if texts is not None and not any(str(t).strip() for t in texts):
            # a verifiable cited sentence has at least one claim: an empty split is the
            # decomposer failing, not a response with nothing to check (never a silent 0)
            texts, problem = None, "the decomposer returned no facts for a verifiable cited sentence"
            self.rr.n_empty_decompositions += 1
        if texts is None:
            return _undecomposed(sr, problem)
        facts, notes = attach_citations(sr.sentence, texts, 0)
        sr.facts = facts
        sr.notes.extend(notes)
        entail = entail_fact if self.repeats is None else self.repeats.entail
        return await gather_all(*(entail(self.pool, self.judges.entail, f, self.cfg, self.ctx)
                                  for f in facts if f.citations))

    async def verified(self, sr: SentenceResult) -> None:
        ask = verify if self.repeats is None else self.repeats.verify
        verdict, raw = await ask(self.pool, self.judges.verify, sr.sentence, self.cfg, self.ctx)
        sr.verify_verdict, sr.verify_raw = verdict, raw
        sr.verifiable = True if verdict == "yes" else False if verdict == "no" else None

    async def by_response(self, results: list[SentenceResult]) -> dict[int, Judged]:
        """One decomposition call for the whole response: it needs every verifiability answer first."""
        await gather_all(*(self.verified(sr) for sr in results))
        vc = [sr for sr in results if self.decomposed(sr)]
        if not vc:
            return {}
        by_idx, raw, problem = await decompose_response(self.pool, self.judges.decompose, [sr.sentence for sr in vc],
                                                        self.cfg, self.ctx)
        # the one answer is kept once, on the first sentence; the others point to it
        outs = [(by_idx.get(sr.sentence.index), raw if k == 0 else shared_answer_note("sentence", vc[0].sentence.index),
                 problem or (None if sr.sentence.index in by_idx else "sentence missing in answer"))
                for k, sr in enumerate(vc)]
        done = await gather_all(*(self.facts_of(sr, o) for sr, o in zip(vc, outs, strict=True)))
        return {sr.sentence.index: d for sr, d in zip(vc, done, strict=True)}

    async def by_sentence(self, results: list[SentenceResult], sents: list[Sentence]) -> dict[int, Judged]:
        """Pipelined: each sentence goes verify → decompose → entail on its own, so one slow sentence
        never holds the others' facts back."""
        per_sentence: dict[int, Judged] = {}
        cfg = self.cfg

        async def flow(sr: SentenceResult) -> None:
            await self.verified(sr)
            if self.decomposed(sr):
                context = decompose_context(sents, sr.sentence.index, cfg.decompose_context_sentences,
                                            cfg.decompose_context_chars)
                out = await decompose(self.pool, self.judges.decompose, sr.sentence, context, cfg, self.ctx)
                per_sentence[sr.sentence.index] = await self.facts_of(sr, out)

        await gather_all(*(flow(sr) for sr in results))
        return per_sentence


def _undecomposed(sr: SentenceResult, problem: str | None) -> Judged:
    """A sentence whose decomposition is unusable: the sentence is one undetermined fact."""
    fact = AtomicFact(index=0, sentence_index=sr.sentence.index, text=sr.sentence.text,
                      citations=list(sr.sentence.citations))
    sr.facts = [fact]
    sr.notes.append(f"decomposition unusable ({problem}); the sentence is one undetermined fact")
    why = problem or "decomposition failed"
    return [(FactVerdict(fact_index=0, status="undetermined", reason=f"{DECOMPOSITION}{why}",
                         precise=[None] * len(fact.citations)),
             FactScore(None, None, [None] * len(fact.citations), "undetermined", why))]


def _prepared(item: Item) -> tuple[ResponseResult, ItemFailure | None]:
    """The record of ``item`` before judging, and why it cannot be scored (known before its media are read)."""
    rr = ResponseResult(id=item.id, video=item.media, gold=item.gold)
    rr.meta["question"] = item.question
    if item.options:
        rr.meta["options"] = item.options
    extra = item.model_extra or {}
    if extra.get("system") or extra.get("model"):
        rr.meta["system"] = extra.get("system") or extra.get("model")
    if fields := item_fields(item):  # what breakdowns group on (murgat.core.breakdown); not part of the item's digest
        rr.meta["item"] = fields
    if extra.get("generation_error"):
        return rr, ItemFailure("generation_failed", str(extra["generation_error"]))
    return rr, None


async def score_item(item: Item, cfg: ScoreConfig, judges: StageJudges, pool: CallPool,
                     place: MediaPlace) -> ResponseResult:
    """MURGAT-S of one response: its sentences verified, decomposed and entailed, then scored."""
    rr, failure = _prepared(item)
    if failure is not None:
        return fail(rr, failure)
    try:
        path, info = await open_media(item, place)
    except ItemMediaError as exc:
        return fail(rr, exc.failure)
    pre = preprocess(item.response, len(item.options or []) or 10, item.options)
    rr.answer, rr.predicted_option = pre.answer or None, pre.option
    g = grade(pre.reading, item.gold, item.options)
    rr.correct, rr.answer_problem = g.correct, g.answer_problem
    if not item.response.strip():
        rr.meta["note"] = "empty response"
    ctx = ItemContext(media=path, durations=info.durations(), config=cfg, question=item.question or "", _info=info)
    try:
        await text_channels(ctx, cfg, cfg.evidence.text)
    except MediaError as exc:
        return fail(rr, ItemFailure(exc.kind, exc.reason))
    results = await _judged(_Scoring(rr, cfg, judges, pool, ctx, Repeats.of(cfg)), pre.reasoning, info)
    _tally(rr, cfg, ctx, results)
    return rr


async def _judged(sc: _Scoring, reasoning: str, info: ProbeResult) -> list[SentenceResult]:
    """The sentences of the reasoning, each judged, with facts renumbered in sentence order."""
    cfg, judges = sc.cfg, sc.judges
    text, fallback = reasoning, None
    if judges.decontextualize is not None:
        text, fallback = await decontextualize(sc.pool, judges.decontextualize, reasoning, cfg, sc.ctx)
    sents = sentences_of(text, sc.ctx.durations, cfg.end_tolerance_s, cfg.boxes.with_native(info.width, info.height))
    results = [SentenceResult(sentence=s, decontextualized=text if judges.decontextualize and fallback is None else None,
                              decontext_fallback=fallback) for s in sents]
    per_sentence = await (sc.by_response(results) if cfg.decompose_variant == "response"
                          else sc.by_sentence(results, sents))
    fact_scores: list[FactScore] = []
    next_index = 0
    for sr in (sr for sr in results if sr.verifiable and sr.sentence.citations):
        shift = next_index
        for f in sr.facts:
            f.index += shift
        for fv, fs in per_sentence.get(sr.sentence.index, []):
            fv.fact_index += shift
            sr.verdicts.append(fv)
            fact_scores.append(fs)
        next_index += len(sr.facts)
    if sc.repeats is not None:
        sc.repeats.finish(sc.rr, results, per_sentence, cfg)
    sc.rr.scores, sc.rr.case = _scored(sc.rr, cfg, results, fact_scores)
    return results


def _scored(rr: ResponseResult, cfg: ScoreConfig, results: list[SentenceResult],
            fact_scores: list[FactScore]) -> tuple[Scores, Any]:
    v = [sr for sr in results if sr.verifiable]
    vc = [sr for sr in v if sr.sentence.citations]
    rr.n_sentences = len(results)
    rr.n_verifiable, rr.n_verifiable_cited = len(v), len(vc)
    rr.n_verify_undetermined = sum(1 for sr in results if sr.verifiable is None)
    rr.n_facts = len(fact_scores)
    rr.n_facts_judged = sum(1 for f in fact_scores if f.status == "judged")
    rr.n_facts_undetermined = rr.n_facts - rr.n_facts_judged
    if not v and rr.n_verify_undetermined:
        # no sentence was *judged* verifiable only because the judge could not answer: that is
        # not an empty response, so it must not score 0 under the "zero" policy
        return Scores(), "undetermined"
    return score_response(ResponseFigures(len(v), len(vc), fact_scores), cfg.empty_policy)


def _tally(rr: ResponseResult, cfg: ScoreConfig, ctx: ItemContext, results: list[SentenceResult]) -> None:
    """The record's call counts, undetermined causes and first judge failure."""
    rr.sentences = results
    rr.n_time_like = sum(len(sr.sentence.time_like) for sr in results)  # kept when summaries drop the sentences
    rr.judge_calls = len(ctx.calls)
    rr.cache_hits = sum(1 for c in ctx.calls if c.cached and not c.deduplicated)
    rr.deduplicated = sum(1 for c in ctx.calls if c.deduplicated)
    causes: dict[str, int] = {}
    notes: list[EvidenceNote] = []
    for sr in results:
        if sr.verify_verdict in ("unknown", "unparseable", "error"):
            causes[sr.verify_verdict] = causes.get(sr.verify_verdict, 0) + 1
        for fv in sr.verdicts:
            if fv.reason and fv.reason.startswith(OVER_LIMIT):
                causes["over_limit"] = causes.get("over_limit", 0) + 1
            elif fv.reason and fv.reason.startswith(DECOMPOSITION):
                # the decomposer's answer could not be used (not JSON, no list of facts): a judge
                # failure that --retry-errors asks again, never an abstention
                causes["decomposition"] = causes.get("decomposition", 0) + 1
            for call in fv.calls:
                notes.extend(EvidenceNote.model_validate(n) for n in call.evidence_notes)
                if call.stage in BOX_CHECK_STAGES or call.verdict not in ("unknown", "unparseable", "error"):
                    continue
                cause = "over_limit" if (call.error or "").startswith(OVER_LIMIT) else call.verdict
                causes[cause] = causes.get(cause, 0) + 1
    rr.undetermined_causes = dict(sorted(causes.items()))
    rr.evidence_notes = count_notes(notes)
    box = box_check_counts([fv for sr in results for fv in sr.verdicts])
    if box:
        rr.meta["box_check"] = box
    rr.judge_failure = first_judge_failure(ctx.calls, results)
    rr.n_judge_errors = sum(1 for c in ctx.calls if c.error and not c.blocked) + sum(
        1 for sr in results for fv in sr.verdicts for call in fv.calls
        if call.verdict == "error" and (call.error or "").startswith("evidence"))


class ScoreTask:
    """``score``'s item task for the engine (:mod:`murgat.engine.loop`)."""

    def __init__(self, cfg: ScoreConfig, judges: StageJudges, pool: CallPool, place: MediaPlace) -> None:
        self.cfg, self.judges, self.pool, self.place = cfg, judges, pool, place

    async def run(self, item: Item) -> ResponseResult:
        return await score_item(item, self.cfg, self.judges, self.pool, self.place)

    def error_record(self, item: Item, failure: ItemFailure) -> ResponseResult:
        fields = item_fields(item)
        return fail(ResponseResult(id=item.id, video=item.media, gold=item.gold,
                                   meta={"item": fields} if fields else {}), failure)


async def score_items(items: Sequence[Item], cfg: ScoreConfig, judges: StageJudges, folder: RunFolder, *,
                      place: MediaPlace, concurrency: int = 8, retry_errors: bool = False,
                      on_item: Callable[[ResponseResult], None] | None = None) -> tuple[list[ResponseResult], CallPool]:
    """Score the items not yet in ``folder`` (or edited since) with judges made by the caller, through
    the engine's item loop: what ``murgat score`` does per stream, for code and tests that hold
    their own judges. Returns the new records and the call pool."""
    task = ScoreTask(cfg, judges, CallPool(), place)
    todo = plan_work(items, folder, place.digest, retry_errors).todo
    fresh = await run_items(task, todo, folder, place.digest, concurrency=concurrency, on_item=on_item, keep=True)
    return fresh, task.pool


def summary_options(cfg: ScoreConfig) -> dict[str, Any]:
    """How the run's figures are summarised (:func:`murgat.core.metric.summarize_results`'s options): the
    run's own summary and each group of its breakdown alike."""
    return {"precision_mode": cfg.precision_mode, "empty_policy": cfg.empty_policy,
            "cluster_by_video": cfg.cluster_by_video, "n_resamples": cfg.bootstrap_resamples, "seed": cfg.seed,
            "attributed_threshold": cfg.attributed_threshold}


def breakdown_of(results: Sequence[ResponseResult], cfg: ScoreConfig, by: Sequence[str],
                 fields_of: Callable[[ResponseResult], Mapping[str, Any]] = record_fields) -> Breakdown:
    """``score --by``: the run's figures per group of ``by``, each group summarised as the run is."""
    return breakdown(results, by, fields_of=fields_of, **summary_options(cfg))


def summary_of(results: list[ResponseResult], cfg: ScoreConfig, extra: dict[str, Any] | None = None,
               full: Iterable[ResponseResult] | None = None) -> RunSummary:
    """The run's summary of ``results`` (means, bootstrap CIs, cases, the wrong-box check, the
    figures per modality of the facts' citations). ``full``: the same records with their sentences
    when ``results`` are slim (the per-modality figures need every fact; streamed, not held)."""
    summary = summarize_results(results, **summary_options(cfg))
    summary.extra.update(extra or {})
    summary.extra["by_modality"] = modality_figures(results if full is None else full)
    notes: dict[str, int] = {}
    for r in results:  # what the evidence limits changed, per kind (slim records keep the counts)
        for kind, n in (r.evidence_notes or {}).items():
            notes[kind] = notes.get(kind, 0) + n
    summary.evidence_notes = notes
    box = [r.meta["box_check"] for r in results if r.error is None and r.meta.get("box_check")]
    if box:
        summary.extra["box_check"] = box_check_summary(box)
    if cfg.repeats > 1:
        summary.extra["repeats"] = repeat_summary(results, cfg)
    return summary


def summarize_run(folder: RunFolder, cfg: ScoreConfig, ids: set[str] | None = None,
                  extra: dict[str, Any] | None = None) -> RunSummary:
    """:func:`summary_of` the folder's records (of ``ids``), written to its ``summary.json``."""
    results = [r for r in folder.latest_results() if ids is None or r.id in ids]
    summary = summary_of(results, cfg, extra)
    folder.write_summary(summary)
    return summary
