"""Agreement statistics against published values, scipy, and hand computation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from murgat.human_eval.stats import binary_agreement, cohen_kappa, correlations, fleiss_kappa, icc, pairwise_kappa, ranking_tau

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def test_icc_matches_shrout_fleiss() -> None:
    r = icc(SHROUT_FLEISS)
    assert r["icc1_1"] == pytest.approx(0.17, abs=0.005)
    assert r["icc2_1"] == pytest.approx(0.29, abs=0.005)
    assert r["icc3_1"] == pytest.approx(0.71, abs=0.005)


def test_icc_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        icc([[1, 2]])
    with pytest.raises(ValueError):
        icc([[1, np.nan], [2, 3]])


def test_correlations_match_scipy() -> None:
    rng = np.random.default_rng(1)
    x = rng.random(40)
    y = x + rng.normal(0, 0.3, 40)
    c = correlations(x, y, n_resamples=500, seed=0)
    assert c["pearson"]["value"] == pytest.approx(sps.pearsonr(x, y)[0])
    assert c["spearman"]["value"] == pytest.approx(sps.spearmanr(x, y)[0])
    assert c["kendall"]["value"] == pytest.approx(sps.kendalltau(x, y)[0])
    assert c["pearson"]["p_value"] == pytest.approx(sps.pearsonr(x, y)[1])
    assert c["pearson"]["ci_low"] < c["pearson"]["value"] < c["pearson"]["ci_high"]
    assert correlations(x, y, n_resamples=500, seed=0) == c


def test_constant_side_gives_none() -> None:
    c = correlations([0.5, 0.5, 0.5], [0.1, 0.2, 0.3], n_resamples=50)
    assert c["pearson"]["value"] is None


def test_binary_agreement_by_hand() -> None:
    # tp=3 fp=1 fn=2 tn=4
    pred = [True, True, True, True, False, False, False, False, False, False]
    gold = [True, True, True, False, True, True, False, False, False, False]
    a = binary_agreement(pred, gold)
    assert (a["tp"], a["fp"], a["fn"], a["tn"]) == (3, 1, 2, 4)
    assert a["accuracy"] == pytest.approx(0.7)
    assert a["balanced_accuracy"] == pytest.approx((3 / 5 + 4 / 5) / 2)
    assert a["precision"] == pytest.approx(0.75) and a["recall"] == pytest.approx(0.6)
    assert a["f1"] == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    # κ: po = 0.7; pe = 0.4*0.5 + 0.6*0.5 = 0.5 → κ = 0.4
    assert a["kappa"] == pytest.approx(0.4)


def test_kappa_edge_cases() -> None:
    # one value on both sides: chance agrees always, κ = 0/0 (undefined, as Krippendorff's α is)
    assert cohen_kappa([1, 1], [1, 1]) is None
    assert cohen_kappa([1, 0], [1, 0]) == 1.0
    assert cohen_kappa([], []) is None


def test_binary_agreement_says_why_kappa_and_balanced_accuracy_are_undefined() -> None:
    """Every verdict and every label ``yes``: before, κ printed 1.000 beside balanced accuracy "–"."""
    a = binary_agreement([True] * 5, [True] * 5)
    assert a["accuracy"] == 1.0 and a["kappa"] is None and a["balanced_accuracy"] is None
    assert "every value is 'yes'" in a["kappa_reason"] and "chance agreement is 1" in a["kappa_reason"]
    assert "no human 'no' label" in a["balanced_accuracy_reason"]
    b = binary_agreement([True, False, True], [True, False, False])
    assert b["kappa"] is not None and "kappa_reason" not in b and "balanced_accuracy_reason" not in b


def test_fleiss_kappa_wikipedia_style() -> None:
    perfect = [["a", "a", "a"], ["b", "b", "b"], ["a", "a", "a"]]
    assert fleiss_kappa(perfect) == pytest.approx(1.0)
    assert fleiss_kappa([["a", "b"], ["b", "a"]]) < 0


def test_pairwise_kappa_and_ranking() -> None:
    anns = {"x": {1: True, 2: False, 3: True}, "y": {1: True, 2: False, 3: False}}
    assert pairwise_kappa(anns) == pytest.approx(cohen_kappa([True, False, True], [True, False, False]))
    r = ranking_tau({"m1": 0.1, "m2": 0.5, "m3": 0.9}, {"m1": 0.2, "m2": 0.4, "m3": 0.8})
    assert r["tau"] == pytest.approx(1.0) and r["n_systems"] == 3
