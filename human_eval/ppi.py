"""Prediction-powered estimates: a human-valid mean from many judge scores and a few human labels.

A judge scores every item; people label a random sample of them. The human-only mean of the
sample is valid but noisy; the judge's mean is precise but biased by the judge's errors.
Prediction-powered inference (PPI, Angelopoulos et al. 2023; PPI++, Angelopoulos, Duchi &
Zrnic 2023) keeps the validity of the first and much of the precision of the second::

    θ̂(λ) = λ · mean(ŷ over the unlabelled items) + mean(y − λ·ŷ over the labelled items)

The second term measures the judge's bias where both exist and removes it. For any fixed λ the
estimate is unbiased; λ = 1 is plain PPI, λ = 0 the human-only mean, and PPI++ picks the λ that
minimises the estimate's variance (``lam=None``). Definitions follow the reference package
``ppi-python`` exactly where it has them (the tests compare to 1e-9), so that a figure in a
paper made with murgat is the figure ppi-python would give:

* the tuned λ is ``cov(y, ŷ) / ((1 + n/N) · var(ŷ ∪ ŷ_unlabelled))`` — the covariance over the
  labelled items with divisor n, the variance of the judge's scores pooled over both sets with
  divisor n + N − 1 — clipped to [0, 1];
* the standard error is ``sqrt(λ² var(ŷ_unlabelled) / N + var(y − λŷ) / n)`` with divisor-n
  variances; the interval is two-sided normal, ``θ̂ ± z(1 − α/2) · se``.

What ppi-python does not have, written here from the same estimator:

* **clusters** (whole videos as the sampling unit): the variance of the estimate is the
  cluster-robust (sandwich) one over the videos, each set's part scaled by its G/(G − 1), so a
  video with items in both sets adds their covariance (``_Design``), λ is tuned on the same
  variance, and the interval is Student's t with G − 1 degrees of freedom (G labelled videos),
  the usual small-sample guard for cluster-robust errors. Items of one video are alike (one
  model on one piece of footage, one judge leaning one way on it): treated as independent they
  make the interval too narrow — on a simulated population of videos a 90% interval that
  ignores them covers 79% of the time, the clustered one 90% (10,000 draws,
  ``benchmarks/bench_ppi.py``);
* a **ratio of means** (UPR = Σ unfaithful / Σ perception) through the delta method: the
  estimate is the ratio of the two prediction-powered means, its variance that of the linearised
  values ``num − R · den``, and λ is tuned on those (at the λ = 1 ratio);
* **paired differences** (run B − run A on the same items, one judge): the mean of differences;
* a **bootstrap** of the whole estimator (λ re-tuned in every resample; labelled and
  unlabelled sets — or their clusters — resampled separately) as a check on the normal interval;
* a **plan**: how many labels give a half-width w, from a pilot's variances.

``effective_n`` is the number of human labels a human-only mean would need for the same
variance (n · V_human-only / V_corrected): the labels the judge is "worth" on this data.

Everything is numpy; nothing here imports murgat. A figure that cannot be computed (no
labelled item, one cluster, a zero denominator) is ``None`` with ``reason`` saying why. A
variance of 0 (every labelled value and judge score alike) gives an interval of zero width: it
is returned, but with a ``reason`` saying that it understates the uncertainty, and with no
``effective_n`` (which divides by it). ``alpha`` must lie strictly between 0 and 1 (0 made the
interval infinite, 2 inverted it, NaN made it NaN, all without a word).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from murgat.human_eval.bootstrap import percentile_interval, resample_statistics

Clusters = Sequence[Any] | np.ndarray | None
Values = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class CorrectedEstimate:
    """A corrected figure: the estimate, its ``1 − alpha`` interval, and what it is made of.

    ``method``: ``ppi++`` (tuned λ), ``ppi`` (λ = 1), ``human-only`` (λ = 0) or ``ppi (λ=…)``,
    with `` bootstrap`` when the interval is a bootstrap one. ``reason`` is set when a field is
    ``None`` because it cannot be computed.
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    lam: float | None
    effective_n: float | None
    n_labelled: int
    n_unlabelled: int
    method: str
    alpha: float
    se: float | None = None
    clustered: bool = False
    n_clusters_labelled: int | None = None
    n_clusters_unlabelled: int | None = None
    reason: str | None = None
    #: what was adjusted in a figure that *is* defined (an interval cut to the figure's range, an
    #: effective n capped at the items), so that a reader knows the normal approximation strained
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __getitem__(self, key: str) -> Any:  # a mapping's access too: est["estimate"]
        return getattr(self, key)


