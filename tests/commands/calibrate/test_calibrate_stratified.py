"""calibrate on labels drawn stratified: the stratified estimate, said so; the plan per stratum."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from murgat.cli import main
from murgat.core.corrected import population, strata_of
from murgat.engine.folder import RunFolder
from murgat.human_eval.sampling import draw_stratified
from murgat.human_eval.stratified import StratumData, stratified_mean


def _run(tmp: Path, n: int = 120) -> tuple[Path, np.ndarray, np.ndarray, list[str]]:
    """A score run whose items carry a ``duration`` field: 'long' items (a quarter) where the judge
    is far off, 'short' ones where it is close."""
    from murgat.core.metric import summarize_results
    from murgat.core.schema import ResponseResult, Scores

    rng = np.random.default_rng(3)
    dur = ["long" if k % 4 == 0 else "short" for k in range(n)]
    human = np.round(rng.beta(2, 3, n), 3)
    noise = np.where(np.array(dur) == "long", 0.3, 0.03)
    judge = np.round(np.clip(human + 0.1 + rng.normal(0, 1, n) * noise, 0, 1), 3)
    recs = [ResponseResult(id=f"q{k:03d}", video=f"v{k}.mp4", meta={"item": {"duration": dur[k]}},
                           scores=Scores(coverage=judge[k], precision=judge[k], recall=judge[k], f1=judge[k],
                                         murgat_s=judge[k])) for k in range(n)]
    rd = RunFolder(tmp / "run")
    rd.append_many(recs)
    rd.write_summary(summarize_results(recs))
    return rd.path, human, judge, dur


def _labels(tmp: Path, human: np.ndarray, ids: list[str], design: dict) -> Path:
    rows = [{"id": i, "annotator": "ann", "sample": design,
             "ratings": {m: float(human[int(i[1:])]) for m in ("coverage", "precision", "recall", "murgat_s")}}
            for i in ids]
    p = tmp / "labels.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _drawn_labels(tmp: Path, run: Path, human: np.ndarray, counts: int | dict[str, int]) -> tuple[list[str], Path]:
    """A stratified draw by duration from ``run`` and the human labels of the drawn items."""
    results = RunFolder(run).latest_results()
    ids, _ = population(results)
    drawn, design = draw_stratified(ids, strata_of(results, "duration"), counts, seed="7", field="duration")
    return drawn, _labels(tmp, human, drawn, design.model_dump())


def test_calibrate_on_a_stratified_draw_reports_the_stratified_figures(tmp_path: Path, capsys) -> None:
    run, human, judge, dur = _run(tmp_path)
    drawn, labels = _drawn_labels(tmp_path, run, human, {"long": 16, "short": 8})
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "20"]) == 0
    k = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]
    assert k["sample_checked"] is True and k["stratified_by"] == "duration"
    b = k["figures"]["murgat_s"]
    want = {}
    for h in ("long", "short"):
        lab = [int(i[1:]) for i in drawn if dur[int(i[1:])] == h]
        rest = [j for j in range(len(dur)) if dur[j] == h and j not in set(lab)]
        want[h] = StratumData(human[lab], judge[lab], judge[rest])
    expect = stratified_mean(want).overall
    assert b["method"] == "stratified ppi++" and b["estimate"] == pytest.approx(expect.estimate, abs=1e-12)
    assert b["ci_low"] == pytest.approx(expect.ci_low) and b["ci_high"] == pytest.approx(expect.ci_high)
    assert b["strata"]["long"]["weight"] == pytest.approx(30 / 120) and b["strata"]["long"]["n_labelled"] == 16
    # 16 of 30 long items and 8 of 90 short ones: one mean over the labels would over-weight 'long'
    assert b["human_only"]["estimate"] == pytest.approx(0.25 * human[[int(i[1:]) for i in drawn if dur[int(i[1:])]
                                                                      == "long"]].mean() + 0.75 * human[
        [int(i[1:]) for i in drawn if dur[int(i[1:])] == "short"]].mean())
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "20"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "stratified by duration" in out and "strata of murgat_s: long (W 0.250, 16/30 labelled)" in out


def test_a_stratum_with_one_label_leaves_the_figure_undefined_naming_it(tmp_path: Path, capsys) -> None:
    run, human, _, _ = _run(tmp_path)
    _, labels = _drawn_labels(tmp_path, run, human, {"long": 1, "short": 10})
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "20"]) == 0
    b = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]["figures"]["murgat_s"]
    assert b["estimate"] is None and b["ci_low"] is None and "stratum 'long'" in b["reason"]


def test_plan_per_stratum_from_a_pilot_and_from_a_prior(tmp_path: Path, capsys) -> None:
    run, human, _, _ = _run(tmp_path)
    _, pilot = _drawn_labels(tmp_path, run, human, 20)
    assert main(["calibrate", "--plan", "--human", str(pilot), "--run", str(run), "--half-width", "0.08",
                 "--json"]) == 0
    p = json.loads(capsys.readouterr().out)["plan"][str(run)]
    f = p["figures"]["murgat_s"]
    assert p["stratified_by"] == "duration" and f["strata"]["long"]["sd_from"] == "pilot"
    assert f["strata"]["long"]["n_needed"] / 30 > f["strata"]["short"]["n_needed"] / 90  # labels where it disagrees
    assert f["n_needed"] == sum(f["allocation"].values()) and f["half_width_reached"] <= 0.08
    assert main(["calibrate", "--plan", "--strata", "duration", "--run", str(run), "--prior-sd", "0.3",
                 "--half-width", "0.1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "labels per stratum of duration" in out and "prior (under two pilot labels here)" in out
    assert "--strata duration --allocation 'long=" in out
    assert main(["calibrate", "--run", str(run)]) == 2
    assert "--human LABELS is required" in capsys.readouterr().err
