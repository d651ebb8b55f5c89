"""Judge stability across repeats: majority with ties → unknown, agreement, flips, spread."""

from __future__ import annotations

import pytest

from murgat.human_eval.stability import majority, repeat_agreement, spread


def test_majority_rules() -> None:
    assert majority(["yes", "yes", "no"]) == "yes"
    assert majority(["yes", "no"]) == "unknown"  # a tie is no decision
    assert majority(["yes", "no", "unknown", "unknown"]) == "unknown"  # abstentions vote
    assert majority(["yes", "error", "unparseable"]) == "yes"  # failures do not
    assert majority(["error", "unparseable", None]) == "error"
    assert majority(["no", "no", "yes", "yes", "unknown"]) == "unknown"


def test_repeat_agreement_counts_flips() -> None:
    got = repeat_agreement({"f1": ["yes", "yes", "yes"], "f2": ["yes", "no", "yes"], "f3": ["no", "error", "error"],
                            "f4": ["yes", "no", "unknown"]})
    assert got["n_facts"] == 4 and got["n_facts_repeated"] == 3 and got["n_facts_unrepeated"] == 1
    assert got["n_flipped"] == 2 and got["flip_share"] == pytest.approx(2 / 3)
    assert got["per_fact"]["f2"]["agreement"] == pytest.approx(2 / 3) and got["per_fact"]["f2"]["majority"] == "yes"
    assert got["per_fact"]["f4"]["majority"] == "unknown" and got["per_fact"]["f4"]["agreement"] == pytest.approx(1 / 3)
    assert got["mean_agreement"] == pytest.approx((1 + 2 / 3 + 1 / 3) / 3)
    assert got["fleiss_kappa"] is None  # facts have different numbers of answered repeats
    even = repeat_agreement({"a": ["yes", "yes"], "b": ["no", "no"], "c": ["yes", "no"]})
    assert even["fleiss_kappa"] is not None and even["majority_counts"] == {"yes": 1, "no": 1, "unknown": 1}


def test_spread_of_a_run_level_figure() -> None:
    s = spread([0.5, 0.6, None, 0.7])
    assert s["k"] == 4 and s["n_defined"] == 3 and s["mean"] == pytest.approx(0.6) and s["range"] == pytest.approx(0.2)
    assert s["sd"] == pytest.approx(0.1)
    assert spread([None])["mean"] is None
