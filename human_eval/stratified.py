"""Stratified prediction-powered inference: one corrected figure from labels drawn stratum by stratum.

``murgat annotate --sample N --strata FIELD`` draws the labelled items within each stratum (each
value of an item field: task type, duration, dataset …) rather than over the whole run. Two things
follow, and both are why this module exists:

* **The plain estimator is then wrong** whenever the strata are not labelled in proportion to their
  size (a Neyman allocation puts more labels where the judge and the people disagree more): the
  labelled items over-represent some strata, and one mean over them is biased. The stratified
  estimate weights each stratum by its share of the population::

      θ̂ = Σ_h W_h · θ̂_h,   W_h = N_h / N,   Var(θ̂) = Σ_h W_h² · Var(θ̂_h)

  where θ̂_h is the prediction-powered mean of stratum h alone
  (:func:`murgat.human_eval.ppi.prediction_powered_mean`: PPI++ with its own λ_h, λ = 1 for plain
  PPI, λ = 0 for the human-only mean) and N_h counts the stratum's items in the figure's
  population (labelled and not). Strata are drawn independently, so their variances add.
* **It is narrower** when the strata differ in how much the judge and the people disagree: the
  between-strata part of the variance is gone, and labels go where they buy most.

The interval is Student's t with the Welch–Satterthwaite degrees of freedom of the combined
variance (each stratum's own: n_h − 1, one fewer for a tuned λ, G_h − 1 clustered), so that a few
small strata do not borrow the confidence of the large ones. A stratum with fewer than two labels
(or whose labels come from one video, clustered) has no variance, and then neither has the whole:
the estimate is ``None`` with a reason that names the stratum. Never 0.

:func:`allocate` splits a sample over strata (in proportion to their sizes, or to size × the
disagreement's standard deviation: Neyman), and :func:`plan_strata` says how many labels each
stratum needs for a target half-width. Nothing here imports murgat beyond ``human_eval``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from murgat.human_eval.ppi import (
    Clusters,
    CorrectedEstimate,
    Quantile,
    Values,
    method_name,
    prediction_powered_mean,
    undefined_estimate,
)

#: the fewest labels a stratum is given when a sample is split over strata: two make a variance
MIN_PER_STRATUM = 2


@dataclass(frozen=True)
class StratumData:
    """One stratum's figures: the human labels and the judge's scores of its labelled items (in the
    same order), the judge's scores of its other items, and (clustered) each item's video."""

    y: Values
    yhat: Values
    yhat_unlabelled: Values
    clusters: Clusters = None


@dataclass(frozen=True)
class StratifiedEstimate:
    """The combined estimate and, per stratum, what it is made of (weight, counts, θ̂_h, se_h, λ_h)."""

    overall: CorrectedEstimate
    strata: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.overall.to_dict(), "strata": self.strata}


def _df(est: CorrectedEstimate) -> int:
    """The degrees of freedom of one stratum's interval, as :mod:`murgat.human_eval.ppi` takes them."""
    units = est.n_clusters_labelled if est.clustered and est.n_clusters_labelled else est.n_labelled
    return max(units - (2 if est.method == "ppi++" and units > 3 else 1), 1)


def _stratum_row(est: CorrectedEstimate, weight: float) -> dict[str, Any]:
    return {"weight": weight, "n_labelled": est.n_labelled, "n_unlabelled": est.n_unlabelled,
            "estimate": est.estimate, "se": est.se, "lambda": est.lam,
            **({"reason": est.reason} if est.reason else {})}


def _combine(fits: Mapping[str, CorrectedEstimate], weights: Mapping[str, float], alpha: float,
             quantile: Quantile) -> tuple[float, float, float]:
    """(θ̂, Var θ̂, the interval's quantile) of defined per-stratum fits."""
    est = sum(weights[h] * float(f.estimate or 0.0) for h, f in fits.items())
    parts = {h: weights[h] ** 2 * float(f.se or 0.0) ** 2 for h, f in fits.items()}
    var = sum(parts.values())
    if quantile == "z":
        return est, var, float(norm.ppf(1 - alpha / 2))
    denom = sum(parts[h] ** 2 / _df(f) for h, f in fits.items())
    df = var**2 / denom if denom > 0 else float(sum(_df(f) for f in fits.values()))
    return est, var, float(student_t.ppf(1 - alpha / 2, max(df, 1.0)))


