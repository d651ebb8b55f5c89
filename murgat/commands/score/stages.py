"""The MURGAT-S stages, each a small function from typed input to typed output.

preprocess → decontextualize → split → parse citations → verifiability → decompose →
entail → score. Judge calls go through :class:`CallPool`, which serves identical
in-flight requests once; every judge answer is kept raw next to its parsed verdict.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from murgat import prompts
from murgat.core.aio import gather_all
from murgat.core.citations import find_groups, parse_citations, strip_citations
from murgat.core.metric import FactScore, next_queries, score_fact
from murgat.core.schema import AtomicFact, Citation, FactVerdict, JudgeCall, Sentence, Verdict
from murgat.judges.base import Judge
from murgat.judges.budget import sized_request
from murgat.judges.parsing import TRUNCATED, clip_answer, parse_json_answer, parse_verdict, read_verdict
from murgat.judges.types import JudgeOutput, JudgeRequest, TextPart
from murgat.judging.context import ItemContext
from murgat.judging.entail import OVER_LIMIT, VERDICT_SCHEMA, ask_entailment
from murgat.judging.pool import CallPool
from murgat.media.errors import MediaError
from murgat.settings.score_resolved import ScoreConfig

VERIFY_SCHEMA = VERDICT_SCHEMA
DECOMPOSE_SCHEMA = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
}


@dataclass
class StageJudges:
    """The judge of each MURGAT-S stage (one provider may serve several)."""

    verify: Judge
    decompose: Judge
    entail: Judge
    decontextualize: Judge | None = None


def first_judge_failure(calls: Sequence[JudgeOutput], results: Sequence[Any]) -> str | None:
    """Why an item's judging fell short, in one line: the first request that got no answer (its
    error carries the cause: connection refused, URL, HTTP status, the body's first bytes), else
    the first answer that could not be read. Shown in the record and the run's last stderr line."""
    for out in calls:
        if out.error and not out.blocked:
            return _clip(out.error, 500)
    for sr in results:
        if sr.verify_verdict == "unparseable":
            # the raw answer reads as a label only when the server cut it off at the token cap
            problem = parse_verdict(sr.verify_raw)[1] or f"{TRUNCATED}: {(sr.verify_raw or '')[:80]!r}"
            return _clip(f"unparseable verify answer: {problem}", 500)
        for fv in sr.verdicts:
            for call in fv.calls:
                if call.verdict == "unparseable":
                    return _clip(f"unparseable {call.stage} answer: {call.error}", 500)
        for note in sr.notes:
            if note.startswith("decomposition unusable"):
                return _clip(note, 500)
    return None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ----- decontextualize -----


def _citation_multiset(text: str) -> Counter[tuple[Any, ...]]:
    return Counter(c.key() for c in parse_citations(text))


async def decontextualize(pool: CallPool, judge: Judge, text: str, cfg: ScoreConfig, ctx: ItemContext) -> tuple[str, str | None]:
    """``(text to split, fallback reason)``: a rewrite whose citations differ is refused."""
    if not text.strip():
        return text, None
    req = JudgeRequest(parts=[TextPart(prompts.render("decontextualize", text=text))], config=cfg.generate,
                       task="decontextualize", inputs={"text": text})
    out = await pool.ask(judge, req)
    ctx.calls.append(out)
    if out.error or not out.text or not out.text.strip():
        return text, f"decontextualization failed ({out.error or 'empty answer'}); original kept"
    new = out.text.strip()
    if _citation_multiset(new) != _citation_multiset(text):
        return text, "decontextualized text changed the citations; original kept"
    return new, None


# ----- verifiability -----


