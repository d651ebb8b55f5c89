"""Agreement statistics between a judge and people, and between people.

Everything returns plain dicts of floats (JSON-ready). Confidence intervals are seeded
percentile bootstraps over the paired items (10,000 resamples by default), p-values come
from scipy's tests. Depends on nothing else of murgat's.

Corrected (human-valid) estimates from judge scores and a labelled sample live in
``murgat.human_eval.ppi``; :func:`prediction_powered_mean` is also reachable from here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats as sps

from murgat.human_eval.bootstrap import percentile_interval, resample_statistics
from murgat.human_eval.ppi import CorrectedEstimate as CorrectedEstimate
from murgat.human_eval.ppi import prediction_powered_mean as prediction_powered_mean


def confusion(pred: Sequence[bool], gold: Sequence[bool]) -> dict[str, int]:
    p, g = np.asarray(pred, bool), np.asarray(gold, bool)
    return {"tp": int((p & g).sum()), "fp": int((p & ~g).sum()), "fn": int((~p & g).sum()), "tn": int((~p & ~g).sum())}


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Cohen's κ for two label sequences (any hashable labels); None when undefined.

    With one value only on both sides (every verdict ``yes``) the agreement expected by chance is 1
    and κ = 0/0: undefined, as Krippendorff's α is on the same data (:func:`chance_reason` says why),
    so that the two coefficients never tell different stories about one table.
    """
    if len(a) != len(b) or not a:
        return None
    labels = sorted(set(a) | set(b), key=str)
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pe = sum((list(a).count(lab) / n) * (list(b).count(lab) / n) for lab in labels)
    if pe == 1:
        return None
    return float((po - pe) / (1 - pe))


def chance_reason(*sequences: Sequence[Any]) -> str | None:
    """Why a chance-corrected agreement (κ, α) of these values is undefined, or ``None`` when it is not
    for that reason: every value is the same one, so chance alone agrees always and nothing is left
    to agree beyond it."""
    values = {v for s in sequences for v in s if v is not None}
    if not values:
        return "no values to compare"
    if len(values) == 1:
        v = next(iter(values))
        word = {True: "yes", False: "no"}.get(v, v) if isinstance(v, bool) else v
        return f"every value is {word!r}: chance agreement is 1, so agreement beyond chance is undefined"
    return None


def binary_agreement(pred: Sequence[bool], gold: Sequence[bool]) -> dict[str, Any]:
    """Accuracy, balanced accuracy, precision/recall/F1 of the positive class, Cohen's κ."""
    c = confusion(pred, gold)
    n = len(pred)
    tp, fp, fn, tn = c["tp"], c["fp"], c["fn"], c["tn"]
    prec = tp / (tp + fp) if tp + fp else None
    rec = tp / (tp + fn) if tp + fn else None
    spec = tn / (tn + fp) if tn + fp else None
    f1 = 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else None
    bal = (rec + spec) / 2 if rec is not None and spec is not None else None
    kappa = cohen_kappa(list(pred), list(gold))
    out: dict[str, Any] = {"n": n, "accuracy": (tp + tn) / n if n else None, "balanced_accuracy": bal,
                           "precision": prec, "recall": rec, "f1": f1, "kappa": kappa, **c}
    if kappa is None:
        out["kappa_reason"] = chance_reason(list(pred), list(gold)) or "no paired items"
    if bal is None:
        out["balanced_accuracy_reason"] = ("no human 'yes' label: recall is undefined" if rec is None else
                                           "no human 'no' label: specificity is undefined")
    return out


Progress = Callable[[int], None]
"""Called after each resample with the number done (``murgat calibrate`` shows a bar with it)."""


