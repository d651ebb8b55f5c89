"""``score --repeats K``: every yes/no judge question asked K times, the majority used, the stability reported.

**What is repeated.** Every question whose answer is a verdict — a sentence's verifiability and
each entailment question of a fact (jointly, each citation alone, leave-one-out) — is asked K
times, repeat r as :func:`~murgat.judging.pool.repeat_of` makes it: repeat 0 is exactly the
request of a run without repeats (its cache key too, so cached answers serve it), repeat r is
asked with seed ``seed + r`` and has its own cache entry. A provider that takes a seed samples
anew at the run's ``--temperature``; one that does not still gets K separate requests. A
decomposition (and a decontextualization) is asked once: a list of facts has no majority, and the
facts are the units whose stability is measured. The wrong-box check is asked once (it never
changes a score).

**The verdict used** is the majority of a question's K answers
(:func:`murgat.human_eval.stability.majority`): a tie is ``unknown`` (the judge did not make up its
mind, so murgat does not either); an abstention is a vote, a failed answer is none; only failures
give the first failure's kind. Questions are asked until the majority *and each repeat on its own
answers* need no more, and every sentence that any repeat finds verifiable is decomposed — so each
repeat can be scored from its own answers alone. The record's sentences, facts and scores are the
majority's (a sentence only a minority found verifiable keeps no facts in the record, with a note).

**What is reported.** Each record keeps, in ``meta["repeats"]`` (:class:`RepeatRecord`), the K
answers to each sentence's verifiability and to each fact's joint entailment, and the scores of
each repeat; each question's recorded call is the answer of the first repeat that gave the
majority verdict (repeat 0's on a tie). The run's summary, ``extra["repeats"]`` (:func:`repeat_summary`), gives per-fact
agreement across repeats (the mean share of a fact's answers equal to its majority), the share of
facts whose verdict flips, Fleiss' κ of the repeats, the same for verifiability, and the spread of
the run-level MURGAT-S over the K repeats (:func:`murgat.human_eval.stability.spread`). When every
question got the same answer K times it says so: at temperature 0 that shows a deterministic
judge, not a stable one.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, Field

from murgat.commands.score.stages import entail_fact, fact_verdict, over_request_caps, start_box_check, verify
from murgat.core.metric import FactScore, ResponseFigures, next_queries, score_fact, score_response
from murgat.core.schema import AtomicFact, FactVerdict, JudgeCall, ResponseResult, Scores, Sentence, SentenceResult, Verdict
from murgat.judges.base import Judge
from murgat.judging.context import ItemContext
from murgat.judging.entail import ask_entailment
from murgat.judging.pool import CallPool
from murgat.settings.score_resolved import ScoreConfig

#: one decomposed sentence's facts as the scoring judged them: (record, scores) pairs
Judged = list[tuple[FactVerdict, FactScore]]


class FactRepeats(BaseModel):
    """One fact's joint entailment over the repeats."""

    sentence: int = Field(description="index of the fact's sentence")
    fact: int | None = Field(description="the fact's index in the record; None: its sentence was found verifiable by "
                                         "a minority of the repeats only, so the record keeps no facts for it")
    joint: list[Verdict] = Field(description="the joint entailment answer of each repeat (empty: not asked, e.g. "
                                             "over a request cap)")


class RepeatRecord(BaseModel):
    """What a record keeps of its repeats (``meta["repeats"]``)."""

    k: int
    seeds: list[int]
    verify: dict[int, list[Verdict]] = Field(default_factory=dict, description="sentence index -> its K answers")
    facts: list[FactRepeats] = Field(default_factory=list)
    scores: list[Scores] = Field(default_factory=list, description="each repeat's scores, from its answers alone")
    cases: list[str] = Field(default_factory=list)
    n_questions: int = 0
    n_questions_differing: int = Field(0, description="questions whose K answers were not all the same")
    n_tied: int = Field(0, description="questions whose answers tied (their verdict is unknown)")


def _tied(verdicts: Sequence[str]) -> bool:
    """Whether the answered repeats tie for the top (the majority is ``unknown`` by a tie)."""
    top = Counter(v for v in verdicts if v in ("yes", "no", "unknown")).most_common(2)
    return len(top) == 2 and top[0][1] == top[1][1]


def used(verdicts: Sequence[Verdict]) -> Verdict:
    """The verdict a question's repeats give: their majority (ties → unknown); with no answer at
    all, the first repeat's failure (``error`` or ``unparseable``, as a run without repeats says)."""
    from murgat.human_eval.stability import majority  # numpy: only a run with --repeats pays for it

    m = majority(verdicts)
    return verdicts[0] if m == "error" else cast(Verdict, m)