async def verify(pool: CallPool, judge: Judge, sent: Sentence, cfg: ScoreConfig, ctx: ItemContext, *,
                 repeat: int = 0) -> tuple[Verdict, str | None]:
    """Is the sentence an observable claim about the media? (``repeat``: which repeat of the question.)"""
    variant = cfg.verify_variant
    prompt = prompts.render(f"verify_{variant}", question=ctx.question or "(not given)", sentence=strip_citations(sent.text))
    sized, key_config = sized_request(cfg.generate, "verify", variant, cfg.sized_answers)
    req = JudgeRequest(parts=[TextPart(prompt)], schema=VERIFY_SCHEMA if variant == "json" else None,
                       config=sized, key_config=key_config, task="verify",
                       inputs={"sentence": strip_citations(sent.text), "question": ctx.question}, expects="verdict")
    out = await pool.ask(judge, req, repeat=repeat)
    ctx.calls.append(out)
    if out.error:
        return "error", clip_answer(out.text)
    verdict, _ = read_verdict(out)  # an answer cut off at the cap is unparseable, whatever it began with
    return verdict, clip_answer(out.text)


# ----- decomposition -----


def _end_dumped(sent: Sentence) -> bool:
    """True when the sentence's only citation group sits at its end."""
    groups = find_groups(sent.text)
    if len(groups) != 1:
        return False
    return not any(ch.isalnum() for ch in sent.text[groups[0].span[1] :])


def attach_citations(sent: Sentence, fact_texts: list[str], first_index: int) -> tuple[list[AtomicFact], list[str]]:
    """Facts with citations resolved against the sentence's own (guarded) citations.

    A citation the sentence never made is dropped and recorded; when the sentence's only
    citation group is end-dumped, every fact gets all of it (DESIGN's propagation rule),
    whatever the decomposer wrote.
    """
    notes: list[str] = []
    by_key: dict[tuple[Any, ...], Citation] = {}
    for c in sent.citations:
        by_key.setdefault(c.key(), c)
    dumped = _end_dumped(sent)
    facts: list[AtomicFact] = []
    for k, text in enumerate(fact_texts):
        text = str(text).strip()
        if not text:
            continue
        own: list[Citation] = []
        dropped: list[Citation] = []
        taken: set[int] = set()  # ids, not ``in own``: pydantic equality made 10,000 citations quadratic (40 s)
        for c in parse_citations(text):
            match = by_key.get(c.key())
            if match is None:
                dropped.append(c)
            elif id(match) not in taken:
                taken.add(id(match))
                own.append(match)
        if dropped:
            notes.append(f"fact {k}: dropped citation(s) the sentence did not make: " + "; ".join(c.raw for c in dropped))
        if dumped and len(own) != len(sent.citations):
            if own != list(sent.citations):
                notes.append(f"fact {k}: end-dumped citation group given to the fact")
            own = list(sent.citations)
        facts.append(AtomicFact(index=first_index + len(facts), sentence_index=sent.index, text=text,
                                citations=own, dropped_citations=dropped))
    return facts, notes


async def decompose(pool: CallPool, judge: Judge, sent: Sentence, context: str, cfg: ScoreConfig,
                    ctx: ItemContext) -> tuple[list[str] | None, str | None, str | None]:
    """``(fact texts, raw answer, problem)``; fact texts are None when unusable."""
    variant = cfg.decompose_variant
    if variant == "single-pass":
        prompt = prompts.render("decompose_single_pass", sentence=sent.text)
    else:
        prompt = prompts.render("decompose_sentence", sentence=sent.text, context=context or "(none)")
    req = JudgeRequest(parts=[TextPart(prompt)], schema=DECOMPOSE_SCHEMA, config=cfg.generate, task="decompose",
                       inputs={"sentence": sent.text, "context": context})
    out = await pool.ask(judge, req)
    ctx.calls.append(out)
    if out.error:
        return None, clip_answer(out.text), out.error
    value = out.parsed if out.parsed is not None else parse_json_answer(out.text)[0]
    facts = value.get("facts") if isinstance(value, dict) else value if isinstance(value, list) else None
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
        return None, clip_answer(out.text), out.parse_error or "answer has no list of fact strings"
    return facts, clip_answer(out.text), None


