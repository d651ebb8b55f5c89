"""The MURGAT-S metric as pure functions: verdicts in, scores out.

Per fact, the judge is asked about *subsets* of the fact's valid citations: the joint set
(recall), each citation alone, and each leave-one-out set (precision). A subset is a
``frozenset`` of citation indices; the empty set is never asked — no evidence entails
nothing. :func:`next_queries` says which subsets are still needed given what is known,
so the pipeline asks the fewest questions, and :func:`score_fact` turns the answers into
recall and precision under one of three precision modes:

``alce`` (default)
    precise ⇔ jointly entailed AND (entailed by the citation alone OR not entailed
    once it is removed) — ALCE's leave-one-out test.
``strict``
    precise ⇔ jointly entailed AND not entailed once it is removed.
``individual``
    precise ⇔ entailed by the citation alone (the authors' public script).

Invalid citations support nothing: they never enter a subset and are never precise.
Verdicts other than yes/no leave the fact *undetermined*; it is then reported apart and
kept out of the means — an abstention is not a "no".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from murgat.core.answers import gold_option
from murgat.core.schema import DECIDED, Interval, ResponseResult, RunSummary, Scores, Verdict

PrecisionMode = Literal["alce", "strict", "individual"]
EmptyPolicy = Literal["zero", "exclude"]
PRECISION_MODES: tuple[str, ...] = ("alce", "strict", "individual")
EMPTY_POLICIES: tuple[str, ...] = ("zero", "exclude")
Subset = frozenset[int]


def _v(verdicts: Mapping[Subset, Verdict], subset: Subset) -> Verdict | None:
    if not subset:
        return "no"
    return verdicts.get(subset)


def next_queries(valid: Sequence[bool], verdicts: Mapping[Subset, Verdict], mode: PrecisionMode = "alce") -> list[Subset]:
    """Subsets whose verdict is still needed to score this fact; empty when done.

    Joint first; with a single valid citation, alone = joint and leave-one-out is empty,
    so one call suffices. Otherwise ``alce`` asks each citation alone and only asks the
    leave-one-out set for citations that do not entail the fact alone.
    """
    idx = [i for i, ok in enumerate(valid) if ok]
    if not idx:
        return []
    joint = frozenset(idx)
    jv = _v(verdicts, joint)
    if jv is None:
        return [joint]
    if len(idx) == 1:
        return []
    need: list[Subset] = []

    def ask(s: Subset) -> None:
        if s and _v(verdicts, s) is None and s not in need:
            need.append(s)

    if mode == "individual":
        for i in idx:
            ask(frozenset([i]))
        return need
    if jv != "yes":
        return []
    if mode == "strict":
        for i in idx:
            ask(joint - {i})
        return need
    for i in idx:
        alone = _v(verdicts, frozenset([i]))
        if alone is None:
            ask(frozenset([i]))
        elif alone != "yes":
            ask(joint - {i})
    return need


@dataclass
class FactScore:
    """Recall and precision of one fact (``None`` when undetermined)."""

    recall: float | None
    precision: float | None
    precise: list[bool | None]
    status: Literal["judged", "undetermined"]
    reason: str | None = None


def score_fact(valid: Sequence[bool], verdicts: Mapping[Subset, Verdict], mode: PrecisionMode = "alce") -> FactScore:
    """Recall (joint entailment) and precision (mean of per-citation precision).

    Raises ``ValueError`` if a needed verdict is missing: call :func:`next_queries` until
    it returns nothing first.
    """
    import numpy as np

    if mode not in PRECISION_MODES:
        raise ValueError(f"unknown precision mode {mode!r}; choose from {PRECISION_MODES}")
    if next_queries(valid, verdicts, mode):
        raise ValueError("verdicts missing for this fact; ask next_queries() first")
    n = len(valid)
    idx = [i for i, ok in enumerate(valid) if ok]
    if n == 0:
        return FactScore(None, None, [], "undetermined", "fact has no citation")
    if not idx:
        return FactScore(0.0, 0.0, [False] * n, "judged")
    joint = frozenset(idx)
    jv = _v(verdicts, joint)
    if jv not in DECIDED:
        return FactScore(None, None, [None] * n, "undetermined", f"joint entailment answer was {jv}")
    recall = 1.0 if jv == "yes" else 0.0
    precise: list[bool | None] = [False] * n
    undecided: list[str] = []
    for i in idx:
        if len(idx) == 1:
            precise[i] = jv == "yes"
            continue
        alone = _v(verdicts, frozenset([i]))
        if mode == "individual":
            precise[i] = None if alone not in DECIDED else alone == "yes"
        elif jv != "yes":
            precise[i] = False
        elif mode == "strict":
            loo = _v(verdicts, joint - {i})
            precise[i] = None if loo not in DECIDED else loo == "no"
        else:
            if alone == "yes":
                precise[i] = True
            else:
                loo = _v(verdicts, joint - {i})
                if loo == "no":
                    precise[i] = True
                elif loo == "yes" and alone == "no":
                    precise[i] = False
                else:
                    precise[i] = None
        if precise[i] is None:
            undecided.append(str(i))
    if undecided:
        return FactScore(recall, None, precise, "undetermined",
                         f"precision of citation(s) {', '.join(undecided)} could not be decided")
    return FactScore(recall, float(np.mean([1.0 if p else 0.0 for p in precise])), precise, "judged")


@dataclass
class ResponseFigures:
    """What the response-level formula needs, gathered by the pipeline."""

    n_verifiable: int
    n_verifiable_cited: int
    fact_scores: list[FactScore] = field(default_factory=list)


def f1_score(p: float, r: float) -> float:
    """Harmonic mean, defined as 0 when both are 0."""
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def score_response(fig: ResponseFigures, empty_policy: EmptyPolicy = "zero") -> tuple[Scores, str]:
    """Coverage × F1 for one response, plus the case it fell into.

    Cases: ``no_verifiable`` (|V| = 0: all zeros under ``zero``, excluded under
    ``exclude``), ``no_cited_facts`` (F empty: P = R = 0), ``undetermined`` (F not empty
    but no fact could be judged: P/R/F1/MURGAT-S are ``None``), ``scored``.
    """
    import numpy as np

    if empty_policy not in EMPTY_POLICIES:
        raise ValueError(f"unknown empty policy {empty_policy!r}; choose from {EMPTY_POLICIES}")
    if fig.n_verifiable == 0:
        if empty_policy == "exclude":
            return Scores(), "excluded"
        return Scores(coverage=0.0, precision=0.0, recall=0.0, f1=0.0, murgat_s=0.0), "no_verifiable"
    coverage = fig.n_verifiable_cited / fig.n_verifiable
    if not fig.fact_scores:
        return Scores(coverage=coverage, precision=0.0, recall=0.0, f1=0.0, murgat_s=0.0), "no_cited_facts"
    judged = [f for f in fig.fact_scores if f.status == "judged"]
    if not judged:
        return Scores(coverage=coverage), "undetermined"
    p = float(np.mean([f.precision for f in judged]))
    r = float(np.mean([f.recall for f in judged]))
    f1 = f1_score(p, r)
    return Scores(coverage=coverage, precision=p, recall=r, f1=f1, murgat_s=coverage * f1), "scored"


def bootstrap_ci(
    values: Sequence[float],
    clusters: Sequence[str] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> Interval:
    """Mean with a percentile bootstrap CI; resamples clusters whole when given.

    Clustered resampling (e.g. by video) keeps correlated responses about one video
    together, which widens the interval honestly when a run holds many questions per video.
    """
    import numpy as np

    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return Interval(value=None, n=0)
    mean = float(x.mean())
    if n == 1:
        return Interval(value=mean, ci_low=mean, ci_high=mean, n=1)
    from murgat.human_eval.bootstrap import percentile_interval, resample_blocks

    if clusters is None:
        k, weights, counts = n, x, None
    else:
        labels, inverse = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
        k = len(labels)
        weights = np.bincount(inverse, weights=x, minlength=k)
        counts = np.bincount(inverse, minlength=k).astype(float)

    def means(draws: np.ndarray) -> np.ndarray:
        if counts is None:
            return np.asarray(weights[draws].mean(axis=1))
        return np.asarray(weights[draws].sum(axis=1) / counts[draws].sum(axis=1))

    lo, hi = percentile_interval(resample_blocks(means, k, n_resamples, seed), alpha)
    return Interval(value=mean, ci_low=lo, ci_high=hi, n=n)


def paired_bootstrap_diff(
    a: Sequence[float], b: Sequence[float], n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05
) -> Interval:
    """Mean of ``b - a`` over paired items, with a bootstrap CI resampling the pairs."""
    import numpy as np

    x = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    return bootstrap_ci(x.tolist(), None, n_resamples, seed, alpha)


METRICS: tuple[str, ...] = ("coverage", "precision", "recall", "f1", "murgat_s")


def _sum_counts(counts: Any) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            total[k] = total.get(k, 0) + v
    return dict(sorted(total.items()))


AnswerState = Literal["right", "wrong", "unknown"]


def state_of(correct: bool | None, answer_problem: str | None, predicted_option: str | None,
             has_gold_option: bool) -> AnswerState | None:
    """How one record counts towards accuracy: ``None`` when it has no gold option, else right,
    wrong or unknown (its answer could not be read).

    An unknown answer is told by ``answer_problem``; records written before that field (their
    ``correct`` is ``False`` when no option was read) are unknown when ``predicted_option`` is
    empty, so old and new records count the same way.
    """
    if correct is True:
        return "right"
    if correct is False:
        return "unknown" if predicted_option is None else "wrong"
    if answer_problem is not None:
        return "unknown"
    if predicted_option is None and has_gold_option:
        return "unknown"
    return None


def answer_state(r: ResponseResult) -> AnswerState | None:
    """:func:`state_of` a score record."""
    return state_of(r.correct, r.answer_problem, r.predicted_option,
                    gold_option(r.gold, r.meta.get("options")) is not None)


def record_answer_state(rec: Mapping[str, Any]) -> AnswerState | None:
    """:func:`state_of` a JSON record of ``generate``, ``program`` or ``reflect`` (``correct``,
    ``answer_problem``, ``predicted_option``, ``gold``, ``options``); an error record has none."""
    if rec.get("generation_error") or rec.get("error"):
        return None
    return state_of(rec.get("correct"), rec.get("answer_problem"), rec.get("predicted_option"),
                    gold_option(rec.get("gold"), rec.get("options")) is not None)


@dataclass(frozen=True)
class AccuracyFigures:
    """Accuracy the one way every command reports it.

    ``accuracy`` is over every item with a gold option, an unknown answer counting as not correct
    (as the benchmarks' official scorers count it); ``accuracy_answered`` is over the answers that
    were read (``value`` null with ``n`` 0 when none was); ``n_answer_unknown`` counts the others.
    Both are ``None`` when no item has a gold option.
    """

    accuracy: Interval | None
    accuracy_answered: Interval | None
    n_answer_unknown: int

    def as_dict(self) -> dict[str, Any]:
        """The three figures as JSON (intervals dumped), for the commands whose summary is a dict."""
        return {"accuracy": self.accuracy.model_dump() if self.accuracy else None,
                "accuracy_answered": self.accuracy_answered.model_dump() if self.accuracy_answered else None,
                "n_answer_unknown": self.n_answer_unknown}


def accuracy_figures(states: Sequence[AnswerState | None], clusters: Sequence[str] | None = None,
                     n_resamples: int = 2000, seed: int = 0) -> AccuracyFigures:
    """:class:`AccuracyFigures` of the items' answer states (``None``: no gold option, left out),
    with bootstrap CIs; ``clusters`` (one per state) resamples whole clusters."""
    rows = [(st, None if clusters is None else clusters[i]) for i, st in enumerate(states) if st is not None]
    if not rows:
        return AccuracyFigures(None, None, 0)
    cl = [str(c) for _, c in rows] if clusters is not None else None
    accuracy = bootstrap_ci([1.0 if st == "right" else 0.0 for st, _ in rows], cl, n_resamples, seed)
    read = [(st, c) for st, c in rows if st != "unknown"]
    answered = bootstrap_ci([1.0 if st == "right" else 0.0 for st, _ in read],
                            [str(c) for _, c in read] if clusters is not None else None, n_resamples, seed)
    return AccuracyFigures(accuracy, answered, len(rows) - len(read))


def summarize_results(
    results: Sequence[ResponseResult],
    *,
    precision_mode: str = "alce",
    empty_policy: str = "zero",
    cluster_by_video: bool = False,
    n_resamples: int = 2000,
    seed: int = 0,
    attributed_threshold: float = 0.5,
) -> RunSummary:
    """Run-level means with bootstrap CIs, accuracy and strict attributed accuracy.

    Error records and responses whose metric is ``None`` (excluded or undetermined) are
    left out of each mean and counted in ``cases``. Accuracy and attributed accuracy are over
    the items with a gold option, an unknown answer counting as not correct (as the
    benchmarks' official scorers count it); ``n_answer_unknown`` and ``accuracy_answered``
    (over the answers that were read) are reported beside them (:func:`answer_state`).
    ``n_time_like`` counts the time-like texts that were not read as citations.
    """
    # resampling draws by position: a fixed order (by id) makes the CIs independent of the
    # order in which items finished
    results = sorted(results, key=lambda r: r.id)
    ok = [r for r in results if r.error is None]
    cases: dict[str, int] = {}
    for r in results:
        key = "error" if r.error is not None else r.case
        cases[key] = cases.get(key, 0) + 1
    intervals = _metric_intervals(ok, cluster_by_video, n_resamples, seed)
    acc, attributed = _accuracies(ok, attributed_threshold, cluster_by_video, n_resamples, seed)
    return RunSummary(
        n_items=len(results),
        n_errors=len(results) - len(ok),
        n_scored=sum(1 for r in ok if r.scores.murgat_s is not None),
        accuracy=acc.accuracy,
        attributed_accuracy=attributed,
        n_answer_unknown=acc.n_answer_unknown,
        accuracy_answered=acc.accuracy_answered,
        n_time_like=sum(max(r.n_time_like, sum(len(sr.sentence.time_like) for sr in r.sentences)) for r in results),
        attributed_threshold=attributed_threshold,
        cases=cases,
        precision_mode=precision_mode,
        empty_policy=empty_policy,
        bootstrap={"n_resamples": n_resamples, "seed": seed, "clustered_by": "video" if cluster_by_video else None},
        **_call_counts(results),
        coverage=intervals["coverage"], precision=intervals["precision"], recall=intervals["recall"],
        f1=intervals["f1"], murgat_s=intervals["murgat_s"],
    )


def _metric_intervals(ok: Sequence[ResponseResult], cluster_by_video: bool, n_resamples: int,
                      seed: int) -> dict[str, Interval]:
    """Each of :data:`METRICS`' run-level mean with its bootstrap CI, over the records where it is
    defined (``None``: excluded or undetermined, left out)."""
    intervals: dict[str, Interval] = {}
    for m in METRICS:
        rows = [(getattr(r.scores, m), r.video or r.id) for r in ok if getattr(r.scores, m) is not None]
        vals = [v for v, _ in rows]
        cl = [c for _, c in rows] if cluster_by_video else None
        intervals[m] = bootstrap_ci(vals, cl, n_resamples, seed)
    return intervals


def _accuracies(ok: Sequence[ResponseResult], attributed_threshold: float, cluster_by_video: bool,
                n_resamples: int, seed: int) -> tuple[AccuracyFigures, Interval | None]:
    """Accuracy (:func:`accuracy_figures`) and strict attributed accuracy (right and MURGAT-S at
    least ``attributed_threshold``) over the records with a gold option; the latter ``None`` when
    none has one."""
    graded = [(r, state) for r in ok if (state := answer_state(r)) is not None]
    cl = [r.video or r.id for r, _ in graded] if cluster_by_video else None
    acc = accuracy_figures([st for _, st in graded], cl, n_resamples, seed)
    if not graded:
        return acc, None
    att = [
        1.0 if (st == "right" and r.scores.murgat_s is not None and r.scores.murgat_s >= attributed_threshold) else 0.0
        for r, st in graded
    ]
    return acc, bootstrap_ci(att, cl, n_resamples, seed)


def _call_counts(results: Sequence[ResponseResult]) -> dict[str, Any]:
    """The run's judge-call accounting, summed over every record (errors included: their calls
    were made): calls, cache hits, deduplicated, sent, judge errors, empty decompositions and
    undetermined causes."""
    return {
        "judge_calls": sum(r.judge_calls for r in results),
        "cache_hits": sum(r.cache_hits for r in results),
        "deduplicated": sum(r.deduplicated for r in results),
        "sent": sum(r.judge_calls - r.cache_hits - r.deduplicated for r in results),
        "n_judge_errors": sum(r.n_judge_errors for r in results),
        "n_empty_decompositions": sum(r.n_empty_decompositions for r in results),
        "undetermined_causes": _sum_counts(r.undetermined_causes for r in results),
    }


def items_covered(n: int | None, n_items: int) -> str:
    """What a run-level mean is over: ``over 3 of 5 items`` (errors and undefined items left out), or
    ``over all 5 items`` — a figure over part of the run must not read as the whole run's."""
    if n is None or n == n_items:
        return f"over all {n_items} items"
    return f"over {n} of {n_items} items"


#: the groups of :func:`modality_figures`: a fact's valid citations all audio, all visual, of both,
#: or none valid (such a fact is judged 0/0 and kept, so that the groups add up to every fact)
MODALITY_GROUPS: tuple[str, ...] = ("audio", "visual", "both", "none")


def fact_modality(citations: Sequence[Any]) -> str:
    """The :data:`MODALITY_GROUPS` group of a fact with these citations (only valid ones count)."""
    mods = {c.modality for c in citations if c.valid}
    if not mods:
        return "none"
    return "both" if len(mods) > 1 else next(iter(mods))


def _group_figures(n: int, n_undetermined: int, sum_p: float, sum_r: float) -> dict[str, Any]:
    p = sum_p / n if n else None
    r = sum_r / n if n else None
    return {"n_facts": n, "n_undetermined": n_undetermined, "precision": p, "recall": r,
            "f1": None if p is None or r is None else f1_score(p, r)}


def modality_figures(results: Iterable[ResponseResult]) -> dict[str, Any]:
    """Precision, recall and F1 of the judged facts per modality of their citations (``summary.json``'s
    ``by_modality``; the terminal table, the viewer and ``export --level modality`` show it).

    These are means over *facts* (every judged fact weighs the same), not the headline's means over
    responses: a run's audio facts and visual facts come from the same responses, so only fact-level
    means split without overlap. ``all`` is the same mean over every judged fact, and each group's
    figure times its ``n_facts`` sums to ``all``'s (the groups partition the facts); undefined
    (``None``) over a group with no judged fact, never 0. Undetermined facts are counted apart."""
    acc = {g: [0, 0, 0.0, 0.0] for g in MODALITY_GROUPS}
    for r in results:
        if r.error is not None:
            continue
        for sr in r.sentences:
            verdicts = {v.fact_index: v for v in sr.verdicts}
            for f in sr.facts:
                v = verdicts.get(f.index)
                if v is None:
                    continue
                a = acc[fact_modality(f.citations)]
                if v.status != "judged" or v.precision is None or v.recall is None:
                    a[1] += 1
                    continue
                a[0] += 1
                a[2] += v.precision
                a[3] += v.recall
    out: dict[str, Any] = {g: _group_figures(int(a[0]), int(a[1]), a[2], a[3]) for g, a in acc.items()}
    out["all"] = _group_figures(*(sum(a[k] for a in acc.values()) for k in range(4)))  # type: ignore[arg-type]
    return out
