"""Prediction-powered estimates: equal to ppi-python where it has them, honest where it has not."""

from __future__ import annotations

import numpy as np
import pytest

from murgat.human_eval.ppi import (
    bootstrap_corrected,
    labels_needed,
    prediction_powered_difference,
    prediction_powered_mean,
    prediction_powered_ratio,
)


def _data(seed: int, n: int, m: int, acc: float = 0.8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.binomial(1, 0.4, n).astype(float)
    yhat = np.where(rng.random(n) < acc, y, 1 - y)
    yhat_u = rng.binomial(1, 0.45, m).astype(float)
    return y, yhat, yhat_u


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("lam", [None, 0.0, 1.0, 0.3])
def test_equals_ppi_python(seed: int, lam: float | None) -> None:
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a dev dependency (pip install -e .[dev])")
    rng = np.random.default_rng(100 + seed)
    y, yhat, yhat_u = _data(seed, int(rng.integers(5, 300)), int(rng.integers(5, 3000)))
    if seed % 2:  # continuous scores too (MURGAT-S is a number in [0, 1])
        y, yhat, yhat_u = y * rng.random(len(y)), np.clip(yhat * 0.7 + rng.random(len(y)) * 0.3, 0, 1), rng.random(len(yhat_u))
    for alpha in (0.05, 0.1):
        got = prediction_powered_mean(y, yhat, yhat_u, alpha=alpha, lam=lam)
        lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
        point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)
        assert got.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
        assert got.ci_low == pytest.approx(float(np.ravel(lo)[0]), abs=1e-9)
        assert got.ci_high == pytest.approx(float(np.ravel(hi)[0]), abs=1e-9)
        assert got.n_labelled == len(y) and got.n_unlabelled == len(yhat_u)
    if lam is not None:
        assert got.lam == lam
    else:
        assert 0.0 <= got.lam <= 1.0
        assert got.method == "ppi++"


def test_fields_and_names() -> None:
    y, yhat, yhat_u = _data(0, 80, 800)
    got = prediction_powered_mean(y, yhat, yhat_u)
    for key in ("estimate", "ci_low", "ci_high", "lam", "effective_n", "n_labelled", "n_unlabelled"):
        assert got[key] == getattr(got, key) == got.to_dict()[key]
    assert got.ci_low < got.estimate < got.ci_high
    assert prediction_powered_mean(y, yhat, yhat_u, lam=1.0).method == "ppi"
    human = prediction_powered_mean(y, yhat, yhat_u, lam=0.0)
    assert human.method == "human-only" and human.estimate == pytest.approx(y.mean())
    assert human.effective_n == pytest.approx(80)  # the human-only mean is worth its own labels
    # a judge that agrees 80% of the time is worth more labels than it has
    assert got.effective_n > 80
    from murgat.human_eval.stats import prediction_powered_mean as via_stats

    assert via_stats is prediction_powered_mean


def test_a_perfect_judge_gives_the_judge_mean_and_a_useless_one_the_human_mean() -> None:
    rng = np.random.default_rng(3)
    y = rng.binomial(1, 0.3, 60).astype(float)
    yu = rng.binomial(1, 0.3, 600).astype(float)
    perfect = prediction_powered_mean(y, y, yu)
    assert perfect.lam > 0.85 and perfect.effective_n > 5 * 60
    noise = rng.binomial(1, 0.5, 60).astype(float)
    useless = prediction_powered_mean(y, noise, rng.binomial(1, 0.5, 600).astype(float))
    assert useless.lam < 0.3  # close to the human-only mean


def test_undefined_figures_say_why() -> None:
    got = prediction_powered_mean([], [], [0.5, 0.5])
    assert got.estimate is None and got.ci_low is None and "no labelled item" in got.reason
    one = prediction_powered_mean([1.0], [1.0], [0.0, 1.0])
    assert one.estimate is None and "one labelled item" in one.reason
    cl = prediction_powered_mean([1.0, 0.0], [1.0, 0.0], [0.0, 1.0], clusters=["v", "v", "w", "x"])
    assert cl.estimate is None and "one cluster" in cl.reason
    with pytest.raises(ValueError, match="pair up"):
        prediction_powered_mean([1.0], [1.0, 0.0], [0.0])
    with pytest.raises(ValueError, match="finite"):
        prediction_powered_mean([1.0, float("nan")], [1.0, 0.0], [0.0])
    with pytest.raises(ValueError, match="lam"):
        prediction_powered_mean([1.0, 0.0], [1.0, 0.0], [0.0], lam=1.5)
    with pytest.raises(ValueError, match="clusters"):
        prediction_powered_mean([1.0, 0.0], [1.0, 0.0], [0.0], clusters=["a", "b"])


