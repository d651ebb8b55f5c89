"""``score --modality-check N``: does the judge tell sound from picture?

A judge can say "yes" to an audio claim from the picture alone (or to a visual one from the sound
track), and the run's precision then reads as grounded when the judge never used the cited
modality. The check measures it: among the facts the judge found supported whose citations are all
of one modality, a sample of ``N`` drawn by the run's seed (SHA-256 of ``seed|id|sentence|fact``,
as ``murgat.human_eval.sampling`` draws, so any machine draws the same facts) is asked again with every
citation moved to the *other* modality at the same times (the frames of the cited time for an
audio citation, its audio for a visual one), through the run's own entailment question. The
**blindness rate** is the share still judged supported: near 0 for a judge that answers from the
cited modality, near 1 for one that ignores it. A fact whose swapped citation does not exist in the
media (a file without audio) is not asked; an answer other than yes/no is counted apart
(undetermined), never as "no". The interval is Wilson's score interval (the share of a small sample).

The one-modality probes (``modality_visual``, ``modality_audio`` in :mod:`murgat.judging.probes.probeset`)
are the same question on murgat's own probe clip, before the first item; this is it on the run's facts.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Iterable, Mapping
from typing import Any

from murgat.core.citations import check_durations
from murgat.core.metric import fact_modality
from murgat.core.schema import AtomicFact, Item, ResponseResult
from murgat.engine.preflight import ItemMediaError, MediaPlace, open_media
from murgat.judges.base import Judge
from murgat.judging.channels import text_channels
from murgat.judging.context import ItemContext
from murgat.judging.entail import ask_entailment
from murgat.judging.pool import CallPool
from murgat.settings.score_resolved import ScoreConfig

OTHER = {"audio": "visual", "visual": "audio"}


def candidates(records: Iterable[ResponseResult]) -> list[tuple[str, AtomicFact]]:
    """(item id, fact) of every fact judged supported (joint "yes") whose valid citations are all of one modality."""
    out = []
    for r in records:
        if r.error is not None:
            continue
        for sr in r.sentences:
            joint = {v.fact_index: v.joint for v in sr.verdicts}
            for f in sr.facts:
                if joint.get(f.index) == "yes" and fact_modality(f.citations) in OTHER:
                    out.append((r.id, f))
    return out


def draw(cands: list[tuple[str, AtomicFact]], n: int, seed: int) -> list[tuple[str, AtomicFact]]:
    """The ``n`` candidates of lowest SHA-256 rank under ``seed`` (a uniform sample without replacement)."""
    def rank(c: tuple[str, AtomicFact]) -> str:
        return hashlib.sha256(f"{seed}|{c[0]}|{c[1].sentence_index}|{c[1].index}".encode("utf-8", "surrogatepass")).hexdigest()

    return sorted(cands, key=rank)[:n]


def swapped(fact: AtomicFact) -> AtomicFact:
    """``fact`` with every valid citation moved to the other modality (same times, same text)."""
    cites = [c.model_copy(update={"modality": OTHER[c.modality], "boxes": []}) if c.valid and c.modality in OTHER
             else c for c in fact.citations]
    return fact.model_copy(update={"citations": cites})


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval of ``k`` of ``n`` (95% by default)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


async def _ask(item: Item, fact: AtomicFact, cfg: ScoreConfig, judge: Judge, pool: CallPool,
               place: MediaPlace) -> dict[str, Any]:
    row: dict[str, Any] = {"id": item.id, "sentence": fact.sentence_index, "fact": fact.index, "text": fact.text,
                           "cited": fact_modality(fact.citations)}
    try:
        path, info = await open_media(item, place)
    except ItemMediaError as exc:
        return {**row, "verdict": None, "skipped": f"media: {exc}"}
    ctx = ItemContext(media=path, durations=info.durations(), config=cfg, question=item.question or "", _info=info)
    await text_channels(ctx, cfg, cfg.evidence.text)
    other = swapped(fact)
    checked = check_durations(other.citations, ctx.durations, cfg.end_tolerance_s)
    idx = [i for i, c in enumerate(checked) if c.valid]
    if not idx or len(idx) != sum(1 for c in fact.citations if c.valid):
        return {**row, "verdict": None, "skipped": f"the media have no {OTHER[row['cited']]} at the cited time"}
    verdict, call = await ask_entailment(pool, judge, other.model_copy(update={"citations": checked}),
                                         frozenset(idx), ctx, variant=cfg.entail_variant, stage="modality_check")
    return {**row, "verdict": str(verdict), "error": call.error}


def summarize_check(rows: list[dict[str, Any]], n_requested: int, n_candidates: int, seed: int) -> dict[str, Any]:
    """The check's figures from its rows (see the module docstring)."""
    decided = [r for r in rows if r.get("verdict") in ("yes", "no")]
    k = sum(1 for r in decided if r["verdict"] == "yes")
    out: dict[str, Any] = {"n_requested": n_requested, "seed": seed, "n_candidates": n_candidates,
                           "n_asked": sum(1 for r in rows if r.get("verdict") is not None), "n": len(decided),
                           "n_still_supported": k,
                           "n_undetermined": sum(1 for r in rows if r.get("verdict") not in (None, "yes", "no")),
                           "n_skipped": sum(1 for r in rows if r.get("verdict") is None), "rate": None,
                           "ci_low": None, "ci_high": None, "by_cited": {}, "facts": rows}
    if decided:
        out["rate"] = k / len(decided)
        out["ci_low"], out["ci_high"] = wilson(k, len(decided))
    else:
        out["reason"] = ("no supported single-modality fact to recheck" if not n_candidates
                         else "no rechecked fact got a yes/no answer")
    for m in OTHER:
        mine = [r for r in decided if r["cited"] == m]
        out["by_cited"][m] = {"n": len(mine), "n_still_supported": sum(1 for r in mine if r["verdict"] == "yes"),
                              "rate": (sum(1 for r in mine if r["verdict"] == "yes") / len(mine)) if mine else None}
    return out


async def modality_check(records: Iterable[ResponseResult], items: Mapping[str, Item], cfg: ScoreConfig, judge: Judge,
                         place: MediaPlace, n: int, seed: int, concurrency: int = 8) -> dict[str, Any]:
    """The blindness rate of ``judge`` on ``n`` drawn facts of the run (see the module docstring)."""
    cands = [c for c in candidates(records) if c[0] in items]
    sample = draw(cands, n, seed)
    pool = CallPool()
    gate = asyncio.Semaphore(concurrency)

    async def one(item_id: str, fact: AtomicFact) -> dict[str, Any]:
        async with gate:
            return await _ask(items[item_id], fact, cfg, judge, pool, place)

    rows = list(await asyncio.gather(*(one(i, f) for i, f in sample)))
    return summarize_check(rows, n, len(cands), seed)
