"""Stratified PPI: a hand computation, coverage and width on strata that disagree differently, the
allocation and the plan's formula, and undefined (naming the stratum) where a variance is missing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm
from scipy.stats import t as student_t

from murgat.human_eval.ppi import prediction_powered_mean
from murgat.human_eval.stratified import StratumData, allocate, plan_strata, plan_variance, stratified_mean


def test_the_stratified_estimate_equals_a_hand_computation() -> None:
    a = StratumData([1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0, 0.0, 1.0, 1.0, 0.0])  # 8 items
    b = StratumData([0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0])  # 8 items
    got = stratified_mean({"a": a, "b": b}, lam=1.0, quantile="z", alpha=0.1)
    # plain PPI per stratum: mean of the judge on the unlabelled items + mean of (human − judge) on the labelled
    theta_a = 3 / 5 + (0 - 1 + 0) / 3
    theta_b = 2 / 4 + (0 - 1 + 0 + 0) / 4
    var_a = np.var([0.0, -1.0, 0.0]) / 3 + np.var([1, 0, 1, 1, 0]) / 5  # divisor-n variances, as ppi-python
    var_b = np.var([0.0, -1.0, 0.0, 0.0]) / 4 + np.var([0, 0, 1, 1]) / 4
    est = 0.5 * theta_a + 0.5 * theta_b
    se = math.sqrt(0.25 * var_a + 0.25 * var_b)
    z = norm.ppf(0.95)
    o = got.overall
    assert o.estimate == pytest.approx(est, abs=1e-12) and o.se == pytest.approx(se, abs=1e-12)
    assert (o.ci_low, o.ci_high) == (pytest.approx(est - z * se), pytest.approx(est + z * se))
    assert got.strata["a"]["weight"] == 0.5 and got.strata["b"]["n_labelled"] == 4
    assert o.method == "stratified ppi" and o.n_labelled == 7 and o.n_unlabelled == 9


def test_the_t_interval_takes_welch_satterthwaite_degrees_of_freedom() -> None:
    a = StratumData([1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0, 0.0, 1.0, 1.0, 0.0])
    b = StratumData([0.0, 0.0, 1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0, 1.0, 0.0])
    got = stratified_mean({"a": a, "b": b}, lam=1.0, quantile="t").overall
    pa = prediction_powered_mean(a.y, a.yhat, a.yhat_unlabelled, lam=1.0)
    pb = prediction_powered_mean(b.y, b.yhat, b.yhat_unlabelled, lam=1.0)
    wa, wb = 8 / 20, 12 / 20
    va, vb = wa**2 * pa.se**2, wb**2 * pb.se**2
    df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 5)
    q = student_t.ppf(0.975, df)
    assert got.estimate == pytest.approx(wa * pa.estimate + wb * pb.estimate)
    assert got.ci_high - got.estimate == pytest.approx(q * math.sqrt(va + vb))


def test_a_stratum_with_one_label_makes_the_whole_undefined_and_is_named() -> None:
    ok = StratumData([1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0, 0.0])
    thin = StratumData([1.0], [0.0], [1.0, 1.0, 0.0])
    got = stratified_mean({"long videos": ok, "short videos": thin})
    assert got.overall.estimate is None and got.overall.ci_low is None and got.overall.se is None
    assert "'short videos'" in (got.overall.reason or "") and "one labelled item" in (got.overall.reason or "")
    none = stratified_mean({"a": ok, "b": StratumData([], [], [1.0, 0.0])})
    assert none.overall.estimate is None and "'b'" in (none.overall.reason or "")


def test_a_fully_labelled_stratum_is_its_human_mean_even_for_plain_ppi() -> None:
    got = prediction_powered_mean([1.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0], [], lam=1.0)
    assert got.estimate == pytest.approx(0.75) and got.lam == 0.0  # was mean(y − ŷ) = −0.25


def _population(rng: np.random.Generator) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Three strata of very different judge–human disagreement: the judge is near-exact on ``easy``,
    noisy on ``mid``, close to a coin on ``hard`` (whose truth also sits elsewhere)."""
    sizes = {"easy": 600, "mid": 300, "hard": 100}
    noise = {"easy": 0.02, "mid": 0.15, "hard": 0.45}
    base = {"easy": 0.7, "mid": 0.5, "hard": 0.3}
    human = {h: np.clip(rng.normal(base[h], 0.15, n), 0, 1) for h, n in sizes.items()}
    judge = {h: np.clip(human[h] + 0.1 + rng.normal(0, noise[h], len(human[h])), 0, 1) for h in sizes}
    return human, judge