async def decompose_response(pool: CallPool, judge: Judge, sents: list[Sentence], cfg: ScoreConfig,
                             ctx: ItemContext) -> tuple[dict[int, list[str]], str | None, str | None]:
    """The ``response``-level ablation: one call for all sentences."""
    listing = "\n".join(f"{s.index}. {s.text}" for s in sents)
    req = JudgeRequest(parts=[TextPart(prompts.render("decompose_response", sentences=listing))], config=cfg.generate,
                       task="decompose_response", inputs={"sentences": [s.text for s in sents]})
    out = await pool.ask(judge, req)
    ctx.calls.append(out)
    if out.error:
        return {}, clip_answer(out.text), out.error
    value, problem = parse_json_answer(out.text)
    result: dict[int, list[str]] = {}
    rows = value.get("sentences") if isinstance(value, dict) else None
    if not isinstance(rows, list):
        return {}, clip_answer(out.text), problem or "answer has no 'sentences' list"
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("facts"), list):
            result[int(row.get("index", -1))] = [str(f) for f in row["facts"]]
    return result, clip_answer(out.text), None


# ----- entailment -----


def over_request_caps(fact: AtomicFact, valid: Sequence[bool], cfg: ScoreConfig, ctx: ItemContext) -> str | None:
    """Why ``fact`` may not be judged, or ``None``: more citations than ``--max-citations-per-fact``,
    or joint evidence (the largest request it would make) longer than ``--max-evidence-s``.
    Checked from the citations and the probe alone, so an over-cap fact costs nothing."""
    n = len(fact.citations)
    if n > cfg.max_citations_per_fact:
        return (f"{OVER_LIMIT}the fact cites {n:,} segments, more than --max-citations-per-fact "
                f"{cfg.max_citations_per_fact:,}; not judged")
    idx = [i for i, ok in enumerate(valid) if ok]
    if not idx:
        return None
    try:
        plans = ctx.segment_plans(fact.citations, idx)
    except MediaError:
        return None  # reported by the entailment request as an evidence error
    refused = [p for p in plans if p.note is not None and p.note.kind == "refused"]
    if refused:  # a segment over an evidence limit, with --over-limit refuse (-J over_limit=refuse)
        return f"{OVER_LIMIT}" + "; ".join(f"{p.label}: {p.reason}" for p in refused) + "; not judged"
    # cited seconds (after padding), not the seconds a limit would let through: a question about
    # a quarter of an hour is not asked from a sample of it (see the README, "Long media")
    total = sum(max(0.0, p.end - p.start) for p in plans if p.available)
    if total > cfg.max_evidence_s:
        return (f"{OVER_LIMIT}its cited evidence is {total:,.0f} s of media, more than --max-evidence-s "
                f"{cfg.max_evidence_s:g}; not judged")
    return None


async def entail_fact(
    pool: CallPool, judge: Judge, fact: AtomicFact, cfg: ScoreConfig, ctx: ItemContext
) -> tuple[FactVerdict, FactScore]:
    """Ask only what the precision mode needs (joint first), then score the fact. A fact over
    a request cap is undetermined with the reason, before any evidence is built or call made.

    A fact citing boxes also gets the wrong-box check (:func:`box_check`), asked alongside;
    its calls are recorded after the scoring ones and never change the scores."""
    valid = [c.valid for c in fact.citations]
    over = over_request_caps(fact, valid, cfg, ctx)
    if over is not None:
        n = len(fact.citations)
        fv = FactVerdict(fact_index=fact.index, precise=[None] * n, status="undetermined", reason=over)
        return fv, FactScore(None, None, [None] * n, "undetermined", over)
    verdicts: dict[frozenset[int], Verdict] = {}
    calls: list[JudgeCall] = []
    check = start_box_check(pool, judge, fact, cfg, ctx)
    try:
        while True:
            need = next_queries(valid, verdicts, cfg.precision_mode)
            if not need:
                break
            answers = await gather_all(*(ask_entailment(pool, judge, fact, s, ctx, variant=cfg.entail_variant) for s in need))
            for s, (v, call) in zip(need, answers, strict=True):
                verdicts[s] = v
                calls.append(call)
    except BaseException:
        if check is not None:
            check.cancel()
        raise
    fs = score_fact(valid, verdicts, cfg.precision_mode)
    fv = fact_verdict(fact, valid, verdicts, fs, calls)
    if check is not None:
        fv.calls.extend(await check)
    return fv, fs