def _majority_call(got: Sequence[tuple[Verdict, JudgeCall]], majority: Verdict) -> JudgeCall:
    """The answer a record keeps of one question's repeats: the first repeat that gave the majority
    verdict (so the words beside a fact's recall are the majority's, and a diff compares the verdict
    the score used), else repeat 0's (a tie: the majority is ``unknown``, which no repeat said)."""
    return next((call for v, call in got if v == majority), got[0][1])


@dataclass
class Repeats:
    """The repeats of one response's questions while it is scored (see the module docstring)."""

    k: int
    seed: int
    verify_answers: dict[int, list[Verdict]] = field(default_factory=dict)
    #: per fact record (by identity: the records live until :meth:`finish`): each repeat's scores and joint answers
    facts: dict[int, tuple[list[FactScore], list[Verdict]]] = field(default_factory=dict)
    n_questions: int = 0
    n_differing: int = 0
    n_tied: int = 0

    @classmethod
    def of(cls, cfg: ScoreConfig) -> Repeats | None:
        """The tracker of a run with ``--repeats`` over 1, else ``None`` (the run asks as it always has)."""
        return cls(cfg.repeats, cfg.generate.seed or 0) if cfg.repeats > 1 else None

    def _asked(self, answers: Sequence[Verdict]) -> Verdict:
        self.n_questions += 1
        got = [a for a in answers if a in ("yes", "no", "unknown")]
        self.n_differing += len(set(got)) > 1 or len(got) != len(answers)
        self.n_tied += _tied(answers)
        return used(answers)

    async def verify(self, pool: CallPool, judge: Judge, sent: Sentence, cfg: ScoreConfig,
                     ctx: ItemContext) -> tuple[Verdict, str | None]:
        """The sentence's verifiability: its majority, and the first repeat's raw answer."""
        answers = await asyncio.gather(*(verify(pool, judge, sent, cfg, ctx, repeat=r) for r in range(self.k)))
        verdicts = [v for v, _ in answers]
        self.verify_answers[sent.index] = verdicts
        return self._asked(verdicts), answers[0][1]

    def any_verifiable(self, sr: SentenceResult) -> bool:
        """Whether some repeat found the sentence verifiable (then it is decomposed: that repeat scores it)."""
        return "yes" in self.verify_answers.get(sr.sentence.index, [])

    async def entail(self, pool: CallPool, judge: Judge, fact: AtomicFact, cfg: ScoreConfig,
                     ctx: ItemContext) -> tuple[FactVerdict, FactScore]:
        """The fact's entailment questions, each asked K times (module docstring): the record and scores
        of the majority; each repeat's scores are kept for :meth:`finish`."""
        valid = [c.valid for c in fact.citations]
        if over_request_caps(fact, valid, cfg, ctx) is not None:
            fv, fs = await entail_fact(pool, judge, fact, cfg, ctx)  # not judged: no question is asked
            self.facts[id(fv)] = ([fs] * self.k, [])
            return fv, fs
        mode = cfg.precision_mode
        mine: list[dict[frozenset[int], Verdict]] = [{} for _ in range(self.k)]
        verdicts: dict[frozenset[int], Verdict] = {}
        tied: list[frozenset[int]] = []
        calls: list[JudgeCall] = []
        check = start_box_check(pool, judge, fact, cfg, ctx)
        try:
            while True:
                need = list(dict.fromkeys(s for v in (verdicts, *mine) for s in next_queries(valid, v, mode)))
                if not need:
                    break
                answers = await asyncio.gather(*(ask_entailment(pool, judge, fact, s, ctx, variant=cfg.entail_variant,
                                                                repeat=r) for s in need for r in range(self.k)))
                for n, s in enumerate(need):
                    got = answers[n * self.k:(n + 1) * self.k]
                    for r, (v, _) in enumerate(got):
                        mine[r][s] = v
                    verdicts[s] = self._asked([v for v, _ in got])
                    if _tied([v for v, _ in got]):
                        tied.append(s)
                    calls.append(_majority_call(got, verdicts[s]))
        except BaseException:
            if check is not None:
                check.cancel()
            raise
        fs = score_fact(valid, verdicts, mode)
        fv = fact_verdict(fact, valid, verdicts, fs, calls)
        if fs.status == "undetermined" and tied:
            fv.reason = f"{fs.reason}: its {self.k} repeats tied on {len(tied)} question(s)"
        if check is not None:
            fv.calls.extend(await check)
        joint = frozenset(i for i, ok in enumerate(valid) if ok)
        # a fact without a valid citation asks nothing (it is "no" by rule): no answers to compare
        self.facts[id(fv)] = ([score_fact(valid, m, mode) for m in mine], [m[joint] for m in mine] if joint else [])
        return fv, fs

    def finish(self, rr: ResponseResult, results: list[SentenceResult], per_sentence: dict[int, Judged],
               cfg: ScoreConfig) -> None:
        """Each repeat's scores from its own answers, the record of the repeats (``meta["repeats"]``),
        and the facts of sentences only a minority found verifiable taken out of the record."""
        record = RepeatRecord(k=self.k, seeds=[self.seed + r for r in range(self.k)], verify=self.verify_answers,
                              n_questions=self.n_questions, n_questions_differing=self.n_differing, n_tied=self.n_tied)
        for sr in results:
            counted = bool(sr.verifiable and sr.sentence.citations)
            for fv, _ in per_sentence.get(sr.sentence.index, []):
                joint = self.facts.get(id(fv), ([], []))[1]
                record.facts.append(FactRepeats(sentence=sr.sentence.index, fact=fv.fact_index if counted else None,
                                                joint=joint))
            if not counted and sr.facts:
                yes = self.verify_answers.get(sr.sentence.index, []).count("yes")
                sr.notes.append(f"decomposed for the {yes} of {self.k} repeats that found it verifiable; its "
                                f"{len(sr.facts)} fact(s) count in those repeats' scores only")
                sr.facts = []
        for r in range(self.k):
            scores, case = self._repeat_scores(r, results, per_sentence, cfg)
            record.scores.append(scores)
            record.cases.append(case)
        rr.meta["repeats"] = record.model_dump(mode="json")

    def _repeat_scores(self, r: int, results: list[SentenceResult], per_sentence: dict[int, Judged],
                       cfg: ScoreConfig) -> tuple[Scores, str]:
        """The response's scores from repeat ``r``'s answers alone (as the majority's are made)."""
        answers = {sr.sentence.index: self.verify_answers.get(sr.sentence.index, ["error"] * self.k)[r]
                   for sr in results}
        v = [sr for sr in results if answers[sr.sentence.index] == "yes"]
        vc = [sr for sr in v if sr.sentence.citations]
        fact_scores = [self.facts[id(fv)][0][r] if id(fv) in self.facts else fs
                       for sr in vc for fv, fs in per_sentence.get(sr.sentence.index, [])]
        if not v and any(a not in ("yes", "no") for a in answers.values()):
            return Scores(), "undetermined"  # as the majority's: no sentence judged verifiable only for want of answers
        return score_response(ResponseFigures(len(v), len(vc), fact_scores), cfg.empty_policy)