def test_stratified_intervals_cover_and_are_narrower_than_unstratified_on_a_good_allocation() -> None:
    rng = np.random.default_rng(44)
    human, judge = _population(rng)
    truth = float(np.mean(np.concatenate(list(human.values()))))
    sizes = {h: len(v) for h, v in human.items()}
    sd = {h: float(np.std(human[h] - judge[h], ddof=1)) for h in human}
    counts = allocate(60, sizes, sd)  # Neyman: most labels where the judge is worst
    assert counts["hard"] > counts["easy"] * sizes["hard"] / sizes["easy"]
    all_h, all_j = np.concatenate(list(human.values())), np.concatenate(list(judge.values()))
    hits = 0
    widths, plain_widths = [], []
    for _ in range(400):
        strata = {}
        for h, n in counts.items():
            pick = rng.permutation(sizes[h])
            lab, unl = pick[:n], pick[n:]
            strata[h] = StratumData(human[h][lab], judge[h][lab], judge[h][unl])
        o = stratified_mean(strata, alpha=0.1).overall
        assert o.ci_low is not None and o.ci_high is not None
        hits += o.ci_low <= truth <= o.ci_high
        widths.append(o.ci_high - o.ci_low)
        pick = rng.permutation(len(all_h))  # the same number of labels, drawn uniformly, estimated plainly
        u = prediction_powered_mean(all_h[pick[:60]], all_j[pick[:60]], all_j[pick[60:]], alpha=0.1, quantile="t")
        plain_widths.append(u.ci_high - u.ci_low)  # type: ignore[operator]
    assert hits / 400 >= 0.90 - 0.02
    assert np.mean(widths) < 0.8 * np.mean(plain_widths)


def test_allocation_is_proportional_or_neyman_with_two_per_stratum_and_never_over_a_stratum() -> None:
    sizes = {"a": 500, "b": 300, "c": 200}
    assert allocate(100, sizes) == {"a": 50, "b": 30, "c": 20}
    ney = allocate(100, sizes, {"a": 0.1, "b": 0.1, "c": 1.0})  # ∝ N_h · S_h = 50, 30, 200: 17.9, 10.7, 71.4
    assert ney == {"a": 18, "b": 11, "c": 71}
    assert allocate(10, {"big": 1000, "tiny": 3}) == {"big": 8, "tiny": 2}  # a small stratum still gets a variance
    assert allocate(50, {"x": 40, "y": 3}, {"x": 0.01, "y": 5.0}) == {"x": 40, "y": 3}  # capped: the whole population
    assert allocate(20, {"x": 40, "y": 3}, {"x": 0.01, "y": 5.0}) == {"x": 17, "y": 3}  # y capped at its 3 items
    assert allocate(1000, sizes) == sizes  # more than the population: all of it
    with pytest.raises(ValueError, match="cannot give each of the 3 strata 2 labels"):
        allocate(5, sizes)


def test_the_plan_is_the_smallest_neyman_allocation_that_reaches_the_half_width() -> None:
    sizes = {"easy": 800, "hard": 200}
    sd = {"easy": 0.05, "hard": 0.4}
    sd_judge = {"easy": 0.2, "hard": 0.2}
    plan = plan_strata(sizes, sd, sd_judge, half_width=0.03, alpha=0.05)
    n = plan["n_needed"]
    target = (0.03 / norm.ppf(0.975)) ** 2
    assert plan_variance(plan["allocation"], sizes, sd, sd_judge) <= target
    assert plan_variance(allocate(n - 1, sizes, sd), sizes, sd, sd_judge) > target
    # the formula by hand at the allocation found: Σ W² (S²/n_h + S²_ŷ/(N_h − n_h))
    a = plan["allocation"]
    by_hand = sum((sizes[h] / 1000) ** 2 * (sd[h] ** 2 / a[h] + sd_judge[h] ** 2 / (sizes[h] - a[h])) for h in sizes)
    assert plan["half_width_reached"] == pytest.approx(norm.ppf(0.975) * math.sqrt(by_hand))
    assert a["hard"] > a["easy"]  # 200·0.4 = 80 against 800·0.05 = 40: twice the labels
    assert a["hard"] == pytest.approx(2 * a["easy"], abs=1)
    unreachable = plan_strata({"a": 5}, {"a": 1.0}, {"a": 0.0}, half_width=0.01)
    assert unreachable["n_needed"] is None and "even labelling all 5 items" in unreachable["reason"]