def fact_verdict(fact: AtomicFact, valid: Sequence[bool], verdicts: dict[frozenset[int], Verdict], fs: FactScore,
                 calls: list[JudgeCall]) -> FactVerdict:
    """The record of a fact's entailment: the verdict of each question asked, and its scores."""
    vidx = [i for i, ok in enumerate(valid) if ok]
    joint = frozenset(vidx)
    return FactVerdict(
        fact_index=fact.index,
        joint=verdicts.get(joint) if vidx else "no",
        alone={i: verdicts[frozenset([i])] for i in vidx if frozenset([i]) in verdicts},
        leave_one_out={i: verdicts[joint - {i}] for i in vidx if len(vidx) > 1 and (joint - {i}) in verdicts},
        precise=fs.precise, recall=fs.recall, precision=fs.precision, status=fs.status, reason=fs.reason, calls=calls,
    )


#: record stages of the wrong-box check: whole frames without boxes, then the boxes alone
BOX_CHECK_STAGES = ("box_full", "box_crop")


def _boxed(fact: AtomicFact) -> bool:
    return any(c.valid and c.boxes for c in fact.citations)


def start_box_check(pool: CallPool, judge: Judge, fact: AtomicFact, cfg: ScoreConfig,
                    ctx: ItemContext) -> asyncio.Future[list[JudgeCall]] | None:
    """The wrong-box check of a fact citing boxes (:func:`box_check`), started alongside its scoring questions."""
    return asyncio.ensure_future(box_check(pool, judge, fact, cfg, ctx)) if _boxed(fact) else None


async def box_check(pool: CallPool, judge: Judge, fact: AtomicFact, cfg: ScoreConfig, ctx: ItemContext
                    ) -> list[JudgeCall]:
    """Is the fact entailed by the whole frames (boxes ignored) and by the boxes alone?

    Two questions over all valid citations: ``box_full`` is exactly the box-free question
    (same recipe, so it shares cache entries with box-free citations of the same moments),
    ``box_crop`` shows each boxed segment as its enlarged boxes only. "Wrong box" = full yes
    and crop no: the model saw the right moment but pointed at the wrong place.
    """
    idx = frozenset(i for i, c in enumerate(fact.citations) if c.valid)
    plain = fact.model_copy(update={"citations": [c.model_copy(update={"boxes": []}) for c in fact.citations]})
    (_, full), (_, crop) = await asyncio.gather(
        ask_entailment(pool, judge, plain, idx, ctx, variant=cfg.entail_variant, stage=BOX_CHECK_STAGES[0]),
        ask_entailment(pool, judge, fact, idx, ctx, variant=cfg.entail_variant, box_view="crop",
                       stage=BOX_CHECK_STAGES[1]))
    return [full, crop]


def box_check_counts(verdicts: Sequence[FactVerdict]) -> dict[str, int]:
    """Per-item tallies of the wrong-box check (empty when no fact cited a box)."""
    out = {"facts": 0, "full_yes": 0, "crop_yes": 0, "wrong_box": 0, "undetermined": 0}
    for fv in verdicts:
        got = {c.stage: c.verdict for c in fv.calls if c.stage in BOX_CHECK_STAGES}
        if not got:
            continue
        full, crop = got.get("box_full"), got.get("box_crop")
        out["facts"] += 1
        out["full_yes"] += full == "yes"
        out["crop_yes"] += crop == "yes"
        if full not in ("yes", "no") or crop not in ("yes", "no"):
            out["undetermined"] += 1
        elif full == "yes" and crop == "no":
            out["wrong_box"] += 1
    return out if out["facts"] else {}


def box_check_summary(per_item: Sequence[dict[str, int]]) -> dict[str, Any]:
    """Run totals of the wrong-box check; ``wrong_box_rate`` = wrong boxes / facts decided on both."""
    total = {k: sum(int(d.get(k, 0)) for d in per_item) for k in ("facts", "full_yes", "crop_yes", "wrong_box",
                                                                   "undetermined")}
    decided = total["facts"] - total["undetermined"]
    return {**total, "items": len(per_item), "wrong_box_rate": total["wrong_box"] / decided if decided else None}