def _boot(x: np.ndarray, y: np.ndarray, fn: Any, n_resamples: int, seed: int, alpha: float = 0.05,
          progress: Progress | None = None) -> tuple[float | None, float | None]:
    def statistic(idx: np.ndarray) -> float | None:
        xs, ys = x[idx], y[idx]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            return None  # the coefficient is undefined on a constant side
        v = fn(xs, ys)
        return None if v is None or math.isnan(v) else v

    # progress every 100th resample: a bar's update costs more than a resample
    vals = resample_statistics(statistic, [len(x)], n_resamples, seed, progress=progress, progress_every=100)
    if len(vals) < max(10, n_resamples // 10):
        return None, None
    return percentile_interval(vals, alpha)


def correlations(x: Sequence[float], y: Sequence[float], n_resamples: int = 10_000, seed: int = 0,
                 progress: Progress | None = None) -> dict[str, Any]:
    """Pearson, Spearman and Kendall (τ-b) with p-values and bootstrap 95% CIs.

    Resamples where one side is constant are skipped (the coefficient is undefined there).
    ``progress`` is called with the resamples done so far, over the three coefficients
    (3 × ``n_resamples`` in all when they are defined).
    """
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    out: dict[str, Any] = {"n": len(xa)}
    fns: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {  # scipy's results: (statistic, p-value)
        "pearson": lambda a, b: sps.pearsonr(a, b),
        "spearman": lambda a, b: sps.spearmanr(a, b),
        "kendall": lambda a, b: sps.kendalltau(a, b),
    }
    for name, fn in fns.items():
        if len(xa) < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
            out[name] = {"value": None, "p_value": None, "ci_low": None, "ci_high": None}
            continue
        res = fn(xa, ya)
        stat, p = float(res[0]), float(res[1])
        step: Progress | None = None
        if progress is not None:
            done, report = list(fns).index(name) * n_resamples, progress

            def step(k: int, done: int = done, report: Progress = report) -> None:
                report(done + k)
        lo, hi = _boot(xa, ya, lambda a, b, f=fn: float(f(a, b)[0]), n_resamples, seed, progress=step)
        out[name] = {"value": stat, "p_value": p, "ci_low": lo, "ci_high": hi}
    return out


def _anova(y: np.ndarray) -> tuple[float, float, float, int, int]:
    n, k = y.shape
    grand = y.mean()
    ss_rows = k * ((y.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((y.mean(axis=0) - grand) ** 2).sum()
    ss_total = ((y - grand) ** 2).sum()
    ss_err = ss_total - ss_rows - ss_cols
    msr = ss_rows / (n - 1)
    msc = ss_cols / (k - 1)
    mse = ss_err / ((n - 1) * (k - 1))
    return msr, msc, mse, n, k


def icc(ratings: Sequence[Sequence[float]] | np.ndarray) -> dict[str, float | None]:
    """Shrout & Fleiss ICCs for an ``n targets × k raters`` matrix with no missing cells.

    ICC(3,1): two-way mixed, consistency, single rater — raters are the fixed set studied
    (e.g. a judge and the mean human). ICC(2,1): two-way random, absolute agreement.
    ICC(1,1): one-way random.
    """
    y = np.asarray(ratings, float)
    if y.ndim != 2 or y.shape[0] < 2 or y.shape[1] < 2:
        raise ValueError("icc needs an n×k matrix with n ≥ 2 targets and k ≥ 2 raters")
    if np.isnan(y).any():
        raise ValueError("icc needs a complete matrix (no missing ratings)")
    msr, msc, mse, n, k = _anova(y)
    msw = (((y - y.mean(axis=1, keepdims=True)) ** 2).sum()) / (n * (k - 1))

    def safe(num: float, den: float) -> float | None:
        return None if den == 0 else float(num / den)

    return {
        "icc1_1": safe(msr - msw, msr + (k - 1) * msw),
        "icc2_1": safe(msr - mse, msr + (k - 1) * mse + k * (msc - mse) / n),
        "icc3_1": safe(msr - mse, msr + (k - 1) * mse),
        "icc3_k": safe(msr - mse, msr),
        "n_targets": n,
        "k_raters": k,
    }


def icc_with_ci(ratings: Sequence[Sequence[float]] | np.ndarray, alpha: float = 0.05, n_resamples: int = 2000,
                seed: int = 0) -> dict[str, Any]:
    """ICC(3,1), ICC(3,k) with exact F-based CIs (Shrout & Fleiss; McGraw & Wong) and ICC(2,1)
    with a percentile bootstrap CI over targets (its exact interval needs approximate df)."""
    from scipy import stats as st

    y = np.asarray(ratings, float)
    base = icc(y)
    msr, _msc, mse, n, k = _anova(y)
    out: dict[str, Any] = dict(base)
    df1, df2 = n - 1, (n - 1) * (k - 1)
    if mse > 0 and msr > 0:
        f_obs = msr / mse
        fl = f_obs / st.f.ppf(1 - alpha / 2, df1, df2)
        fu = f_obs * st.f.ppf(1 - alpha / 2, df2, df1)
        out["icc3_1_ci"] = [float((fl - 1) / (fl + k - 1)), float((fu - 1) / (fu + k - 1))]
        out["icc3_k_ci"] = [float(1 - 1 / fl), float(1 - 1 / fu)]
        out["f"] = float(f_obs)
        out["p_value"] = float(st.f.sf(f_obs, df1, df2))
    else:
        out["icc3_1_ci"] = out["icc3_k_ci"] = None
    def icc2_1(idx: np.ndarray) -> float | None:
        sample = y[idx]
        if np.allclose(sample, sample[0]):
            return None
        v = icc(sample)["icc2_1"]
        return v if v is not None and np.isfinite(v) else None

    boots = resample_statistics(icc2_1, [n], n_resamples, seed)
    out["icc2_1_ci"] = list(percentile_interval(boots, alpha)) if len(boots) else None
    return out


def fleiss_kappa(labels_per_item: Sequence[Sequence[Any]]) -> float | None:
    """Fleiss' κ for items rated by the same number of raters (≥ 2)."""
    items = [list(x) for x in labels_per_item if len(x) >= 2]
    if not items:
        return None
    m = len(items[0])
    items = [x for x in items if len(x) == m]
    cats = sorted({lab for x in items for lab in x}, key=str)
    counts = np.array([[x.count(c) for c in cats] for x in items], float)
    n = len(items)
    p_j = counts.sum(axis=0) / (n * m)
    p_i = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    pbar, pe = p_i.mean(), (p_j**2).sum()
    return None if pe == 1 else float((pbar - pe) / (1 - pe))


def pairwise_cohen_kappa(ratings: Mapping[str, Mapping[Hashable, Any]]) -> list[dict[str, Any]]:
    """Cohen's κ and raw agreement for every pair of raters (``{rater: {unit: label}}``), on the
    units both rated: murgat's one pairwise κ (:func:`pairwise_kappa` is the mean of its rows)."""
    out = []
    for a, b in itertools.combinations(sorted(ratings), 2):
        shared = sorted(set(ratings[a]) & set(ratings[b]), key=repr)
        xa, xb = [ratings[a][u] for u in shared], [ratings[b][u] for u in shared]
        kappa = cohen_kappa(xa, xb) if shared else None
        out.append({"a": a, "b": b, "n": len(shared), "kappa": kappa,
                    "agreement": sum(x == y for x, y in zip(xa, xb, strict=True)) / len(shared) if shared else None,
                    **({"reason": chance_reason(xa, xb) or "no unit both rated"} if kappa is None else {})})
    return out


def pairwise_kappa(by_annotator: Mapping[str, Mapping[Hashable, Any]]) -> float | None:
    """Mean Cohen's κ over annotator pairs, each on the items both labelled (pairs sharing fewer
    than two items, or whose κ is undefined, left out); None when no pair counts."""
    vals = [p["kappa"] for p in pairwise_cohen_kappa(by_annotator) if p["n"] >= 2 and p["kappa"] is not None]
    return float(np.mean(vals)) if vals else None


def ranking_tau(a: dict[str, float], b: dict[str, float]) -> dict[str, Any]:
    """Kendall τ between two rankings of the same systems (e.g. by judge vs human MURGAT-S)."""
    keys = sorted(set(a) & set(b))
    if len(keys) < 2:
        return {"tau": None, "p_value": None, "n_systems": len(keys)}
    res = sps.kendalltau([a[k] for k in keys], [b[k] for k in keys])
    return {"tau": float(res[0]), "p_value": float(res[1]), "n_systems": len(keys)}


ABSTAINED, UNANSWERED = "abstained", "unanswered"


def agreement_with_abstentions(pred: Sequence[bool | str], gold: Sequence[bool]) -> dict[str, Any] | None:
    """:func:`binary_agreement` on the items the judge answered, and what its silences cost.

    ``pred`` holds the judge's decision per human-labelled item, or ``"abstained"`` (it said it
    cannot tell) or ``"unanswered"`` (no readable answer: an error, an unparseable reply, no
    verdict at all). Beside the figures over answered items (unchanged by silences, and ``None``
    with a ``reason`` when there are none) come the counts, the accuracy when every silence
    counts as a disagreement, and κ with a silence as a category of its own. ``None`` when no
    item was labelled at all.
    """
    if len(pred) != len(gold):
        raise ValueError("pred and gold pair up item by item")
    if not pred:
        return None
    answered = [(p, g) for p, g in zip(pred, gold, strict=True) if isinstance(p, bool)]
    out = binary_agreement([p for p, _ in answered], [g for _, g in answered])
    n_abst = sum(1 for p in pred if p == ABSTAINED)
    n_unans = sum(1 for p in pred if p == UNANSWERED)
    out.update({
        "n_labelled": len(pred), "n_abstained": n_abst, "n_unanswered": n_unans,
        "accuracy_silence_as_disagreement": sum(p == g for p, g in answered) / len(pred),
        "kappa_silence_as_category": cohen_kappa([p if isinstance(p, bool) else "silent" for p in pred], list(gold)),
    })
    if not answered:
        out["reason"] = (f"the judge answered none of the {len(pred)} labelled items "
                         f"({n_abst} abstained, {n_unans} could not be answered)")
    return out
