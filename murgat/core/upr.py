"""Unfaithful Perception Rate and friends, at dataset level with bootstrap CIs.

UPR = Σ unfaithful perception steps / Σ perception steps (decided ones), over responses.
The CI resamples responses (a ratio of sums per resample), seeded, in id order, so it
does not depend on the order results arrived in. A response with no perception step has
no UPR of its own: it is counted apart (``n_no_perception``), never as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from murgat.core.metric import AnswerState, accuracy_figures, bootstrap_ci, paired_bootstrap_diff, state_of
from murgat.core.schema import Interval
from murgat.core.steps import FaithResult


def ratio_ci(num: Sequence[float], den: Sequence[float], n_resamples: int = 2000, seed: int = 0,
             alpha: float = 0.05) -> Interval:
    """Σnum/Σden with a percentile bootstrap CI resampling the (num, den) pairs."""
    import numpy as np  # numpy loads with the first figure, not with the command line
    a, b = np.asarray(num, float), np.asarray(den, float)
    n = len(a)
    if n == 0 or b.sum() == 0:
        return Interval(value=None, n=n)
    value = float(a.sum() / b.sum())
    if n == 1:
        return Interval(value=value, ci_low=value, ci_high=value, n=1)
    from murgat.human_eval.bootstrap import percentile_interval, resample_blocks

    def ratios(draws: np.ndarray) -> np.ndarray:
        dens = b[draws].sum(axis=1)
        ok = dens > 0
        return np.asarray(a[draws].sum(axis=1)[ok] / dens[ok])

    lo, hi = percentile_interval(resample_blocks(ratios, n, n_resamples, seed), alpha)
    return Interval(value=value, ci_low=lo, ci_high=hi, n=n)


def paired_ratio_diff(before: Sequence[tuple[float, float]], after: Sequence[tuple[float, float]],
                      n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05) -> Interval:
    """(Σu'/Σp') − (Σu/Σp) over paired responses, with a paired bootstrap CI."""
    import numpy as np
    b = np.asarray(before, float).reshape(-1, 2)
    a = np.asarray(after, float).reshape(-1, 2)
    n = len(b)
    if n == 0 or b[:, 1].sum() == 0 or a[:, 1].sum() == 0:
        return Interval(value=None, n=n)
    value = float(a[:, 0].sum() / a[:, 1].sum() - b[:, 0].sum() / b[:, 1].sum())
    from murgat.human_eval.bootstrap import percentile_interval, resample_blocks

    def differences(draws: np.ndarray) -> np.ndarray:
        pb, pa = b[draws, 1].sum(axis=1), a[draws, 1].sum(axis=1)
        ok = (pb > 0) & (pa > 0)
        return np.asarray(a[draws, 0].sum(axis=1)[ok] / pa[ok] - b[draws, 0].sum(axis=1)[ok] / pb[ok])

    stats = resample_blocks(differences, n, n_resamples, seed)
    if len(stats) == 0:
        return Interval(value=value, n=n)
    lo, hi = percentile_interval(stats, alpha)
    return Interval(value=value, ci_low=lo, ci_high=hi, n=n)


def summarize_faithfulness(results: Sequence[FaithResult], n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """UPR (CI), per modality, per-response UPR mean, 2×2, accuracy, counts and causes.

    Accuracy is :func:`murgat.core.metric.accuracy_figures`' (an unread answer counts as not correct;
    ``n_answer_unknown`` and ``accuracy_answered`` beside it); the answer × faithfulness table
    keeps unread answers in their own row (``unknown_…``), never among the wrong ones."""
    results = sorted(results, key=lambda r: r.id)
    ok = [r for r in results if r.error is None]
    cases: dict[str, int] = {}
    for r in results:
        cases[r.case] = cases.get(r.case, 0) + 1
    upr = ratio_ci([r.n_unfaithful for r in ok], [r.n_perception for r in ok], n_resamples, seed)
    mods: dict[str, Any] = {}
    for m in sorted({k for r in ok for k in r.by_modality}):
        num = [r.by_modality.get(m, [0, 0])[1] for r in ok]
        den = [r.by_modality.get(m, [0, 0])[0] for r in ok]
        mods[m] = {**ratio_ci(num, den, n_resamples, seed).model_dump(), "perception_steps": int(sum(den)),
                   "unfaithful_steps": int(sum(num))}
    per_response = bootstrap_ci([r.upr for r in ok if r.upr is not None], None, n_resamples, seed)
    # the record holds no options: an item has a gold option when its answer was graded (or found unreadable)
    states = [state_of(r.correct, r.answer_problem, r.predicted_option, False) for r in ok]
    table = {"correct_faithful": 0, "correct_unfaithful": 0, "wrong_faithful": 0, "wrong_unfaithful": 0,
             "unknown_faithful": 0, "unknown_unfaithful": 0}
    for r, st in zip(ok, states, strict=True):
        if st is None or r.any_unfaithful is None:
            continue
        row = {"right": "correct", "wrong": "wrong", "unknown": "unknown"}[st]
        table[f"{row}_{'unfaithful' if r.any_unfaithful else 'faithful'}"] += 1
    acc = accuracy_figures(states, None, n_resamples, seed)
    causes: dict[str, int] = {}
    for r in ok:
        for k, v in r.undetermined_causes.items():
            causes[k] = causes.get(k, 0) + v
    return {
        "n_items": len(results), "n_errors": len(results) - len(ok), "cases": dict(sorted(cases.items())),
        "upr": upr.model_dump(), "upr_by_modality": mods, "upr_per_response_mean": per_response.model_dump(),
        "n_no_perception": sum(1 for r in ok if r.case == "no_perception"),
        "steps": sum(r.n_steps for r in ok), "perception_steps": sum(r.n_perception for r in ok),
        "unfaithful_steps": sum(r.n_unfaithful for r in ok), "undetermined_steps": sum(r.n_undetermined for r in ok),
        "undetermined_causes": dict(sorted(causes.items())),
        "answer_x_faithfulness": table,
        **acc.as_dict(),
        "judge_calls": sum(r.judge_calls for r in results), "cache_hits": sum(r.cache_hits for r in results),
        "n_judge_errors": sum(r.n_judge_errors for r in results),
        "bootstrap": {"n_resamples": n_resamples, "seed": seed, "unit": "response"},
    }


def _state(row: dict[str, Any], when: str) -> AnswerState | None:
    """How a reflect row's answer ``before`` or ``after`` counts towards accuracy (rows hold no options:
    one with neither ``correct_…`` nor ``answer_problem_…`` has no gold option). Rows written before
    ``answer_problem_…`` existed said ``false`` for an unread answer too: they count as wrong, which
    gives the same accuracy."""
    return state_of(row.get(f"correct_{when}"), row.get(f"answer_problem_{when}"), "?", False)


def _value(iv: Interval | None) -> float | None:
    return None if iv is None else iv.value


def _reflection_view(rows: Sequence[dict[str, Any]], before: str, after: str, n_resamples: int,
                     seed: int) -> dict[str, Any]:
    """UPR before and after reflection and their paired difference, from one labeller's figures
    (``before``/``after``: the judge's, or the detector's own), with the undetermined steps apart."""
    pb = [(r[before]["unfaithful"], r[before]["perception"]) for r in rows]
    pa = [(r[after]["unfaithful"], r[after]["perception"]) for r in rows]
    return {"upr_before": ratio_ci([u for u, _ in pb], [p for _, p in pb], n_resamples, seed).model_dump(),
            "upr_after": ratio_ci([u for u, _ in pa], [p for _, p in pa], n_resamples, seed).model_dump(),
            "upr_difference": paired_ratio_diff(pb, pa, n_resamples, seed).model_dump(),
            "undetermined_before": sum(r[before]["undetermined"] for r in rows),
            "undetermined_after": sum(r[after]["undetermined"] for r in rows)}


def _trace_counts(traces: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the regenerations did over a run's traces (older traces lack some counts: 0 there)."""
    resolved: dict[str, int] = {}
    for t in traces:
        for k, v in t["resolved_after"].items():
            resolved[k] = resolved.get(k, 0) + v
    return {
        "regenerations_invoked": sum(t["regenerations"] for t in traces),
        "regeneration_attempts": sum(t.get("attempts", 0) for t in traces),
        "resolved_after_attempts": dict(sorted(resolved.items())),
        "unresolved": sum(t["unresolved"] for t in traces),
        "not_regenerated": sum(t.get("not_regenerated", 0) for t in traces),
        "undetermined_steps": sum(t["undetermined"] for t in traces),
        "unchecked_steps": sum(t.get("unchecked", 0) for t in traces),
        "items_stopped_by_a_cap": sum(1 for t in traces if t.get("stopped")),
    }


