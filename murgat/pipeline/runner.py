"""Orchestration of ``murgat score``: items and judge calls run concurrently, each
finished item is persisted at once, and a rerun resumes where the last one stopped.

Failure policy: a bad item (missing or corrupt media, unreadable input) becomes an error
record and the run goes on; a judge that cannot answer leaves the affected facts
undetermined (reported apart); a replay cassette miss stops the run loudly.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from media.errors import MediaError
from media.probe import probe
from murgat.answers import is_correct
from murgat.breakdown import item_fields
from murgat.engine.folder import RunDir
from murgat.engine.loop import plan
from murgat.engine.loop import run_items as engine_run
from murgat.engine.preflight import ItemMediaError, MediaPlace, open_media
from murgat.judges.parsing import shared_answer_note
from murgat.metric import FactScore, ResponseFigures, score_response, summarize_results
from murgat.pipeline.config import ScoreConfig
from murgat.pipeline.stages import (
    BOX_CHECK_STAGES,
    OVER_LIMIT,
    CallPool,
    ItemContext,
    Judges,
    attach_citations,
    box_check_counts,
    box_check_summary,
    decompose,
    decompose_response,
    decontextualize,
    entail_fact,
    first_judge_failure,
    sentences_of,
    verify,
)
from murgat.schema import AtomicFact, FactVerdict, Item, ResponseResult, RunSummary, Scores, SentenceResult
from murgat.text import preprocess

log = logging.getLogger("murgat.score")
async def _text_channels(ctx: ItemContext, cfg: ScoreConfig, need: bool) -> None:
    if not need:
        return
    info = probe(ctx.media)
    if info.has_audio:
        from media.asr import transcribe

        ctx.transcript = await asyncio.to_thread(transcribe, ctx.media, cfg.asr_model)
        if cfg.sound_events:
            from media.errors import ToolMissing
            from media.sounds import tag_file

            try:
                ctx.sounds = await asyncio.to_thread(tag_file, ctx.media)
            except ToolMissing:
                ctx.sounds = None  # no tagger installed: sound claims are abstentions (the judge says why)
    if info.has_video:
        from media.ocr import lazy_screen

        # OCR happens on demand, only for frames inside cited visual segments
        ctx.screen = await asyncio.to_thread(lazy_screen, ctx.media, cfg.ocr_fps)


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


async def process_item(item: Item, cfg: ScoreConfig, judges: Judges, pool: CallPool, media_root: str | Path | None,
                       input_path: str | Path | None, allow_outside_root: bool = False) -> ResponseResult:
    rr = ResponseResult(id=item.id, video=item.media, gold=item.gold)
    rr.meta["question"] = item.question
    if item.options:
        rr.meta["options"] = item.options
    extra = item.model_extra or {}
    if extra.get("system") or extra.get("model"):
        rr.meta["system"] = extra.get("system") or extra.get("model")
    if fields := item_fields(item):  # what breakdowns group on (murgat.breakdown); not part of the item's digest
        rr.meta["item"] = fields
    if extra.get("generation_error"):
        rr.error = f"generation_failed: {extra['generation_error']}"
        return rr
    try:
        path, info = await open_media(item, MediaPlace(media_root, input_path, allow_outside_root))
    except ItemMediaError as exc:
        rr.error = str(exc)
        return rr
    if len(item.response) > cfg.max_response_chars:
        rr.error = (f"response_too_long: {len(item.response):,} characters, over --max-response-chars "
                    f"{cfg.max_response_chars:,}")
        return rr
    n_opt = len(item.options or []) or 10
    pre = preprocess(item.response, n_opt)
    rr.answer = pre.answer or None
    rr.predicted_option = pre.option
    rr.correct = is_correct(pre.option, item.gold, item.options)
    if not item.response.strip():
        rr.meta["note"] = "empty response"
    ctx = ItemContext(media=path, durations=info.durations(), config=cfg, question=item.question or "", _info=info)
    try:
        await _text_channels(ctx, cfg, cfg.evidence.text)
    except MediaError as exc:
        rr.error = f"{exc.kind}: {exc.reason}"
        return rr
    text, fallback = pre.reasoning, None
    if judges.decontextualize is not None:
        text, fallback = await decontextualize(pool, judges.decontextualize, pre.reasoning, cfg, ctx)
    sents = sentences_of(text, ctx.durations, cfg.end_tolerance_s, cfg.boxes.with_native(info.width, info.height))
    results = [SentenceResult(sentence=s, decontextualized=text if judges.decontextualize and fallback is None else None,
                              decontext_fallback=fallback) for s in sents]
    def context(i: int) -> str:
        return decompose_context(sents, i, cfg.decompose_context_sentences, cfg.decompose_context_chars)

    async def facts_of(sr: SentenceResult, out: tuple[list[str] | None, str | None, str | None]
                       ) -> list[tuple[FactVerdict, FactScore]]:
        """Facts of one decomposed sentence, entailed at once (local indices, renumbered below)."""
        texts, raw, problem = out
        sr.decompose_raw = raw
        if texts is not None and not any(str(t).strip() for t in texts):
            # a verifiable cited sentence has at least one claim: an empty split is the
            # decomposer failing, not a response with nothing to check (never a silent 0)
            texts, problem = None, "the decomposer returned no facts for a verifiable cited sentence"
            rr.n_empty_decompositions += 1
        if texts is None:
            fact = AtomicFact(index=0, sentence_index=sr.sentence.index, text=sr.sentence.text,
                              citations=list(sr.sentence.citations))
            sr.facts = [fact]
            sr.notes.append(f"decomposition unusable ({problem}); the sentence is one undetermined fact")
            why = problem or "decomposition failed"
            return [(FactVerdict(fact_index=0, status="undetermined", reason=f"decomposition: {why}",
                                 precise=[None] * len(fact.citations)),
                     FactScore(None, None, [None] * len(fact.citations), "undetermined", why))]
        facts, notes = attach_citations(sr.sentence, texts, 0)
        sr.facts = facts
        sr.notes.extend(notes)
        return list(await asyncio.gather(*(entail_fact(pool, judges.entail, f, cfg, ctx) for f in facts if f.citations)))

    async def verified(sr: SentenceResult) -> None:
        verdict, raw = await verify(pool, judges.verify, sr.sentence, cfg, ctx)
        sr.verify_verdict, sr.verify_raw = verdict, raw
        sr.verifiable = True if verdict == "yes" else False if verdict == "no" else None

    per_sentence: dict[int, list[tuple[FactVerdict, FactScore]]] = {}
    if cfg.decompose_variant == "response":
        # one decomposition call for the whole response: it needs every verifiability answer first
        await asyncio.gather(*(verified(sr) for sr in results))
        Vc = [sr for sr in results if sr.verifiable and sr.sentence.citations]
        if Vc:
            by_idx, raw, problem = await decompose_response(pool, judges.decompose, [sr.sentence for sr in Vc], cfg, ctx)
            # the one answer is kept once, on the first sentence; the others point to it
            outs = [(by_idx.get(sr.sentence.index), raw if k == 0 else shared_answer_note("sentence", Vc[0].sentence.index),
                     problem or (None if sr.sentence.index in by_idx else "sentence missing in answer"))
                    for k, sr in enumerate(Vc)]
            done = await asyncio.gather(*(facts_of(sr, o) for sr, o in zip(Vc, outs, strict=True)))
            per_sentence = {sr.sentence.index: d for sr, d in zip(Vc, done, strict=True)}
    else:
        # pipelined: each sentence goes verify → decompose → entail on its own, so one slow
        # sentence never holds the others' facts back
        async def flow(sr: SentenceResult) -> None:
            await verified(sr)
            if sr.verifiable and sr.sentence.citations:
                out = await decompose(pool, judges.decompose, sr.sentence, context(sr.sentence.index), cfg, ctx)
                per_sentence[sr.sentence.index] = await facts_of(sr, out)

        await asyncio.gather(*(flow(sr) for sr in results))
    V = [sr for sr in results if sr.verifiable]
    Vc = [sr for sr in V if sr.sentence.citations]
    rr.n_sentences = len(sents)
    rr.n_verifiable, rr.n_verifiable_cited = len(V), len(Vc)
    rr.n_verify_undetermined = sum(1 for sr in results if sr.verifiable is None)
    # renumber facts in sentence order (flows finished in any order)
    fact_scores: list[FactScore] = []
    next_index = 0
    for sr in Vc:
        shift = next_index
        for f in sr.facts:
            f.index += shift
        for fv, fs in per_sentence.get(sr.sentence.index, []):
            fv.fact_index += shift
            sr.verdicts.append(fv)
            fact_scores.append(fs)
        next_index += len(sr.facts)
    rr.n_facts = len(fact_scores)
    rr.n_facts_judged = sum(1 for f in fact_scores if f.status == "judged")
    rr.n_facts_undetermined = rr.n_facts - rr.n_facts_judged
    rr.scores, rr.case = score_response(ResponseFigures(len(V), len(Vc), fact_scores), cfg.empty_policy)
    if not V and rr.n_verify_undetermined:
        # no sentence was *judged* verifiable only because the judge could not answer: that is
        # not an empty response, so it must not score 0 under the "zero" policy
        rr.scores, rr.case = Scores(), "undetermined"
    rr.sentences = results
    rr.judge_calls = len(ctx.calls)
    rr.cache_hits = sum(1 for c in ctx.calls if c.cached and not c.deduplicated)
    rr.deduplicated = sum(1 for c in ctx.calls if c.deduplicated)
    causes: dict[str, int] = {}
    for sr in results:
        if sr.verify_verdict in ("unknown", "unparseable", "error"):
            causes[sr.verify_verdict] = causes.get(sr.verify_verdict, 0) + 1
        for fv in sr.verdicts:
            if fv.reason and fv.reason.startswith(OVER_LIMIT):
                causes["over_limit"] = causes.get("over_limit", 0) + 1
            for call in fv.calls:
                if call.verdict in ("unknown", "unparseable", "error") and call.stage not in BOX_CHECK_STAGES:
                    causes[call.verdict] = causes.get(call.verdict, 0) + 1
    rr.undetermined_causes = dict(sorted(causes.items()))
    box = box_check_counts([fv for sr in results for fv in sr.verdicts])
    if box:
        rr.meta["box_check"] = box
    rr.judge_failure = first_judge_failure(ctx.calls, results)
    rr.n_judge_errors = sum(1 for c in ctx.calls if c.error and not c.blocked) + sum(
        1 for sr in results for fv in sr.verdicts for call in fv.calls
        if call.verdict == "error" and (call.error or "").startswith("evidence"))
    return rr


class ScoreTask:
    """``score``'s item task for the engine (:mod:`murgat.engine.loop`)."""

    def __init__(self, cfg: ScoreConfig, judges: Judges, pool: CallPool, place: MediaPlace) -> None:
        self.cfg, self.judges, self.pool, self.place = cfg, judges, pool, place

    async def run(self, item: Item) -> ResponseResult:
        return await process_item(item, self.cfg, self.judges, self.pool, self.place.media_root, self.place.input_path,
                                  self.place.allow_outside_root)

    def error_record(self, item: Item, error: str) -> ResponseResult:
        fields = item_fields(item)
        return ResponseResult(id=item.id, video=item.media, gold=item.gold, error=error,
                              meta={"item": fields} if fields else {})

    def digest(self, item: Item) -> str:
        return self.place.digest(item)