def repeat_summary(results: Sequence[ResponseResult], cfg: ScoreConfig) -> dict[str, Any]:
    """The run's stability over its repeats (module docstring), from the records' ``meta["repeats"]``."""
    from murgat.human_eval.stability import repeat_agreement, spread

    recs = [(r, RepeatRecord.model_validate(r.meta["repeats"])) for r in results
            if r.error is None and isinstance(r.meta.get("repeats"), dict)]
    k = cfg.repeats
    facts: dict[Hashable, Sequence[str | None]] = {(r.id, n): f.joint for r, rec in recs
                                                   for n, f in enumerate(rec.facts) if f.joint}
    sentences: dict[Hashable, Sequence[str | None]] = {(r.id, i): vs for r, rec in recs for i, vs in rec.verify.items()}
    fa = {key: v for key, v in repeat_agreement(facts).items() if key != "per_fact"}
    va = {key.replace("facts", "sentences"): v for key, v in repeat_agreement(sentences).items() if key != "per_fact"}
    per_repeat = []
    for j in range(k):
        got = [rec.scores[j].murgat_s for _, rec in recs if len(rec.scores) > j]
        vals = [v for v in got if v is not None]
        per_repeat.append(sum(vals) / len(vals) if vals else None)
    n_q = sum(rec.n_questions for _, rec in recs)
    n_diff = sum(rec.n_questions_differing for _, rec in recs)
    temperature = cfg.generate.temperature
    identical = n_q > 0 and n_diff == 0
    if identical:
        note = (f"every question got the same answer in all {k} repeats"
                + (" — at temperature 0 a deterministic judge repeats itself: this shows determinism, not that the "
                   "verdicts are stable under sampling (rerun with --temperature > 0 to measure that)"
                   if temperature == 0 else ""))
    elif temperature == 0:
        note = f"the judge's answers differed between repeats at temperature 0 ({n_diff} of {n_q} questions)"
    else:
        note = None
    return {
        "k": k, "seeds": [(cfg.generate.seed or 0) + j for j in range(k)], "temperature": temperature,
        "n_items": len(recs), "n_questions": n_q, "n_questions_differing": n_diff,
        "n_tied": sum(rec.n_tied for _, rec in recs), "identical_answers": identical,
        "facts": fa, "verifiability": va,
        "murgat_s": {**spread(per_repeat), "per_repeat": per_repeat},
        "note": note,
    }