def test_a_constant_judge_adds_nothing() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0])
    got = prediction_powered_mean(y, np.ones(4), np.ones(10))
    assert got.lam == 0.0 and got.estimate == pytest.approx(0.75)


def test_nothing_unlabelled_is_the_human_mean() -> None:
    y, yhat, _ = _data(1, 50, 0)
    got = prediction_powered_mean(y, yhat, [])
    assert got.lam == 0.0 and got.estimate == pytest.approx(y.mean()) and got.n_unlabelled == 0


def test_singleton_clusters_are_close_to_the_unclustered_interval() -> None:
    y, yhat, yhat_u = _data(2, 200, 2000)
    plain = prediction_powered_mean(y, yhat, yhat_u)
    single = prediction_powered_mean(y, yhat, yhat_u, clusters=list(range(2200)))
    assert single.clustered and single.n_clusters_labelled == 200 and single.n_clusters_unlabelled == 2000
    assert single.estimate == pytest.approx(plain.estimate, abs=0.01)
    width = lambda e: e.ci_high - e.ci_low  # noqa: E731
    assert width(single) == pytest.approx(width(plain), rel=0.02)  # G/(G-1), t(G-1) and λ on the same variance


def test_clusters_widen_the_interval_when_items_of_a_video_are_alike() -> None:
    rng = np.random.default_rng(5)
    p = rng.beta(1, 1, 60)  # 60 videos, 10 items each: strong video effects
    y = (rng.random((60, 10)) < p[:, None]).astype(float).ravel()
    yhat = np.where(rng.random(600) < 0.85, y, 1 - y)
    vid = np.repeat(np.arange(60), 10)
    lab = vid < 20
    cl = np.concatenate([vid[lab], vid[~lab]])
    plain = prediction_powered_mean(y[lab], yhat[lab], yhat[~lab])
    clus = prediction_powered_mean(y[lab], yhat[lab], yhat[~lab], clusters=cl)
    assert clus.n_clusters_labelled == 20 and clus.n_clusters_unlabelled == 40
    assert (clus.ci_high - clus.ci_low) > 1.5 * (plain.ci_high - plain.ci_low)


def test_shared_clusters_add_their_covariance() -> None:
    """Item-level sampling inside videos: labelled and unlabelled items share videos. The sandwich
    over the videos then has a cross term; with the same data split by video it has none."""
    rng = np.random.default_rng(8)
    p = rng.beta(1, 1, 40)
    y = (rng.random((40, 6)) < p[:, None]).astype(float).ravel()
    yhat = np.where(rng.random(240) < 0.8, y, 1 - y)
    vid = np.repeat(np.arange(40), 6)
    lab = rng.random(240) < 0.3
    got = prediction_powered_mean(y[lab], yhat[lab], yhat[~lab], clusters=np.concatenate([vid[lab], vid[~lab]]))
    assert got.ci_low < got.estimate < got.ci_high
    assert got.n_clusters_labelled + got.n_clusters_unlabelled > 40  # videos appear in both sets


def test_difference_is_the_mean_of_differences() -> None:
    ya, yha, yua = _data(3, 70, 700)
    yb, yhb, yub = _data(4, 70, 700)
    d = prediction_powered_difference(ya, yb, yha, yhb, yua, yub)
    direct = prediction_powered_mean(yb - ya, yhb - yha, yub - yua)
    assert d == direct
    same = prediction_powered_difference(ya, ya, yha, yha, yua, yua)
    assert same.estimate == 0.0 and same.ci_low == same.ci_high == 0.0


def test_ratio_reduces_to_the_mean_with_unit_denominators_and_handles_zero() -> None:
    y, yhat, yhat_u = _data(6, 90, 900)
    r = prediction_powered_ratio(y, np.ones(90), yhat, np.ones(90), yhat_u, np.ones(900))
    m = prediction_powered_mean(y, yhat, yhat_u)
    assert r.estimate == pytest.approx(m.estimate) and r.lam == pytest.approx(m.lam)
    assert r.ci_low == pytest.approx(m.ci_low) and r.ci_high == pytest.approx(m.ci_high)
    z = prediction_powered_ratio([0, 0], [0, 0], [0, 0], [0, 0], [0], [0])
    assert z.estimate is None and "denominator" in z.reason


def test_ratio_interval_covers_like_its_bootstrap() -> None:
    rng = np.random.default_rng(9)
    den = rng.integers(1, 6, 80).astype(float)
    num = rng.binomial(den.astype(int), 0.2).astype(float)
    num_hat = np.clip(num + rng.integers(-1, 2, 80), 0, den)
    den_u = rng.integers(1, 6, 800).astype(float)
    num_u = rng.binomial(den_u.astype(int), 0.25).astype(float)
    delta = prediction_powered_ratio(num, den, num_hat, den, num_u, den_u)
    boot = bootstrap_corrected(prediction_powered_ratio, [num, den, num_hat, den], [num_u, den_u], n_resamples=400)
    assert boot.method == "ppi++ bootstrap" and boot.estimate == delta.estimate
    assert boot.ci_low == pytest.approx(delta.ci_low, abs=0.015)
    assert boot.ci_high == pytest.approx(delta.ci_high, abs=0.015)


