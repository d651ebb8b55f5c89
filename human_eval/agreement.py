"""Agreement between judges on the same responses, and how alike their mistakes are.

Two judges that agree with each other are not thereby right, and several judges are worth as
much as their errors are independent: six judges whose errors against people correlate act like
fewer independent ones (inspect_ai #4955). So beside the judges' agreement with each other —
Cohen's κ for each pair (:func:`murgat.human_eval.stats.pairwise_cohen_kappa`), Krippendorff's α
(nominal) across all of them, missing answers allowed — this module measures, where human labels
exist, the correlation of the judges' *errors* (φ of the "wrong on this unit" indicators, or
Pearson of signed errors for numbers) and the effective number of independent judges it implies,
``k / (1 + (k − 1) ρ̄)`` (the design-effect formula for k equally correlated measurements: ρ̄ = 0
gives k, ρ̄ = 1 gives 1).

Ratings are ``{judge: {unit: label}}`` with any hashable labels; a unit a judge did not rate
(or abstained on: pass only decided labels) is absent. Undefined figures are ``None`` with
``n`` beside them. Nothing here imports murgat.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from murgat.human_eval.stats import chance_reason

Ratings = Mapping[str, Mapping[Hashable, Any]]


def krippendorff_alpha_nominal(units: Sequence[Sequence[Any]]) -> float | None:
    """Krippendorff's α for nominal data; each unit lists the values its raters gave (``None`` = no
    value). Units with fewer than two values are not pairable and drop out, as the coefficient
    defines. ``None`` when fewer than two pairable values remain or every value is the same (the
    expected disagreement is 0: α is undefined, not 1).

    α = 1 − D_o / D_e from the coincidence matrix: each ordered pair of values within a unit of m
    values counts 1/(m − 1) (Krippendorff 2011, "Computing Krippendorff's alpha-reliability").
    """
    rows = [[v for v in u if v is not None] for u in units]
    rows = [r for r in rows if len(r) >= 2]
    if not rows:
        return None
    cats = sorted({v for r in rows for v in r}, key=repr)
    index = {c: k for k, c in enumerate(cats)}
    o = np.zeros((len(cats), len(cats)))
    for r in rows:
        counts = np.bincount([index[v] for v in r], minlength=len(cats)).astype(float)
        o += (np.outer(counts, counts) - np.diag(counts)) / (len(r) - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n < 2:
        return None
    d_o = (n - np.trace(o)) / n  # observed disagreement: off-diagonal coincidences
    d_e = (n * n - (n_c**2).sum()) / (n * (n - 1))  # expected, from the marginals
    if d_e == 0:
        return None
    return float(1 - d_o / d_e)


def alpha_across(ratings: Ratings) -> dict[str, Any]:
    """Krippendorff's α (nominal) across every judge, on every unit at least two of them rated."""
    unit_ids = sorted({u for r in ratings.values() for u in r}, key=repr)
    units = [[ratings[j].get(u) for j in sorted(ratings)] for u in unit_ids]
    pairable = [u for u in units if sum(v is not None for v in u) >= 2]
    alpha = krippendorff_alpha_nominal(units)
    out: dict[str, Any] = {"alpha": alpha, "n_units": len(pairable), "n_judges": len(ratings)}
    if alpha is None:
        out["reason"] = chance_reason(*pairable) or "fewer than two pairable values"
    return out


def _corr(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def error_correlation(predictions: Ratings, human: Mapping[Hashable, Any], *, numeric: bool = False) -> dict[str, Any]:
    """How alike the judges' errors against people are.

    Categorical (default): a judge errs on a unit when its label differs from the human's; the
    pairwise figure is φ (Pearson of the two 0/1 error indicators) on the units both judges and a
    human labelled. ``numeric=True``: the error is judge − human and the figure is its Pearson r.
    A pair where one judge never errs (or errs everywhere) has no correlation (``None``).
    ``effective_judges`` = k / (1 + (k − 1) ρ̄) over the defined pairs, ρ̄ clipped at 0 below.
    """
    judges = sorted(predictions)
    errs: dict[str, dict[Hashable, float]] = {}
    for j in judges:
        e = {}
        for u, v in predictions[j].items():
            if u in human and human[u] is not None and v is not None:
                e[u] = float(v) - float(human[u]) if numeric else float(v != human[u])
        errs[j] = e
    pairs: list[dict[str, Any]] = []
    for a, b in itertools.combinations(judges, 2):
        shared = sorted(set(errs[a]) & set(errs[b]), key=repr)
        xa = np.array([errs[a][u] for u in shared], float)
        xb = np.array([errs[b][u] for u in shared], float)
        pairs.append({"a": a, "b": b, "n": len(shared), "correlation": _corr(xa, xb),
                      "error_rate_a" if not numeric else "mean_error_a": float(xa.mean()) if len(xa) else None,
                      "error_rate_b" if not numeric else "mean_error_b": float(xb.mean()) if len(xb) else None})
    defined = [float(p["correlation"]) for p in pairs if p["correlation"] is not None]
    k = len(judges)
    mean_r = float(np.mean(defined)) if defined else None
    eff = k / (1 + (k - 1) * max(0.0, mean_r)) if mean_r is not None and k >= 2 else None
    return {"kind": "signed error (judge − human), Pearson r" if numeric else "wrong-on-this-unit indicators, φ",
            "pairs": pairs, "mean_correlation": mean_r, "n_judges": k,
            "effective_judges": None if eff is None or math.isnan(eff) else eff}
