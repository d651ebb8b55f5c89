"""Agreement between judges: κ per pair, Krippendorff's α across all, correlation of their errors."""

from __future__ import annotations

import numpy as np
import pytest

from murgat.human_eval.agreement import alpha_across, error_correlation, krippendorff_alpha_nominal
from murgat.human_eval.stats import cohen_kappa, pairwise_cohen_kappa

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers,
# 12 units, nominal data with missing values; published α = 0.743.
K2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def test_krippendorff_alpha_matches_the_published_example() -> None:
    units = list(zip(*K2011.values(), strict=True))
    assert krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=5e-4)
    ratings = {k: {u: v for u, v in enumerate(vals) if v is not None} for k, vals in K2011.items()}
    got = alpha_across(ratings)
    assert got["alpha"] == pytest.approx(0.743, abs=5e-4) and got["n_units"] == 11 and got["n_judges"] == 4


def test_krippendorff_alpha_edge_cases() -> None:
    assert krippendorff_alpha_nominal([[1, None], [2]]) is None  # nothing pairable
    assert krippendorff_alpha_nominal([[1, 1], [1, 1]]) is None  # no expected disagreement
    assert krippendorff_alpha_nominal([["y", "y"], ["n", "n"], ["y", "y"]]) == pytest.approx(1.0)
    # two raters, no missing values: α equals Scott's π = (p_o − p_e) / (1 − p_e) with pooled marginals
    a = ["y", "y", "n", "n", "y", "n", "y", "y"]
    b = ["y", "n", "n", "n", "y", "y", "y", "y"]
    po = np.mean([x == y for x, y in zip(a, b, strict=True)])
    p_y = (a + b).count("y") / 16
    pe = p_y**2 + (1 - p_y) ** 2
    n = 16  # α's small-sample form: π with the expected disagreement taken over n − 1 pairs
    pi = 1 - (1 - po) / ((1 - pe) * n / (n - 1))
    assert krippendorff_alpha_nominal(list(zip(a, b, strict=True))) == pytest.approx(pi)


def test_pairwise_kappa_on_shared_units() -> None:
    r = {"j1": {1: "y", 2: "n", 3: "y", 4: "y"}, "j2": {1: "y", 2: "n", 3: "n"}, "j3": {}}
    pairs = {(p["a"], p["b"]): p for p in pairwise_cohen_kappa(r)}
    assert pairs[("j1", "j2")]["n"] == 3
    assert pairs[("j1", "j2")]["kappa"] == pytest.approx(cohen_kappa(["y", "n", "y"], ["y", "n", "n"]))
    assert pairs[("j1", "j3")]["n"] == 0 and pairs[("j1", "j3")]["kappa"] is None


def test_error_correlation_and_effective_number_of_judges() -> None:
    rng = np.random.default_rng(0)
    human = {u: bool(rng.random() < 0.5) for u in range(400)}
    shared = {u: rng.random() < 0.2 for u in human}  # the units all three judges get wrong together
    same = {f"j{k}": {u: (not human[u]) if shared[u] else human[u] for u in human} for k in range(3)}
    got = error_correlation(same, human)
    assert got["mean_correlation"] == pytest.approx(1.0) and got["effective_judges"] == pytest.approx(1.0)
    indep = {f"j{k}": {u: (not human[u]) if rng.random() < 0.2 else human[u] for u in human} for k in range(3)}
    got = error_correlation(indep, human)
    assert abs(got["mean_correlation"]) < 0.15 and got["effective_judges"] > 2.5
    assert got["pairs"][0]["n"] == 400 and 0.1 < got["pairs"][0]["error_rate_a"] < 0.3
    num = error_correlation({"a": {1: 0.5, 2: 0.7, 3: 0.2}, "b": {1: 0.6, 2: 0.8, 3: 0.3}}, {1: 0.5, 2: 0.6, 3: 0.1},
                            numeric=True)
    assert num["pairs"][0]["correlation"] == pytest.approx(1.0)
    never_wrong = error_correlation({"a": dict(human), "b": indep["j0"]}, human)
    assert never_wrong["pairs"][0]["correlation"] is None and never_wrong["effective_judges"] is None


def test_kappa_and_alpha_agree_on_judges_that_say_yes_to_everything() -> None:
    """The same two judges, every verdict ``yes``: Cohen's κ was 1.000 while Krippendorff's α was
    undefined; both are undefined, and both say why."""
    ratings = {"a": {u: True for u in range(6)}, "b": {u: True for u in range(6)}}
    (pair,) = pairwise_cohen_kappa(ratings)
    across = alpha_across(ratings)
    assert pair["kappa"] is None and across["alpha"] is None
    assert pair["reason"] == across["reason"] and "every value is 'yes'" in pair["reason"]
    mixed = {"a": {0: True, 1: False, 2: True}, "b": {0: True, 1: False, 2: False}}
    (pair,) = pairwise_cohen_kappa(mixed)
    assert pair["kappa"] is not None and alpha_across(mixed)["alpha"] is not None and "reason" not in pair