def ray_task(settings: dict[str, Any], judge: Callable[..., Any]) -> ScoreTask:
    """``score``'s task rebuilt inside a Ray worker (see :mod:`murgat.scaleout.tasks`)."""
    cfg = ScoreConfig.model_validate(settings["config"])

    def j(js: Any) -> Any:
        return judge(js.spec, js.options, cfg.generate)

    judges = Judges(verify=j(cfg.judge_verify), decompose=j(cfg.judge_decompose), entail=j(cfg.judge_entail),
                    decontextualize=j(cfg.judge_decontextualize) if cfg.judge_decontextualize else None)
    return ScoreTask(cfg, judges, CallPool(), MediaPlace(**settings["place"]))


async def run_items(
    items: Sequence[Item],
    cfg: ScoreConfig,
    judges: Judges,
    rundir: RunDir,
    *,
    media_root: str | Path | None = None,
    input_path: str | Path | None = None,
    item_concurrency: int = 8,
    retry_errors: bool = False,
    allow_outside_root: bool = False,
    on_item: Callable[[ResponseResult], None] | None = None,
    keep_results: bool = True,
    todo: Sequence[Item] | None = None,
) -> tuple[list[ResponseResult], CallPool]:
    """Score the items not yet in ``rundir`` (or edited since) through the engine's one item loop;
    ``todo``: the items to do when the caller already planned (:func:`murgat.engine.loop.plan`)."""
    pool = CallPool()
    task = ScoreTask(cfg, judges, pool, MediaPlace(media_root, input_path, allow_outside_root))
    if todo is None:
        todo = plan(task, items, rundir, retry_errors).todo
    fresh = await engine_run(task, todo, rundir, concurrency=item_concurrency, on_item=on_item, keep=keep_results)
    return fresh, pool


def summarize_run(
    rundir: RunDir, cfg: ScoreConfig, ids: set[str] | None = None, extra: dict[str, Any] | None = None,
    results: list[ResponseResult] | None = None,
) -> RunSummary:
    if results is None:
        results = [r for r in rundir.latest_results() if ids is None or r.id in ids]
    summary = summarize_results(
        results, precision_mode=cfg.precision_mode, empty_policy=cfg.empty_policy,
        cluster_by_video=cfg.cluster_by_video, n_resamples=cfg.bootstrap_resamples, seed=cfg.seed,
        attributed_threshold=cfg.attributed_threshold,
    )
    summary.extra.update(extra or {})
    box = [r.meta["box_check"] for r in results if r.error is None and r.meta.get("box_check")]
    if box:
        summary.extra["box_check"] = box_check_summary(box)
    rundir.write_summary(summary)
    return summary