#: the interval's quantile without clusters: ``"z"`` the normal one (ppi-python's, exact only as n
#: grows), ``"t"`` Student's t with n − 1 degrees of freedom, which keeps the nominal coverage at
#: small n (``benchmarks/bench_ppi_small_n.py``: 30 labels, 90% nominal). Clustered intervals always
#: take t with G − 1 degrees of freedom.
Quantile = Literal["z", "t"]


def _vec(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float).reshape(-1)
    if not np.isfinite(a).all():
        raise ValueError(f"{name}: every value must be a finite number (got NaN or infinity)")
    return a


def method_name(lam: float | None) -> str:
    """The estimate's name as records show it (``ppi++``, ``ppi``, ``human-only``, ``ppi (λ=…)``)."""
    if lam is None:
        return "ppi++"
    if lam == 1:
        return "ppi"
    if lam == 0:
        return "human-only"
    return f"ppi (λ={lam:g})"


class _Design:
    """Which items are independent units: each item (``clusters=None``), or each cluster.

    Without clusters the variances are ppi-python's (divisor n). With clusters the variance of the
    estimate is the cluster-robust sandwich over every cluster g of either set::

        Σ_g ( √f_l · Σ_{i∈g, labelled} (r_i − r̄)/n  +  √f_u · λ · Σ_{j∈g, unlabelled} (ŷ_j − ŷ̄)/N )²

    with r = y − λŷ and the small-sample factors f = G/(G − 1) of each set's own cluster count.
    A video with items in both sets adds their covariance; when the sets share no video it is the
    sum of the two sets' CR1 variances.
    """

    def __init__(self, clusters: Clusters, n: int, m: int, quantile: Quantile = "z"):
        self.n, self.m = n, m
        self.quantile = quantile
        self.clustered = clusters is not None
        self.g_l, self.g_u = n, m
        self.f_l = self.f_u = 1.0
        if clusters is None:
            return
        raw = np.asarray(list(clusters))
        if len(raw) != n + m:
            raise ValueError(f"clusters: one cluster per item, labelled items first then unlabelled ones "
                             f"({n} + {m} = {n + m} expected, {len(raw)} given)")
        keys = raw if raw.dtype.kind in "iub" else raw.astype(str)
        _, inv = np.unique(keys, return_inverse=True)
        inv = inv.reshape(-1)
        self.g = int(inv.max()) + 1 if len(inv) else 0
        self.inv_l, self.inv_u = inv[:n], inv[n:]
        self.g_l, self.g_u = len(set(self.inv_l.tolist())), len(set(self.inv_u.tolist()))
        self.f_l = self.g_l / (self.g_l - 1) if self.g_l > 1 else math.inf
        self.f_u = self.g_u / (self.g_u - 1) if self.g_u > 1 else math.inf

    def _sums(self, x: np.ndarray, inv: np.ndarray, scale: float) -> np.ndarray:
        return np.bincount(inv, weights=(x - x.mean()) / len(x), minlength=self.g) * math.sqrt(scale)

    def variance(self, rect: np.ndarray, yhat_u: np.ndarray, lam: float) -> float:
        """Variance of ``mean(rect) + lam · mean(yhat_u)``, the two sets drawn independently
        (or, with clusters, cluster by cluster)."""
        m = len(yhat_u)
        if not self.clustered:
            return float(rect.var() / len(rect)) + (lam**2 * float(yhat_u.var()) / m if m else 0.0)
        psi = self._sums(rect, self.inv_l, self.f_l)
        if m and lam:
            psi = psi + lam * self._sums(yhat_u, self.inv_u, self.f_u)
        return float((psi**2).sum())

    def var_human(self, y: np.ndarray) -> float:
        """Variance of the human-only mean (λ = 0)."""
        return self.variance(y, np.zeros(0), 0.0)

    def tuned_lambda(self, y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
        """The variance-minimising λ, clipped to [0, 1] (0 when the judge's scores do not vary)."""
        n, m = len(y), len(yhat_u)
        if m == 0:
            return 0.0  # nothing unlabelled: the judge adds nothing to the labelled mean
        if not self.clustered:
            pooled = np.concatenate([yhat, yhat_u])
            den = (1 + n / m) * float(pooled.var(ddof=1)) if len(pooled) > 1 else 0.0
            num = float(((y - y.mean()) * (yhat - yhat.mean())).mean())
        else:
            a = self._sums(y, self.inv_l, self.f_l)
            b = self._sums(yhat, self.inv_l, self.f_l) - self._sums(yhat_u, self.inv_u, self.f_u)
            num, den = float((a * b).sum()), float((b * b).sum())
        if den <= 0:
            return 0.0
        return float(np.clip(num / den, 0.0, 1.0))

    def too_small(self) -> str | None:
        if self.n == 0:
            return "no labelled item: nothing to correct the judge with"
        if not self.clustered and self.n < 2:
            return "one labelled item: its variance is undefined"
        if self.clustered and self.g_l < 2:
            return "the labelled items come from one cluster: a clustered variance needs two or more"
        if self.clustered and self.m and self.g_u < 2:
            return "the unlabelled items come from one cluster: a clustered variance needs two or more"
        return None


def _fit(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, lam: float | None,
         d: _Design) -> tuple[float, float, float, float]:
    """(estimate, variance of the estimate, λ used, variance of the human-only mean). With no
    unlabelled item every item is labelled, the mean of ŷ over none is undefined and the judge has
    nothing to add: λ is 0 whatever was asked (λ = 1 gave mean(y − ŷ), a difference, not the figure)."""
    lam_used = 0.0 if not len(yhat_u) else d.tuned_lambda(y, yhat, yhat_u) if lam is None else float(lam)
    rect = y - lam_used * yhat
    est = float(rect.mean() + (lam_used * yhat_u.mean() if len(yhat_u) else 0.0))
    return est, d.variance(rect, yhat_u, lam_used), lam_used, d.var_human(y)


def _check_alpha(alpha: float) -> None:
    if not (isinstance(alpha, int | float) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be strictly between 0 and 1 (0.05: a 95% interval); got {alpha}")


def _check(y: np.ndarray, yhat: np.ndarray, lam: float | None, alpha: float = 0.05) -> None:
    _check_alpha(alpha)
    if len(y) != len(yhat):
        raise ValueError(f"y and yhat pair up item by item: {len(y)} human labels, {len(yhat)} judge scores")
    if lam is not None and not (math.isfinite(lam) and 0.0 <= lam <= 1.0):
        raise ValueError(f"lam must be in [0, 1] or None (tuned); got {lam}")


def _design_or_undefined(clusters: Clusters, n: int, m: int, lam: float | None, alpha: float,
                         quantile: Quantile) -> tuple[_Design, CorrectedEstimate | None]:
    """The design of ``n`` labelled and ``m`` unlabelled items and, when they are too few to
    estimate from, the undefined estimate that says why (else None)."""
    d = _Design(clusters, n, m, quantile)
    why = d.too_small()
    return d, (undefined_estimate(n, m, lam, alpha, why, d.clustered) if why else None)


def undefined_estimate(n: int, m: int, lam: float | None, alpha: float, reason: str, clustered: bool = False,
                       method: str | None = None) -> CorrectedEstimate:
    """A figure that cannot be given (None, never 0), with the counts it had and the reason."""
    return CorrectedEstimate(estimate=None, ci_low=None, ci_high=None, lam=lam, effective_n=None, n_labelled=n,
                             n_unlabelled=m, method=method or method_name(lam), alpha=alpha, clustered=clustered,
                             reason=reason)


def prediction_powered_mean(y: Values, yhat: Values, yhat_unlabelled: Values, *,
                            alpha: float = 0.05, lam: float | None = None, clusters: Clusters = None,
                            quantile: Quantile = "z") -> CorrectedEstimate:
    """The prediction-powered mean of ``y`` with a ``1 − alpha`` interval (module docstring).

    ``y``: the human labels of the labelled items; ``yhat``: the judge's scores of the same items,
    in the same order; ``yhat_unlabelled``: the judge's scores of the other items. ``lam=None``
    tunes λ (PPI++); ``1`` is plain PPI, ``0`` the human-only mean. ``clusters``: the cluster
    (video) of every item, the labelled ones first and then the unlabelled ones, for the
    cluster-robust variance and a Student-t interval with G − 1 degrees of freedom (G labelled
    clusters). Without clusters equal to ``ppi_py.ppi_mean_ci`` / ``ppi_mean_pointestimate`` with
    ``quantile="z"`` (the default); ``"t"`` takes Student-t quantiles with n − 1 degrees of freedom
    (:data:`Quantile`).
    """
    ya, yh, yu = _vec(y, "y"), _vec(yhat, "yhat"), _vec(yhat_unlabelled, "yhat_unlabelled")
    _check(ya, yh, lam, alpha)
    n, m = len(ya), len(yu)
    d, undefined = _design_or_undefined(clusters, n, m, lam, alpha, quantile)
    if undefined is not None:
        return undefined
    est, var, lam_used, var_h = _fit(ya, yh, yu, lam, d)
    return _result(est, var, lam_used, var_h, alpha, method_name(lam), d)


def _result(est: float, var: float, lam_used: float, var_h: float | None, alpha: float, method: str,
            d: _Design) -> CorrectedEstimate:
    """``var_h``: the variance of the human-only figure, ``None`` when that figure is undefined."""
    # clustered: Student t with G − 1 df, the usual small-sample guard of cluster-robust errors
    units = d.g_l if d.clustered else d.n
    tuned = d.quantile == "t" and method == "ppi++"
    if tuned and units > 3:
        # λ is fitted on the same labels: one parameter more, one degree of freedom less, and the
        # variance taken with it (units − 1)/(units − 2), the leave-one-parameter-out correction
        var *= (units - 1) / (units - 2)
    se = math.sqrt(max(var, 0.0))
    if d.clustered or d.quantile == "t":  # unclustered "t": the small-sample guard of a mean, n − 1 df
        q = float(student_t.ppf(1 - alpha / 2, max(units - (2 if tuned and units > 3 else 1), 1)))
    else:
        q = float(norm.ppf(1 - alpha / 2))
    reason = None
    if var <= 0:
        reason = ("the variance is 0 (every labelled value and judge score alike): the interval has zero width, "
                  "which understates the uncertainty of so few labels; effective n is undefined")
    elif var_h is None:
        reason = "effective n is undefined: so is the human-only figure (the labelled items' human denominators sum to 0)"
    elif var_h <= 0:
        reason = "effective n is undefined: the human-only variance is 0 (every labelled value alike)"
    effective = d.n * var_h / var if var > 0 and var_h is not None and var_h > 0 else None
    note = None
    if effective is not None and effective > d.n + d.m:
        # labelling every item gives the figure itself: no estimate is worth more labels than there
        # are items (a larger ratio comes from a variance estimated on too few labels)
        note = (f"effective n {effective:.1f} capped at the {d.n + d.m} items: the variance ratio it comes from is "
                "estimated on too few labels to mean more")
        effective = float(d.n + d.m)
    return CorrectedEstimate(estimate=est, ci_low=est - q * se, ci_high=est + q * se, lam=lam_used,
                             effective_n=effective, n_labelled=d.n, n_unlabelled=d.m,
                             method=method, alpha=alpha, se=se, clustered=d.clustered,
                             n_clusters_labelled=d.g_l if d.clustered else None,
                             n_clusters_unlabelled=d.g_u if d.clustered else None, reason=reason, note=note)


def within(est: CorrectedEstimate, low: float, high: float) -> CorrectedEstimate:
    """``est`` with its estimate and interval cut to ``[low, high]``, the range the figure can take.

    A proportion is in [0, 1], a difference of two in [−1, 1]; the normal interval (and, on few
    labels, the corrected estimate itself) knows nothing of that, and on three labelled items gives
    coverage [0.775, 1.052]. An impossible bound says nothing the range does not, so it is cut, and
    ``note`` says so: a cut interval is a sign that the normal approximation is strained.
    """
    def cut(v: float | None) -> float | None:
        return None if v is None else min(max(v, low), high)

    vals = (est.estimate, est.ci_low, est.ci_high)
    got = tuple(cut(v) for v in vals)
    if got == vals:
        return est
    what = [f"{name} {v:.3f}" for name, v, g in zip(("estimate", "lower bound", "upper bound"), vals, got, strict=True)
            if v is not None and v != g]
    note = f"cut to the figure's range [{low:g}, {high:g}]: {', '.join(what)} lay outside it"
    return CorrectedEstimate(**{**est.to_dict(), "estimate": got[0], "ci_low": got[1], "ci_high": got[2],
                                "note": "; ".join(n for n in (est.note, note) if n)})


def prediction_powered_difference(y_a: Values, y_b: Values, yhat_a: Values,
                                  yhat_b: Values, yhat_unlabelled_a: Values,
                                  yhat_unlabelled_b: Values, *, alpha: float = 0.05, lam: float | None = None,
                                  clusters: Clusters = None, quantile: Quantile = "z") -> CorrectedEstimate:
    """B − A for two runs scored by the same judge on the same items (paired, item by item).

    The labelled items are the same in both runs (a human labelled each run's response to them);
    the estimate is the prediction-powered mean of the per-item differences, so what the two runs
    share (the item's difficulty, the judge's leaning on that video) cancels before the variance.
    """
    d_y = _vec(y_b, "y_b") - _vec(y_a, "y_a")
    d_hat = _vec(yhat_b, "yhat_b") - _vec(yhat_a, "yhat_a")
    d_u = _vec(yhat_unlabelled_b, "yhat_unlabelled_b") - _vec(yhat_unlabelled_a, "yhat_unlabelled_a")
    return prediction_powered_mean(d_y, d_hat, d_u, alpha=alpha, lam=lam, clusters=clusters, quantile=quantile)


def _ratio_fit(num: np.ndarray, den: np.ndarray, num_h: np.ndarray, den_h: np.ndarray, num_u: np.ndarray,
               den_u: np.ndarray, lam: float | None, d: _Design) -> tuple[float | None, float, float, float | None]:
    """(ratio, its delta-method variance, λ, variance of the human-only ratio); the ratio is None
    when the denominator's estimate is not positive, the last None when the human-only ratio is
    undefined (the labelled items' human denominators sum to 0)."""
    m = len(num_u)

    def means(lv: float) -> tuple[float, float]:
        tn = float((num - lv * num_h).mean() + (lv * num_u.mean() if m else 0.0))
        td = float((den - lv * den_h).mean() + (lv * den_u.mean() if m else 0.0))
        return tn, td

    lam_used = 1.0 if lam is None else float(lam)
    if not m:  # every item labelled: the judge has nothing to add (as in _fit)
        lam = lam_used = 0.0
    if lam is None:
        tn, td = means(1.0)
        if td <= 0:
            return None, 0.0, lam_used, 0.0
        r1 = tn / td  # linearise at the plain-PPI ratio, tune λ on the linearised values
        lam_used = d.tuned_lambda(num - r1 * den, num_h - r1 * den_h, num_u - r1 * den_u)
    tn, td = means(lam_used)
    if td <= 0:
        return None, 0.0, lam_used, 0.0
    r = tn / td
    var = d.variance((num - r * den) - lam_used * (num_h - r * den_h), num_u - r * den_u, lam_used) / td**2
    hd = float(den.mean())
    var_h = d.var_human(num - (num.mean() / hd) * den) / hd**2 if hd > 0 else None
    return r, var, lam_used, var_h


def prediction_powered_ratio(num: Values, den: Values, num_hat: Values,
                             den_hat: Values, num_hat_unlabelled: Values,
                             den_hat_unlabelled: Values, *, alpha: float = 0.05, lam: float | None = None,
                             clusters: Clusters = None, quantile: Quantile = "z") -> CorrectedEstimate:
    """Σ num / Σ den (e.g. UPR = unfaithful / perception steps) with a delta-method interval.

    ``num``/``den``: the human's per-item counts of the labelled items; ``*_hat``: the judge's
    counts of the same items; ``*_hat_unlabelled``: the judge's counts of the others.
    ``effective_n`` compares with the human-only ratio Σ num / Σ den of the labelled items.
    """
    nn, dd, nh, dh, nu, du = (_vec(x, k) for x, k in (
        (num, "num"), (den, "den"), (num_hat, "num_hat"), (den_hat, "den_hat"),
        (num_hat_unlabelled, "num_hat_unlabelled"), (den_hat_unlabelled, "den_hat_unlabelled")))
    if not (len(nn) == len(dd) == len(nh) == len(dh)) or len(nu) != len(du):
        raise ValueError("num, den, num_hat and den_hat pair up item by item, as do the two unlabelled arrays")
    _check(nn, nh, lam, alpha)
    n, m = len(nn), len(nu)
    d, undefined = _design_or_undefined(clusters, n, m, lam, alpha, quantile)
    if undefined is not None:
        return undefined
    r, var, lam_used, var_h = _ratio_fit(nn, dd, nh, dh, nu, du, lam, d)
    if r is None:
        return undefined_estimate(n, m, lam_used, alpha, "the denominator's estimate is not positive (nothing to divide by)",
                                  d.clustered, method=method_name(lam))
    return _result(r, var, lam_used, var_h, alpha, method_name(lam), d)


def _units(keys: Sequence[str] | None, n: int) -> list[np.ndarray] | None:
    if keys is None:
        return None
    _, inv = np.unique(np.asarray(list(keys), dtype=object).astype(str), return_inverse=True)
    inv = inv.reshape(-1)
    return [np.flatnonzero(inv == k) for k in range(int(inv.max()) + 1)] if n else []


def _expand(pick: np.ndarray, units: list[np.ndarray] | None, tag: str) -> tuple[np.ndarray, list[str] | None]:
    """Item positions of one resample from its draw (the items themselves, or whole clusters) and,
    for clusters, each drawn item's cluster in the resample (a cluster drawn twice is two clusters)."""
    if units is None:
        return pick, None
    idx = np.concatenate([units[k] for k in pick]) if len(pick) else np.zeros(0, int)
    return idx, [f"{tag}{j}" for j, k in enumerate(pick) for _ in range(len(units[k]))]


def bootstrap_corrected(estimate: Callable[..., CorrectedEstimate], arrays_labelled: Sequence[Values],
                        arrays_unlabelled: Sequence[Values], *, alpha: float = 0.05, lam: float | None = None,
                        clusters: Clusters = None, n_resamples: int = 2000, seed: int = 0,
                        progress: Callable[[int], None] | None = None) -> CorrectedEstimate:
    """A percentile bootstrap interval for ``estimate`` (``prediction_powered_mean`` or ``…_ratio``).

    ``arrays_labelled`` are its labelled arguments in order (``y, yhat`` or ``num, den, num_hat,
    den_hat``), ``arrays_unlabelled`` its unlabelled ones. The labelled and the unlabelled items
    (with ``clusters``, each set's clusters) are resampled separately, as two independent samples,
    and the whole estimator — λ tuning included — is recomputed in each resample; the point
    estimate is the full data's. (A video with items in both sets is two units here; the normal
    interval's covariance term is then the better guide.)
    """
    lab = [_vec(a, "labelled") for a in arrays_labelled]
    unl = [_vec(a, "unlabelled") for a in arrays_unlabelled]
    full = estimate(*lab, *unl, alpha=alpha, lam=lam, clusters=clusters)
    if full.estimate is None:
        return full
    n, m = len(lab[0]), len(unl[0])
    keys = None if clusters is None else [str(c) for c in clusters]
    ul, uu = _units(keys[:n] if keys else None, n), _units(keys[n:] if keys else None, m)

    def statistic(pick_l: np.ndarray, pick_u: np.ndarray) -> float | None:
        il, kl = _expand(pick_l, ul, "l")
        iu, ku = _expand(pick_u, uu, "u") if m else (np.zeros(0, int), [])
        got = estimate(*(a[il] for a in lab), *(a[iu] for a in unl), alpha=alpha, lam=lam,
                       clusters=None if keys is None else [*(kl or []), *(ku or [])])
        return got.estimate

    # labelled and unlabelled items (or their clusters) are two samples, drawn in that order
    sizes = [n if ul is None else len(ul), 0 if not m else (m if uu is None else len(uu))]
    stats = resample_statistics(statistic, sizes, n_resamples, seed, progress=progress)
    base = {**full.to_dict(), "method": full.method + " bootstrap"}
    if len(stats) < max(10, n_resamples // 2):
        return CorrectedEstimate(**{**base, "ci_low": None, "ci_high": None,
                                    "reason": f"only {len(stats)} of {n_resamples} resamples gave an estimate"})
    lo, hi = percentile_interval(stats, alpha)
    return CorrectedEstimate(**{**base, "ci_low": lo, "ci_high": hi})


def labels_needed(y: Values, yhat: Values, yhat_unlabelled: Values, *, half_width: float,
                  alpha: float = 0.05, clusters: Clusters = None) -> dict[str, Any]:
    """How many labelled items give a ``1 − alpha`` interval of half-width ``half_width``?

    From a pilot (its labels ``y``, the judge's scores ``yhat`` of the same items and of the
    others): the variances of y and ŷ and their covariance are taken as the population's, the
    population size as fixed (pilot + unlabelled), and for each candidate n the variance of the
    PPI++ estimate at its optimal λ is ``(σ²_y − 2λc + λ²σ²_ŷ)/n + λ²σ²_ŷ/(P − n)``. The smallest n
    that reaches the half-width is returned, beside the human-only n (z²σ²_y/w²). With
    ``clusters`` both are multiplied by the pilot's design effect (its clustered over its
    unclustered variance of the corrected mean) and also given in clusters (÷ the mean cluster
    size): an approximation that is as good as the pilot's clusters are typical.
    """
    ya, yh, yu = _vec(y, "y"), _vec(yhat, "yhat"), _vec(yhat_unlabelled, "yhat_unlabelled")
    _check(ya, yh, None, alpha)
    if not (half_width > 0 and math.isfinite(half_width)):
        raise ValueError(f"half_width must be a positive finite number; got {half_width}")
    n0, m0 = len(ya), len(yu)
    if n0 < 2:
        return {"n_needed": None, "reason": "the pilot needs two or more labelled items"}
    pop = n0 + m0
    z = float(norm.ppf(1 - alpha / 2))
    s_y = float(ya.var(ddof=1))
    if s_y <= 0:
        return _flat_pilot(ya, half_width, alpha, pop)
    s_h = float(np.concatenate([yh, yu]).var(ddof=1))
    c = float(np.cov(ya, yh, ddof=1)[0, 1])
    s_h_pilot = float(yh.var(ddof=1))  # the correlation is the pilot's own: both variances over the labelled items
    deff, mean_size = 1.0, None
    if clusters is not None:
        got = _pilot_design_effect(clusters, ya, yh, yu)
        if isinstance(got, str):
            return {"n_needed": None, "reason": f"pilot: {got}"}
        deff, mean_size = got

    def var_at(k: int) -> tuple[float, float]:
        return _planned_variance(k, pop, s_y, s_h, c)

    target = (half_width / z) ** 2 / deff
    n_ppi = next((k for k in range(2, pop + 1) if var_at(k)[0] <= target), None)
    n_h = max(2, math.ceil(z**2 * s_y * deff / half_width**2))
    out: dict[str, Any] = {
        "half_width": half_width, "alpha": alpha, "population": pop, "pilot_n": n0,
        "pilot": {"var_human": s_y, "var_judge": s_h, "cov": c,
                  "corr": c / math.sqrt(s_y * s_h_pilot) if s_y > 0 and s_h_pilot > 0 else None},
        "n_needed": n_ppi, "lambda_at_n": var_at(n_ppi)[1] if n_ppi else None,
        "n_needed_human_only": n_h if n_h <= pop else None,
        "half_width_at_pilot_n": z * math.sqrt(var_at(n0)[0] * deff),
        "design_effect": deff if clusters is not None else None,
    }
    if mean_size:
        out["mean_cluster_size"] = mean_size
        out["clusters_needed"] = math.ceil(n_ppi / mean_size) if n_ppi else None
        out["clusters_needed_human_only"] = math.ceil(n_h / mean_size) if n_h <= pop else None
    if n_ppi is None:
        out["reason"] = f"even labelling all {pop} items does not reach ±{half_width:g}"
    return out


def _flat_pilot(ya: np.ndarray, half_width: float, alpha: float, pop: int) -> dict[str, Any]:
    """The plan of a pilot whose labels are all equal: none. A variance of 0 would make two labels
    "enough" for any half-width, which says nothing about the population, only about a pilot too
    small to see its spread."""
    return {"n_needed": None, "n_needed_human_only": None, "half_width": half_width, "alpha": alpha,
            "population": pop, "pilot_n": len(ya),
            "reason": f"the pilot's {len(ya)} labels are all {float(ya[0]):g} (variance 0), so they say nothing about "
                      "how much labels vary and no number of labels can be planned from them; label a pilot "
                      "in which the figure takes different values"}


def _pilot_design_effect(clusters: Clusters, ya: np.ndarray, yh: np.ndarray,
                         yu: np.ndarray) -> tuple[float, float] | str:
    """(design effect, mean cluster size) of a clustered pilot — its clustered over its unclustered
    variance of the corrected mean, at least 1 — or why it has none (too few clusters)."""
    n0, m0 = len(ya), len(yu)
    d = _Design(clusters, n0, m0)
    why = d.too_small()
    if why:
        return why
    lam0 = d.tuned_lambda(ya, yh, yu)
    iid = _Design(None, n0, m0).variance(ya - lam0 * yh, yu, lam0)
    deff = max(1.0, d.variance(ya - lam0 * yh, yu, lam0) / iid) if iid > 0 else 1.0
    return deff, (n0 + m0) / d.g


def _planned_variance(k: int, pop: int, s_y: float, s_h: float, c: float) -> tuple[float, float]:
    """(variance of the PPI++ mean with ``k`` of ``pop`` items labelled, its optimal λ), from the
    pilot's human variance ``s_y``, judge variance ``s_h`` and their covariance ``c``."""
    rest = pop - k
    if rest <= 0 or s_h <= 0:
        return s_y / k, 0.0
    lv = float(np.clip(c / (s_h * (1 + k / rest)), 0.0, 1.0))
    return (s_y - 2 * lv * c + lv**2 * s_h) / k + lv**2 * s_h / rest, lv