def stratified_mean(strata: Mapping[str, StratumData], *, alpha: float = 0.05, lam: float | None = None,
                    quantile: Quantile = "t") -> StratifiedEstimate:
    """The stratified prediction-powered mean (module docstring) with a ``1 − alpha`` interval.

    ``strata``: stratum name → its data; the weights are the strata's item counts (labelled +
    unlabelled) over the total. ``lam`` as in ``prediction_powered_mean`` (None: PPI++ per stratum).
    Undefined — every number ``None`` and a ``reason`` naming the stratum — when a stratum has too
    few labels for a variance. ``effective_n`` compares with the stratified human-only mean.
    """
    sizes = {h: len(np.asarray(d.y).reshape(-1)) + len(np.asarray(d.yhat_unlabelled).reshape(-1))
             for h, d in strata.items()}
    total = sum(sizes.values())
    n_lab = sum(len(np.asarray(d.y).reshape(-1)) for d in strata.values())
    method, clustered = f"stratified {method_name(lam)}", any(d.clusters is not None for d in strata.values())
    if total == 0:
        return StratifiedEstimate(undefined_estimate(0, 0, None, alpha, "no item in any stratum", clustered, method))
    weights = {h: sizes[h] / total for h in strata}
    fits = {h: prediction_powered_mean(d.y, d.yhat, d.yhat_unlabelled, alpha=alpha, lam=lam, clusters=d.clusters,
                                       quantile=quantile) for h, d in strata.items() if sizes[h]}
    rows = {h: _stratum_row(f, weights[h]) for h, f in fits.items()}
    bad = next(((h, f.reason) for h, f in fits.items() if f.estimate is None), None)
    if bad is not None:
        reason = f"stratum {bad[0]!r}: {bad[1]} (a stratified estimate needs a variance in every stratum)"
        return StratifiedEstimate(undefined_estimate(n_lab, total - n_lab, None, alpha, reason, clustered, method), rows)
    est, var, q = _combine(fits, weights, alpha, quantile)
    se = math.sqrt(max(var, 0.0))
    zero = [h for h, f in fits.items() if not f.se]
    why_zero = (f"the variance is 0 in stratum(s) {', '.join(map(repr, zero))} (every labelled value and judge score "
              "alike): the interval understates the uncertainty of so few labels") if zero else None
    human = {h: prediction_powered_mean(d.y, d.yhat, d.yhat_unlabelled, alpha=alpha, lam=0.0, clusters=d.clusters,
                                        quantile=quantile) for h, d in strata.items() if sizes[h]}
    var_h = sum(weights[h] ** 2 * float(f.se or 0.0) ** 2 for h, f in human.items())
    effective = min(n_lab * var_h / var, float(total)) if var > 0 and var_h > 0 else None
    overall = CorrectedEstimate(estimate=est, ci_low=est - q * se, ci_high=est + q * se, lam=None,
                                effective_n=effective, n_labelled=n_lab, n_unlabelled=total - n_lab, method=method,
                                alpha=alpha, se=se, clustered=clustered, reason=why_zero)
    return StratifiedEstimate(overall, rows)


def _shares(left: int, free: list[str], scale: Mapping[str, float]) -> dict[str, float]:
    """``left`` split over ``free`` in proportion to ``scale`` (equally when every scale is 0)."""
    a = sum(scale[h] for h in free)
    return {h: left * (scale[h] / a if a > 0 else 1 / len(free)) for h in free}


def _round(ideal: Mapping[str, float], sizes: Mapping[str, int], total: int) -> dict[str, int]:
    """Whole counts from real shares that sum to ``total``: floors, then the largest remainders
    (ties by name), never more than a stratum has."""
    out = {h: min(math.floor(x), sizes[h]) for h, x in ideal.items()}
    for h in sorted(ideal, key=lambda h: (-(ideal[h] - math.floor(ideal[h])), h)):
        if sum(out.values()) >= total:
            break
        if out[h] < sizes[h]:
            out[h] += 1
    return out


