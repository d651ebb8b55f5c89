"""``murgat calibrate --task faithfulness``: ICCs on counts, per-step agreement, by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from murgat.cli import main
from murgat.commands.calibrate.faithfulness_runs import calibrate_faithfulness
from murgat.core.steps import FaithResult, StepLabel, tally
from murgat.human_eval.labels import ResponseLabel
from murgat.human_eval.stats import icc, icc_with_ci
from tests.commands.faithfulness.test_faithfulness import cassette


def test_icc_forms_by_hand() -> None:
    # judge vs human unfaithful counts; MSR = 1.5, MSC = 0.5, MSE = 1/6 (worked in the comment of the e2e test)
    y = np.array([[0, 0], [2, 2], [0, 1], [0, 1]], float)
    got = icc(y)
    assert got["icc3_1"] == pytest.approx(0.8)
    assert got["icc2_1"] == pytest.approx(1.333333 / 1.833333, rel=1e-5)
    assert got["icc3_k"] == pytest.approx(1.333333 / 1.5, rel=1e-5)
    ci = icc_with_ci(y)
    assert ci["f"] == pytest.approx(9.0)  # MSR / MSE
    lo, hi = ci["icc3_1_ci"]
    assert lo < 0.8 < hi <= 1.0 and ci["icc3_k_ci"][0] < got["icc3_k"] < ci["icc3_k_ci"][1]


def test_labels_derive_counts_from_steps_and_check_them() -> None:
    lab = ResponseLabel(id="x", steps=[{"index": 0, "type": "perception", "faithful": False},
                                       {"index": 1, "type": "reasoning"}])
    assert (lab.n_perception, lab.n_unfaithful) == (1, 1)
    with pytest.raises(ValueError, match="larger than n_perception"):
        ResponseLabel(id="x", n_perception=1, n_unfaithful=2)
    with pytest.raises(ValueError, match="must be in"):
        ResponseLabel(id="x", ratings={"murgat_s": 4})


def test_calibrate_faithfulness_end_to_end(tmp_path, example_media, capsys) -> None:
    from tests.commands.faithfulness.test_faithfulness import labelling_input

    data = labelling_input(tmp_path / "chains.jsonl")
    run = tmp_path / "run"
    assert main(["faithfulness", str(data), "--media-root", str(example_media), "--judge", f"replay:{cassette(tmp_path)}",
                 "--out", str(run), "--granularity", "step", "--quiet", "--json"]) == 0
    capsys.readouterr()
    # judge counts (from the faithfulness test): perception r1 2, r2 2, r3 0, r4 0; unfaithful 0, 2, 0, 0
    ann1 = [{"id": "r1", "n_perception": 2, "n_unfaithful": 0},
            {"id": "r2", "steps": [{"index": 0, "type": "perception", "faithful": False},
                                   {"index": 1, "type": "perception", "faithful": True}, {"index": 2, "type": "reasoning"}]},
            {"id": "r3", "n_perception": 0, "n_unfaithful": 0},
            {"id": "r4", "n_perception": 1, "n_unfaithful": 1}]
    ann2 = [{"id": "r1", "n_perception": 2, "n_unfaithful": 0}, {"id": "r2", "n_perception": 2, "n_unfaithful": 2},
            {"id": "r3", "n_perception": 1, "n_unfaithful": 0}, {"id": "r4", "n_perception": 1, "n_unfaithful": 0}]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({**r, "annotator": "ann1"}) + "\n" for r in ann1)
                      + "".join(json.dumps({**r, "annotator": "ann2"}) + "\n" for r in ann2))
    assert main(["calibrate", "--task", "faithfulness", "--human", str(labels), "--run", str(run), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    a1 = doc["runs"][str(run)]["annotators"]["ann1"]
    # unfaithful: judge [0, 2, 0, 0] vs ann1 [0, 1, 0, 1] (r2's count derived from its step labels); the ICC
    # formulas themselves are checked by hand in test_icc_forms_by_hand
    y = np.array([[0, 0], [2, 1], [0, 0], [0, 1]], float)
    assert a1["n_unfaithful"]["icc"]["icc3_1"] == pytest.approx(icc(y)["icc3_1"])
    assert a1["n_unfaithful"]["n"] == 4 and a1["n_perception"]["n"] == 4
    # per-step labels exist for r2: types agree on all 3 steps; faithfulness agrees on 1 of 2 perception steps
    assert a1["step_type"]["n"] == 3 and a1["step_type"]["accuracy"] == 1.0
    assert a1["step_faithful"]["n"] == 2 and a1["step_faithful"]["accuracy"] == 0.5
    inter = doc["runs"][str(run)]["inter_annotator"]
    assert inter["n_unfaithful"]["n"] == 4 and inter["n_unfaithful"]["icc"]["k_raters"] == 2
    assert main(["calibrate", "--task", "faithfulness", "--human", str(labels), "--run", str(run)]) == 0
    assert "ICC(3,1)" in capsys.readouterr().out


def _result(rid: str, steps: list[dict]) -> FaithResult:
    return tally(FaithResult(id=rid, steps=[StepLabel(index=i, text=f"s{i}", **s) for i, s in enumerate(steps)]))


P_OK = {"type": "perception", "modality": "audio", "faithful": True}
P_BAD = {"type": "perception", "modality": "audio", "faithful": False}
REASON = {"type": "reasoning"}


def test_chains_whose_labels_all_failed_are_left_out_and_counted() -> None:
    # judge counts (perception, unfaithful): a (2, 0), b (2, 2), c (1, 0), d (3, 1); e: every label failed
    results = [_result("a", [P_OK, P_OK, REASON]), _result("b", [P_BAD, P_BAD]), _result("c", [P_OK]),
               _result("d", [P_OK, P_BAD, P_OK]),
               _result("e", [{"status": "error", "reason": "HTTP 503"}, {"status": "unparseable", "reason": "?"}])]
    human = {"a": (2, 0), "b": (2, 1), "c": (1, 1), "d": (3, 1), "e": (2, 1)}
    labels = [ResponseLabel(id=i, annotator="h", n_perception=p, n_unfaithful=u) for i, (p, u) in human.items()]
    doc = calibrate_faithfulness(labels, results)
    assert doc["n_excluded"] == 1 and doc["excluded_ids"] == ["e"] and doc["n_responses"] == 4
    row = doc["annotators"]["h"]
    # the ICC is the one of the four chains the judge labelled, by hand and by the formula
    y = np.array([[0, 0], [2, 1], [0, 1], [1, 1]], float)
    assert row["n_unfaithful"]["n"] == 4
    assert row["n_unfaithful"]["icc"]["icc3_1"] == pytest.approx(icc(y)["icc3_1"], abs=1e-12)
    # ... and not the one with e entering as "0 perception, 0 unfaithful" (what was computed before)
    y_old = np.vstack([y, [0, 1]])
    assert row["n_unfaithful"]["icc"]["icc3_1"] != pytest.approx(icc(y_old)["icc3_1"], abs=1e-6)
    assert row["n_perception"]["judge_mean"] == pytest.approx((2 + 2 + 1 + 3) / 4)


def test_n_perception_counts_perception_steps_whose_faithfulness_is_undetermined() -> None:
    # f's second perception step has an unreadable faithfulness: still a perception step (a human counts it)
    maybe = {"type": "perception", "status": "unparseable", "reason": "faithful 'maybe' is not true/false"}
    results = [_result("f", [P_OK, maybe, REASON]), _result("g", [P_BAD]), _result("h", [P_OK, P_OK])]
    labels = [ResponseLabel(id="f", annotator="h", n_perception=2, n_unfaithful=0),
              ResponseLabel(id="g", annotator="h", n_perception=1, n_unfaithful=1),
              ResponseLabel(id="h", annotator="h", n_perception=3, n_unfaithful=0)]
    row = calibrate_faithfulness(labels, results)["annotators"]["h"]
    assert row["n_perception"]["judge_mean"] == pytest.approx((2 + 1 + 2) / 3)
    assert row["n_unfaithful"]["judge_mean"] == pytest.approx(1 / 3)
    assert row["judge_undetermined_perception"] == 1
    y = np.array([[2, 2], [1, 1], [2, 3]], float)
    assert row["n_perception"]["icc"]["icc3_1"] == pytest.approx(icc(y)["icc3_1"], abs=1e-12)


def _chains(seed: int, n: int) -> tuple[list[FaithResult], dict[str, tuple[int, int]]]:
    """n chains: the judge's step labels, and a human's counts that differ from them on some chains."""
    rng = np.random.default_rng(seed)
    results, human = [], {}
    for k in range(n):
        steps = [P_BAD if rng.random() < 0.3 else P_OK for _ in range(int(rng.integers(1, 5)))] + [REASON]
        r = _result(f"c{k:03d}", steps)
        results.append(r)
        miss = int(rng.random() < 0.3)  # the human finds one more unfaithful step than the judge, now and then
        human[r.id] = (r.n_perception, min(r.n_perception, r.n_unfaithful + miss))
    return results, human


def test_upr_is_corrected_through_the_ratio_estimator() -> None:
    from murgat.commands.calibrate.faithfulness_runs import corrected_upr, plan_upr
    from murgat.human_eval.ppi import prediction_powered_ratio
    from murgat.human_eval.sampling import draw_sample

    results, human = _chains(1, 80)
    drawn, design = draw_sample(sorted(human), 30, seed=9)
    labels = [ResponseLabel(id=i, annotator="h", n_perception=human[i][0], n_unfaithful=human[i][1], sample=design)
              for i in drawn]
    doc = corrected_upr(labels, results)
    upr = doc["figures"]["upr"]
    lab = [r for r in results if r.id in set(drawn)]
    rest = [r for r in results if r.id not in set(drawn)]
    want = prediction_powered_ratio([human[r.id][1] for r in lab], [human[r.id][0] for r in lab],
                                    [r.n_unfaithful for r in lab], [r.n_perception for r in lab],
                                    [r.n_unfaithful for r in rest], [r.n_perception for r in rest],
                                    quantile="t")  # the CLI's small-sample intervals (bench_ppi_small_n.py)
    assert doc["sample_checked"] and upr["estimate"] == pytest.approx(want.estimate) and upr["ci_low"] == pytest.approx(want.ci_low)
    # the judge-only UPR is the run's own; the human-only one is the labelled chains' Σ unfaithful / Σ perception
    assert upr["judge_only"]["estimate"] == pytest.approx(sum(r.n_unfaithful for r in results) / sum(r.n_perception for r in results))
    assert upr["human_only"]["estimate"] == pytest.approx(sum(human[i][1] for i in drawn) / sum(human[i][0] for i in drawn))
    assert doc["figures"]["n_unfaithful_per_response"]["n_labelled"] == 30
    refused = corrected_upr([ResponseLabel(id=i, annotator="h", n_perception=1, n_unfaithful=0) for i in drawn], results)
    assert "refused" in refused and "no sampling design" in refused["problems"][0]
    plan = plan_upr(labels, results, half_width=0.1)["figures"]["upr"]
    assert plan["pilot_n"] == 30 and plan["n_needed"] < plan["n_needed_human_only"]
    # the plan's half-width at the pilot's own n is about the interval the pilot gives
    assert plan["half_width_at_pilot_n"] == pytest.approx((upr["ci_high"] - upr["ci_low"]) / 2, rel=0.2)
    too_narrow = plan_upr(labels, results, half_width=0.01)["figures"]["upr"]
    assert too_narrow["n_needed"] is None and "all 80 responses does not reach ±0.01" in too_narrow["reason"]


def test_step_stages_count_what_the_judge_did_not_answer() -> None:
    maybe = {"type": "perception", "faithful": None}  # typed perception, faithfulness undecided
    failed = {"status": "error", "reason": "HTTP 503"}
    results = [_result("s", [P_OK, maybe, failed, REASON])]
    labels = [ResponseLabel(id="s", annotator="h", steps=[{"index": 0, "type": "perception", "faithful": True},
                                                          {"index": 1, "type": "perception", "faithful": False},
                                                          {"index": 2, "type": "reasoning"},
                                                          {"index": 3, "type": "reasoning"}])]
    row = calibrate_faithfulness(labels, results)["annotators"]["h"]
    assert row["step_type"]["n"] == 3 and row["step_type"]["n_unanswered"] == 1 and row["step_type"]["n_labelled"] == 4
    assert row["step_faithful"]["n"] == 1 and row["step_faithful"]["n_abstained"] == 1
    assert row["step_faithful"]["accuracy_silence_as_disagreement"] == pytest.approx(0.5)