def test_bootstrap_of_the_mean_agrees_with_the_normal_interval_and_is_seeded() -> None:
    y, yhat, yhat_u = _data(7, 120, 1200)
    normal = prediction_powered_mean(y, yhat, yhat_u)
    seen: list[int] = []
    boot = bootstrap_corrected(prediction_powered_mean, [y, yhat], [yhat_u], n_resamples=500, seed=3,
                               progress=seen.append)
    assert seen[-1] == 500
    assert boot.ci_low == pytest.approx(normal.ci_low, abs=0.02) and boot.ci_high == pytest.approx(normal.ci_high, abs=0.02)
    again = bootstrap_corrected(prediction_powered_mean, [y, yhat], [yhat_u], n_resamples=500, seed=3)
    assert again == boot
    vid = [f"v{i // 4}" for i in range(120)] + [f"u{i // 4}" for i in range(1200)]
    clustered = bootstrap_corrected(prediction_powered_mean, [y, yhat], [yhat_u], clusters=vid, n_resamples=200)
    assert clustered.clustered and clustered.ci_low is not None


def _population(seed: int, size: int, acc: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.binomial(1, 0.4, size).astype(float)
    return y, np.where(rng.random(size) < acc, y, 1 - y)


def test_plan_gives_fewer_labels_than_human_only_and_reaches_the_width() -> None:
    y, yhat = _population(10, 5050, acc=0.9)
    plan = labels_needed(y[:50], yhat[:50], yhat[50:], half_width=0.05, alpha=0.05)
    assert plan["pilot_n"] == 50 and plan["population"] == 5050
    assert plan["n_needed"] < plan["n_needed_human_only"]
    # labelling the planned number of items of the same population gives about that half-width
    n = plan["n_needed"]
    got = prediction_powered_mean(y[:n], yhat[:n], yhat[n:])
    assert (got.ci_high - got.ci_low) / 2 == pytest.approx(0.05, rel=0.2)
    unreachable = labels_needed(y[:50], yhat[:50], yhat[50:150], half_width=0.001)
    assert unreachable["n_needed"] is None and "does not reach" in unreachable["reason"]
    with pytest.raises(ValueError):
        labels_needed(y[:50], yhat[:50], yhat[50:], half_width=0)
    clustered = labels_needed(y[:50], yhat[:50], yhat[50:], half_width=0.05, clusters=[i // 5 for i in range(5050)])
    assert clustered["design_effect"] >= 1.0 and clustered["clusters_needed"] is not None


def test_the_plans_correlation_is_the_pilots_pearson_r() -> None:
    """Before: the covariance of the labelled items over the judge's variance of the whole run: a pilot whose
    judge scores varied less than the run's printed 'judge–human corr. 1.414'."""
    y, yh = [0.0, 1.0, 0.0, 1.0], [0.4, 0.6, 0.4, 0.6]
    plan = labels_needed(y, yh, [0.0, 1.0, 0.0, 1.0, 0.5], half_width=0.03)
    assert plan["pilot"]["corr"] == pytest.approx(float(np.corrcoef(y, yh)[0, 1])) == pytest.approx(1.0)
    rng = np.random.default_rng(3)
    for _ in range(50):
        y, yh = rng.random(6), rng.random(6)
        r = labels_needed(y, yh, rng.random(4) * 3, half_width=0.1)["pilot"]["corr"]
        assert -1 - 1e-12 <= r <= 1 + 1e-12 and r == pytest.approx(float(np.corrcoef(y, yh)[0, 1]))


@pytest.mark.parametrize("alpha", [0.0, 1.0, 2.0, -0.1, float("nan")])
def test_alpha_outside_zero_one_is_refused(alpha: float) -> None:
    """Before: alpha 0 gave an infinite interval, 2 an inverted one, NaN a NaN one, without a word."""
    from murgat.human_eval.ppi import labels_needed, prediction_powered_ratio

    y, yh, yu = [1, 0, 1, 1], [1, 0, 0, 1], [1, 0, 1, 0, 1]
    with pytest.raises(ValueError, match="alpha"):
        prediction_powered_mean(y, yh, yu, alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        prediction_powered_ratio(y, [1] * 4, yh, [1] * 4, yu, [1] * 5, alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        labels_needed(y, yh, yu, half_width=0.1, alpha=alpha)


def test_a_zero_variance_interval_says_that_it_understates_the_uncertainty() -> None:
    """Two labels, both 1, judge scores alike: the normal interval is [1, 1]. Before, it came with no
    word; a reader took two labels for certainty."""
    got = prediction_powered_mean([1, 1], [1, 1], [1, 0, 1, 0])
    assert got.estimate == 1.0 and got.ci_low == got.ci_high == 1.0
    assert got.reason and "zero width" in got.reason and got.effective_n is None


def test_effective_n_is_undefined_when_the_human_only_figure_is() -> None:
    """The labelled items' human denominators all 0: the human-only ratio is undefined, so "the labels
    the judge is worth" is too. Before, effective_n was 0.0 (as if the judge were worth nothing)."""
    from murgat.human_eval.ppi import prediction_powered_ratio

    got = prediction_powered_ratio([0, 0, 0], [0, 0, 0], [1, 0, 1], [1, 1, 1], [1, 1], [2, 2], lam=1)
    assert got.estimate is not None and got.effective_n is None and got.reason and "effective n" in got.reason
    const = prediction_powered_mean([1, 1, 1], [1, 0, 1], [1, 0, 1, 0], lam=1)  # humans agree: var_h = 0
    assert const.effective_n is None and const.reason and "human-only variance is 0" in const.reason


def test_within_cuts_an_interval_to_the_range_and_notes_it() -> None:
    from murgat.human_eval.ppi import prediction_powered_mean, within

    est = prediction_powered_mean([1.0, 0.85, 1.0], [1.0, 0.8, 1.0], [0.9])
    assert est.ci_high is not None and est.ci_high > 1  # the normal interval knows no range
    got = within(est, 0.0, 1.0)
    assert got.ci_high == 1.0 and got.ci_low == est.ci_low and got.estimate == est.estimate
    assert got.note is not None and "upper bound" in got.note and "[0, 1]" in got.note
    inside = prediction_powered_mean([0.4, 0.5, 0.6, 0.5], [0.4, 0.5, 0.6, 0.55], [0.5, 0.5])
    assert within(inside, 0.0, 1.0) is inside  # nothing to cut: the same estimate, no note


def test_effective_n_never_exceeds_the_items() -> None:
    """A judge that matches the labels almost exactly makes the variance ratio huge on few labels; no
    estimate is worth more human labels than there are items."""
    from murgat.human_eval.ppi import prediction_powered_mean

    est = prediction_powered_mean([1.0, 0.85, 1.0], [1.0, 0.8, 1.0], [0.9])
    assert est.effective_n is not None and est.effective_n <= 4
    assert est.note is not None and "effective n 5.2 capped at the 4 items" in est.note


def test_a_pilot_whose_labels_do_not_vary_plans_nothing() -> None:
    """Before: variance 0 made two labels "enough" for a half-width of ±0.001."""
    rng = np.random.default_rng(3)
    plan = labels_needed(np.ones(20), rng.random(20), rng.random(200), half_width=0.001)
    assert plan["n_needed"] is None and plan["n_needed_human_only"] is None
    assert "variance 0" in plan["reason"] and "all 1" in plan["reason"]


def test_student_t_intervals_widen_small_samples_and_leave_the_z_default_alone() -> None:
    """``quantile="t"``: the human-only interval widens by t(n − 1)/z exactly; the tuned PPI++ one also
    pays the degree of freedom λ takes; ``"z"`` (the default) is the interval it always was."""
    from scipy.stats import norm
    from scipy.stats import t as student_t

    from murgat.human_eval.ppi import prediction_powered_mean

    rng = np.random.default_rng(3)
    y = rng.beta(2, 3, 30)
    yh = np.clip(y + rng.normal(0.1, 0.1, 30), 0, 1)
    yu = np.clip(rng.beta(2, 3, 300) + 0.1, 0, 1)
    z = prediction_powered_mean(y, yh, yu, alpha=0.1, lam=0.0)
    t = prediction_powered_mean(y, yh, yu, alpha=0.1, lam=0.0, quantile="t")
    ratio = (t.ci_high - t.ci_low) / (z.ci_high - z.ci_low)
    assert ratio == pytest.approx(student_t.ppf(0.95, 29) / norm.ppf(0.95)) and t.estimate == z.estimate
    zp = prediction_powered_mean(y, yh, yu, alpha=0.1)
    tp = prediction_powered_mean(y, yh, yu, alpha=0.1, quantile="t")
    widen = (tp.ci_high - tp.ci_low) / (zp.ci_high - zp.ci_low)
    assert widen == pytest.approx(student_t.ppf(0.95, 28) / norm.ppf(0.95) * np.sqrt(29 / 28))
    assert prediction_powered_mean(y, yh, yu, alpha=0.1, quantile="z").ci_low == zp.ci_low