def allocate(total: int, sizes: Mapping[str, int], sd: Mapping[str, float] | None = None,
             minimum: int = MIN_PER_STRATUM) -> dict[str, int]:
    """``total`` labels split over strata of ``sizes`` items: in proportion to N_h, or with ``sd``
    (each stratum's standard deviation of human − judge) to N_h · S_h (Neyman). Every stratum gets
    at least ``minimum`` (all its items when it has fewer) and at most its items; a ``total`` that
    cannot give every stratum its minimum is a ``ValueError`` saying so; one over the population
    takes it all."""
    if total < 1:
        raise ValueError(f"a sample needs n ≥ 1 (got {total})")
    floor_ = {h: min(minimum, n) for h, n in sizes.items()}
    if total < sum(floor_.values()):
        raise ValueError(f"a stratified sample of {total} cannot give each of the {len(sizes)} strata {minimum} labels "
                         f"(a variance needs two): draw at least {sum(floor_.values())}, or stratify by a coarser field")
    total = min(total, sum(sizes.values()))
    scale = {h: n * (1.0 if sd is None else max(float(sd[h]), 0.0)) for h, n in sizes.items()}
    fixed: dict[str, float] = {}
    while True:
        free = [h for h in sizes if h not in fixed]
        ideal = {**fixed, **_shares(total - int(sum(fixed.values())), free, scale)} if free else dict(fixed)
        over = {h: float(sizes[h]) for h in free if ideal[h] > sizes[h]}
        under = {h: float(floor_[h]) for h in free if ideal[h] < floor_[h]}
        if not (over or under):
            return _round(ideal, sizes, total)
        fixed.update(over or under)


def plan_variance(counts: Mapping[str, int], sizes: Mapping[str, int], sd: Mapping[str, float],
                  sd_judge: Mapping[str, float]) -> float:
    """The variance of the stratified plain-PPI estimate with ``counts`` labels per stratum:
    Σ W_h² (S²_h / n_h + S²_ŷ,h / (N_h − n_h)), the second term 0 when a stratum is labelled whole.
    PPI++ tunes λ_h to do no worse, so a plan made with it is on the safe side."""
    total = sum(sizes.values())
    var = 0.0
    for h, n_h in counts.items():
        w = sizes[h] / total
        rest = sizes[h] - n_h
        var += w**2 * (sd[h] ** 2 / n_h + (sd_judge[h] ** 2 / rest if rest > 0 else 0.0))
    return var


def plan_strata(sizes: Mapping[str, int], sd: Mapping[str, float], sd_judge: Mapping[str, float], *,
                half_width: float, alpha: float = 0.05) -> dict[str, Any]:
    """The fewest labels, Neyman-allocated (:func:`allocate` with ``sd``), whose stratified interval
    has half-width ``half_width``: the smallest total n with z(1 − α/2) · √:func:`plan_variance` ≤
    ``half_width``. Returns the allocation, the half-width it reaches and, when even labelling every
    item does not reach it, ``None`` with the reason."""
    if not (half_width > 0 and math.isfinite(half_width)):
        raise ValueError(f"half_width must be a positive finite number; got {half_width}")
    z = float(norm.ppf(1 - alpha / 2))
    target = (half_width / z) ** 2
    start = sum(min(MIN_PER_STRATUM, n) for n in sizes.values())
    for n in range(max(start, 1), sum(sizes.values()) + 1):
        counts = allocate(n, sizes, sd)
        var = plan_variance(counts, sizes, sd, sd_judge)
        if var <= target:
            return {"n_needed": n, "allocation": counts, "half_width_reached": z * math.sqrt(var), "z": z}
    return {"n_needed": None, "allocation": None, "half_width_reached": None, "z": z,
            "reason": f"even labelling all {sum(sizes.values())} items does not reach ±{half_width:g}"}