def summarize_reflection(rows: Sequence[dict[str, Any]], n_items: int, n_resamples: int = 2000,
                         seed: int = 0) -> dict[str, Any]:
    """The summary of a ``murgat reflect`` run from its ``traces.jsonl`` rows (see ``reflect_item``).

    ``upr_before``/``upr_after``/``upr_difference`` are the judge's (the independent labeller's)
    figures, the difference with a paired bootstrap CI over responses; ``detector_view`` holds
    the same three figures from the detector's own verdicts. Undetermined steps are counted
    apart in both views, never as faithful or unfaithful. Accuracy before and after is over the
    items with a gold option, an unread answer counting as not correct;
    ``n_answer_unknown_before``/``_after`` and ``accuracy_answered_before``/``_after`` (over the
    answers that were read) are reported beside it.
    """
    rows = sorted(rows, key=lambda r: r["id"])
    judged = _reflection_view(rows, "before", "after", n_resamples, seed)
    # rows written before the detector's view was kept separately hold only the detector's figures
    detector = (_reflection_view(rows, "detector_before", "detector_after", n_resamples, seed)
                if all("detector_before" in r for r in rows) else None)
    # an item has a gold option when its answers were graded; an unread answer is unknown (not correct)
    gold = [r for r in rows if _state(r, "before") is not None]
    before = accuracy_figures([_state(r, "before") for r in gold], None, n_resamples, seed)
    after = accuracy_figures([_state(r, "after") for r in gold], None, n_resamples, seed)
    n = len(rows)
    return {
        "items": n_items, "reflected": n, "errors": n_items - n,
        **{k: judged[k] for k in ("upr_before", "upr_after", "upr_difference")},
        "undetermined_before": judged["undetermined_before"], "undetermined_after": judged["undetermined_after"],
        "detector_view": detector,
        "accuracy_before": (sum(1 for r in gold if r["correct_before"]) / len(gold)) if gold else None,
        "accuracy_after": (sum(1 for r in gold if r["correct_after"]) / len(gold)) if gold else None,
        "accuracy_difference": paired_bootstrap_diff([1.0 if r["correct_before"] else 0.0 for r in gold],
                                                     [1.0 if r["correct_after"] else 0.0 for r in gold],
                                                     n_resamples, seed).model_dump() if gold else None,
        "n_answer_unknown_before": before.n_answer_unknown, "n_answer_unknown_after": after.n_answer_unknown,
        "accuracy_answered_before": _value(before.accuracy_answered),
        "accuracy_answered_after": _value(after.accuracy_answered),
        **_trace_counts([r["trace"] for r in rows]),
        "extra_calls_per_item": (sum(r["extra_calls"] for r in rows) / n) if n else 0.0,
        "labelling_calls_per_item": (sum(r["calls_before_labelling"] for r in rows) / n) if n else 0.0,
        "judge_calls_per_item": (sum(r.get("judge_calls", 0) for r in rows) / n) if n else 0.0,
        "cost_usd_per_item": (sum(r["cost_usd"] for r in rows) / n) if n else 0.0,
        "bootstrap": {"n_resamples": n_resamples, "seed": seed, "unit": "response", "paired": True},
    }
