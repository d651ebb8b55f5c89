"""`murgat calibrate` end to end: a score run made in the test, two annotators' labels."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.commands.calibrate.score_runs import calibrate_run, human_scores
from murgat.commands.score.runner import score_items, summarize_run
from murgat.commands.score.stages import StageJudges
from murgat.core.schema import Item
from murgat.engine.folder import RunFolder
from murgat.engine.preflight import MediaPlace
from murgat.judges.scripted import ScriptedJudge
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig

CLAIMS = [
    ("She asks whether the lord of the universe is in", "audio, 0:01-0:03", True),
    ("Somebody must have stolen the crown jewels", "audio, 0:04-0:06", True),
    ("A dog barks loudly", "audio, 0:02-0:03", False),
    ("The operator laughs", "audio, 0:00-0:01", False),
    ("The lord of the universe is mentioned", "audio, 0:01-0:03", True),
    ("Crown jewels are mentioned", "audio, 0:04-0:06", True),
]


def _answer(req) -> str:
    if req.task == "verify":
        return "no" if req.inputs["sentence"] == "So that is that." else "yes"
    if req.task == "decompose":
        return json.dumps({"facts": [req.inputs["sentence"]]})
    fact = req.inputs["fact"].lower()
    return "yes" if ("lord" in fact or "crown" in fact) else "no"


def make_run(tmp: Path, media: Path, name: str = "run", shift: int = 1) -> Path:
    """Six responses r0–r5, each two claims and a closing sentence; ``shift`` picks the second claim
    (another shift: another model's responses under the same ids)."""
    items = []
    for k in range(6):
        a, b = CLAIMS[k], CLAIMS[(k + shift) % 6]
        text = f"{a[0]} ({a[1]}). {b[0]} ({b[1]}). So that is that."
        items.append(Item(id=f"r{k}", media="friday.mp4", response=text, system="m1" if k < 3 else "m2"))
    spec = JudgeSpec(spec="scripted")
    cfg = ScoreConfig(judge_verify=spec, judge_decompose=spec, judge_entail=spec)
    j = ScriptedJudge(_answer)
    rd = RunFolder(tmp / name)
    asyncio.run(score_items(items, cfg, StageJudges(j, j, j), rd, place=MediaPlace(media)))
    summarize_run(rd, cfg)
    return rd.path


def make_labels(tmp: Path, flip_for_b: set[str]) -> Path:
    rows = []
    for ann in ("A", "B"):
        for k in range(6):
            a, b = CLAIMS[k], CLAIMS[(k + 1) % 6]
            sents = []
            for i, (claim, cite, ok) in enumerate((a, b)):
                sup = ok if not (ann == "B" and f"r{k}" in flip_for_b) else not ok
                sents.append({"index": i, "verifiable": True, "facts": [
                    {"text": f"{claim} ({cite}).", "citations": [cite], "supported": sup, "necessary": [sup]}]})
            sents.append({"index": 2, "verifiable": False})
            rows.append({"id": f"r{k}", "annotator": ann, "sentences": sents, "system": "m1" if k < 3 else "m2"})
    p = tmp / "labels.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return p


def test_calibrate_cli_end_to_end(tmp_path: Path, example_media: Path, capsys) -> None:
    run = make_run(tmp_path, example_media)
    labels = make_labels(tmp_path, flip_for_b={"r2"})
    out = tmp_path / "cal"
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--out", str(out), "--bootstrap", "500"]) == 0
    doc = json.loads((out / "calibration.json").read_text())
    c = doc["runs"][str(run)]
    assert c["n_responses"] == 6
    v = c["verifiability"]
    assert v["n"] == 18 and v["accuracy"] == 1.0 and v["kappa"] == 1.0
    d = c["decomposition"]
    assert d["precision"] == 1.0 and d["recall"] == 1.0 and d["citation_accuracy"] == 1.0
    s = c["support"]
    assert s["n"] == 12 and s["accuracy"] == 1.0  # the judge agrees with annotator A (the first to decompose)
    r = c["response"]["murgat_s"]
    assert r["n"] == 6 and r["pearson"]["value"] is not None
    assert (out / f"scatter_0_{run.name}.png").stat().st_size > 1000
    ia = doc["inter_annotator"]
    assert ia["annotators"] == ["A", "B"] and ia["support_fleiss_kappa"] < 1.0
    assert "calibration of" in capsys.readouterr().out


def test_human_scores_use_the_metric_formula() -> None:
    from murgat.human_eval.labels import ResponseLabel

    lab = ResponseLabel.model_validate({"id": "x", "sentences": [
        {"index": 0, "verifiable": True, "facts": [{"text": "f", "citations": ["audio, 0:01", "visual, 0:02"],
                                                    "supported": True, "necessary": [True, False]}]},
        {"index": 1, "verifiable": True, "facts": [{"text": "g", "citations": [], "supported": True}]},
        {"index": 2, "verifiable": False}]})
    h = human_scores(lab, None)
    assert h["coverage"] == 0.5 and h["recall"] == 1.0 and h["precision"] == 0.5
    assert h["murgat_s"] == pytest.approx(0.5 * (2 * 0.5 / 1.5))


def test_judge_selection_ranks_runs(tmp_path: Path, example_media: Path) -> None:
    run = make_run(tmp_path, example_media)
    labels_path = make_labels(tmp_path, set())
    from murgat.commands.calibrate.score_runs import select_judges
    from murgat.human_eval.labels import load_labels

    labels = load_labels(labels_path)
    good = calibrate_run(labels, RunFolder(run).latest_results(), n_resamples=200)
    worse = json.loads(json.dumps(good))
    worse["support"]["kappa"] = 0.1
    worse["verifiability"]["kappa"] = 0.2
    ranking = select_judges({"good": good, "worse": worse})
    assert [r["run"] for r in ranking] == ["good", "worse"]


def test_ratings_given_directly_are_the_human_figures() -> None:
    from murgat.commands.calibrate.score_runs import human_scores
    from murgat.human_eval.labels import ResponseLabel

    only_ratings = ResponseLabel(id="x", ratings={"murgat_s": 0.4, "coverage": 1.0, "grounding": 4})
    got = human_scores(only_ratings, None)
    assert got["murgat_s"] == 0.4 and got["coverage"] == 1.0 and got["precision"] is None


def test_calibrate_text_output_for_people(tmp_path: Path, example_media: Path, capsys) -> None:
    run = make_run(tmp_path, example_media)
    labels = make_labels(tmp_path, flip_for_b={"r2"})
    assert main(["calibrate", "--human", str(labels), "--run", f"{run}/", "--bootstrap", "300"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"calibration of {run} " in out  # "run/" and "run" are one stable name
    assert "6 responses" in out and "n=6" in out and "ICC(1,1) / (2,1) / (3,1) / (3,k)" in out


def test_undefined_kappa_is_not_used_for_ranking() -> None:
    from murgat.commands.calibrate.score_runs import select_judges

    def doc(vk, sk, r):
        return {"verifiability": {"kappa": vk}, "support": {"kappa": sk},
                "response": {"murgat_s": {"pearson": {"value": r}}}}

    ranking = select_judges({"a": doc(None, 0.5, 0.9), "b": doc(0.4, 0.4, 0.1)})
    a = next(r for r in ranking if r["run"] == "a")
    assert a["ranked_on"] == 2 and a["mean_rank"] == 1.0  # ranked on support κ and r only, first on both


# --- abstentions (the judge's silences are counted and shown) -------------------------------------------------


def _abstaining_run(tmp: Path, media: Path, entail: str = "crown") -> Path:
    """make_run's responses, judged by one that abstains on "So that is that." and on the facts naming
    ``entail`` (every fact with ``entail="all"``)."""
    def answer(req) -> str:
        if req.task == "verify":
            return "unknown" if req.inputs["sentence"] == "So that is that." else "yes"
        if req.task == "decompose":
            return json.dumps({"facts": [req.inputs["sentence"]]})
        fact = req.inputs["fact"].lower()
        if entail == "all" or entail in fact:
            return "unknown"
        return "yes" if "lord" in fact else "no"

    items = []
    for k in range(6):
        a, b = CLAIMS[k], CLAIMS[(k + 1) % 6]
        items.append(Item(id=f"r{k}", media="friday.mp4", response=f"{a[0]} ({a[1]}). {b[0]} ({b[1]}). So that is that."))
    spec = JudgeSpec(spec="scripted")
    cfg = ScoreConfig(judge_verify=spec, judge_decompose=spec, judge_entail=spec)
    j = ScriptedJudge(answer)
    rd = RunFolder(tmp / f"abstain-{entail}")
    asyncio.run(score_items(items, cfg, StageJudges(j, j, j), rd, place=MediaPlace(media)))
    summarize_run(rd, cfg)
    return rd.path


def test_calibrate_counts_what_the_judge_abstained_on(tmp_path: Path, example_media: Path, capsys) -> None:
    run = _abstaining_run(tmp_path, example_media)
    labels = make_labels(tmp_path, set())
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "50"]) == 0
    c = json.loads(capsys.readouterr().out)["runs"][str(run)]
    v = c["verifiability"]  # "So that is that." (6 sentences, human: not verifiable) got "unknown"
    assert v["n"] == 12 and v["n_labelled"] == 18 and v["n_abstained"] == 6 and v["n_unanswered"] == 0
    assert v["accuracy"] == 1.0 and v["accuracy_silence_as_disagreement"] == pytest.approx(12 / 18)
    s = c["support"]  # the 4 facts naming the crown jewels got "unknown"
    assert s["n"] == 8 and s["n_labelled"] == 12 and s["n_abstained"] == 4
    assert s["accuracy_silence_as_disagreement"] == pytest.approx(s["accuracy"] * 8 / 12)
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "50"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "of 18 labelled: abstained 6" in out and "of 12 labelled: abstained 4" in out


def test_a_stage_the_judge_never_answered_is_undefined_with_its_reason(tmp_path: Path, example_media: Path,
                                                                       capsys) -> None:
    run = _abstaining_run(tmp_path, example_media, entail="all")
    labels = make_labels(tmp_path, set())
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "50"]) == 0
    s = json.loads(capsys.readouterr().out)["runs"][str(run)]["support"]
    assert s["n"] == 0 and s["accuracy"] is None and s["kappa"] is None and s["n_abstained"] == 12
    assert "answered none of the 12" in s["reason"]
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "50"]) == 0
    assert "support: undefined — the judge answered none of the 12" in " ".join(capsys.readouterr().out.split())


def test_calibrate_shows_its_progress(tmp_path: Path, example_media: Path, capsys) -> None:
    run = make_run(tmp_path, example_media)
    labels = make_labels(tmp_path, set())
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "200"]) == 0
    err = capsys.readouterr().err
    assert "calibrating run: 200 bootstrap resamples" in err and "2400/2400" in err
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "200", "--quiet"]) == 0
    assert "bootstrap resamples" not in capsys.readouterr().err


# --- corrected figures (prediction-powered inference over a recorded random sample) ---------------------------


def write_run(tmp: Path, name: str, judge: list[float], videos: list[str] | None = None,
              correct: list[bool | None] | None = None) -> Path:
    """A score run folder holding one record per response (judge figure ``judge[k]`` for every metric),
    written and summarised with the engine's own run folder and metric code."""
    from murgat.core.metric import summarize_results
    from murgat.core.schema import ResponseResult, Scores
    from murgat.engine.folder import RunFolder as Folder

    recs = [ResponseResult(id=f"q{k:03d}", scores=Scores(coverage=j, precision=j, recall=j, f1=j, murgat_s=j),
                           video=(videos or [f"v{k}.mp4" for k in range(len(judge))])[k],
                           correct=None if correct is None else correct[k])
            for k, j in enumerate(judge)]
    rd = Folder(tmp / name)
    rd.append_many(recs)
    rd.write_summary(summarize_results(recs))
    return rd.path


def write_labels(tmp: Path, name: str, human: dict[str, float], design: dict | None) -> Path:
    rows = [{"id": i, "annotator": "ann", "ratings": {m: h for m in ("coverage", "precision", "recall", "murgat_s")},
             **({"sample": design} if design else {})} for i, h in human.items()]
    p = tmp / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _population(seed: int, n: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    human = np.round(rng.beta(2, 3, n), 3)
    judge = np.round(np.clip(human + 0.1 + rng.normal(0, 0.1, n), 0, 1), 3)  # a lenient judge
    return human, judge


def _sampled(run: Path, human, n: int, seed: int = 5, by_video: bool = False) -> tuple[list[str], dict]:
    from murgat.core.corrected import population
    from murgat.human_eval.sampling import draw_sample

    ids, videos = population(RunFolder(run).latest_results())
    drawn, design = draw_sample(ids, n, seed=seed, videos=videos if by_video else None)
    return drawn, design.model_dump()


def test_corrected_figures_from_a_recorded_sample(tmp_path: Path, capsys) -> None:
    import numpy as np

    from murgat.human_eval.ppi import prediction_powered_mean

    human, judge = _population(1, 120)
    run = write_run(tmp_path, "run", judge.tolist())
    drawn, design = _sampled(run, human, 30)
    hum = {f"q{k:03d}": float(human[k]) for k in range(120)}
    labels = write_labels(tmp_path, "labels.jsonl", {i: hum[i] for i in drawn}, design)
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "50"]) == 0
    k = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]
    assert k["sample_checked"] is True and k["assumption"] is None and k["sample"]["sample_size"] == 30
    b = k["figures"]["murgat_s"]
    lab = [int(i[1:]) for i in drawn]
    rest = [j for j in range(120) if j not in set(lab)]
    # the CLI's intervals take Student-t quantiles (small samples keep their coverage:
    # benchmarks/bench_ppi_small_n.py); the estimator is ppi-python's (tests/human_eval/test_ppi.py)
    want = prediction_powered_mean(human[lab], judge[lab], judge[rest], quantile="t")
    assert b["estimate"] == pytest.approx(want.estimate, abs=1e-12) and b["ci_low"] == pytest.approx(want.ci_low)
    assert b["lambda"] == pytest.approx(want.lam) and b["method"] == "ppi++"
    assert b["n_labelled"] == 30 and b["n_unlabelled"] == 90
    assert b["human_only"]["estimate"] == pytest.approx(float(np.mean(human[lab])))
    summary = json.loads((run / "summary.json").read_text())
    assert b["judge_only"]["estimate"] == pytest.approx(summary["murgat_s"]["value"])  # the run's own figure
    assert b["ppi"]["lambda"] == 1.0
    # the lenient judge's +0.1 is removed: the corrected figure is near the human truth, the judge's is not
    truth = float(human.mean())
    assert b["ci_low"] <= truth <= b["ci_high"] and not (b["judge_only"]["ci_low"] <= truth <= b["judge_only"]["ci_high"])
    assert "attributed_accuracy" not in k["figures"]  # the run has no gold answers
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "50"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "human-valid figures of" in out and "30 / 90" in out and "ppi++" in out


def test_corrected_figures_are_refused_without_a_recorded_sample(tmp_path: Path, capsys) -> None:
    human, judge = _population(2, 60)
    run = write_run(tmp_path, "run", judge.tolist())
    hand_picked = {f"q{k:03d}": float(human[k]) for k in range(20)}  # the first 20: not a random sample
    labels = write_labels(tmp_path, "labels.jsonl", hand_picked, None)
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "50"]) == 0
    k = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]
    assert "refused" in k and "figures" not in k and "no sampling design" in k["problems"][0]
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "50"]) == 0
    assert "corrected estimates not computed" in capsys.readouterr().out
    # --assume-random computes them, and says so in the output
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "50",
                 "--assume-random"]) == 0
    k = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]
    assert k["figures"]["murgat_s"]["estimate"] is not None and "--assume-random" in k["assumption"]
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "50", "--assume-random"]) == 0
    assert "assumed: --assume-random" in " ".join(capsys.readouterr().out.split())
    # a recorded design whose sample does not contain a labelled item is refused too
    drawn, design = _sampled(run, human, 10)
    extra = next(f"q{k:03d}" for k in range(60) if f"q{k:03d}" not in drawn)
    forged = write_labels(tmp_path, "forged.jsonl", {i: 0.5 for i in [*drawn, extra]}, design)
    assert main(["calibrate", "--human", str(forged), "--run", str(run), "--json", "--bootstrap", "50"]) == 0
    k = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]
    assert "refused" in k and "not in the recorded sample" in k["problems"][0]


def test_corrected_figures_clustered_by_video_and_bootstrapped(tmp_path: Path, capsys) -> None:
    human, judge = _population(3, 90)
    videos = [f"video{k // 3}.mp4" for k in range(90)]  # 30 videos of 3 responses
    run = write_run(tmp_path, "run", judge.tolist(), videos)
    drawn, design = _sampled(run, human, 10, by_video=True)
    labels = write_labels(tmp_path, "labels.jsonl", {i: float(human[int(i[1:])]) for i in drawn}, design)
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "200"]) == 0
    k = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]
    b = k["figures"]["murgat_s"]
    assert k["clustered_by"] == "video" and "drawn by video" in k["notes"][0]  # the design makes it clustered
    assert b["clustered"] and b["n_clusters_labelled"] == 10 and b["n_clusters_unlabelled"] == 20
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "200",
                 "--ci", "bootstrap", "--quiet"]) == 0
    boot = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]["figures"]["murgat_s"]
    assert boot["method"] == "ppi++ bootstrap" and boot["estimate"] == b["estimate"]
    assert boot["ci_low"] < boot["estimate"] < boot["ci_high"]


def test_attributed_accuracy_is_corrected_with_the_human_murgat_s(tmp_path: Path, capsys) -> None:
    human, judge = _population(4, 80)
    correct = [k % 3 != 0 for k in range(80)]
    run = write_run(tmp_path, "run", judge.tolist(), correct=correct)
    drawn, design = _sampled(run, human, 40)
    labels = write_labels(tmp_path, "labels.jsonl", {i: float(human[int(i[1:])]) for i in drawn}, design)
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "50"]) == 0
    b = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]["figures"]["attributed_accuracy"]
    summary = json.loads((run / "summary.json").read_text())
    assert b["judge_only"]["estimate"] == pytest.approx(summary["attributed_accuracy"]["value"])
    lab = [int(i[1:]) for i in drawn]
    assert b["human_only"]["estimate"] == pytest.approx(
        sum(1.0 for k in lab if correct[k] and human[k] >= 0.5) / len(lab))


def test_paired_difference_of_two_models_is_corrected(tmp_path: Path, capsys) -> None:
    import numpy as np

    from murgat.human_eval.ppi import prediction_powered_difference

    ha, ja = _population(5, 100)
    rng = np.random.default_rng(55)  # model B: about 0.05 better on the same questions, the same lenient judge
    hb = np.round(np.clip(ha + 0.05 + rng.normal(0, 0.08, 100), 0, 1), 3)
    jb = np.round(np.clip(hb + 0.1 + rng.normal(0, 0.1, 100), 0, 1), 3)
    run_a, run_b = write_run(tmp_path, "model-a", ja.tolist()), write_run(tmp_path, "model-b", jb.tolist())
    drawn, design = _sampled(run_a, ha, 40)
    assert _sampled(run_b, hb, 40) == (drawn, design)  # the same items, the same seed: the same sample
    la = write_labels(tmp_path, "a.jsonl", {i: float(ha[int(i[1:])]) for i in drawn}, design)
    lb = write_labels(tmp_path, "b.jsonl", {i: float(hb[int(i[1:])]) for i in drawn}, design)
    assert main(["calibrate", "--human", str(la), "--run", str(run_a), "--human", str(lb), "--run", str(run_b),
                 "--json", "--bootstrap", "50"]) == 0
    doc = json.loads(capsys.readouterr().out)
    d = doc["differences"][0]
    assert d["a"] == str(run_a) and d["b"] == str(run_b) and d["direction"] == "b - a"
    lab = [int(i[1:]) for i in drawn]
    rest = [k for k in range(100) if k not in set(lab)]
    want = prediction_powered_difference(ha[lab], hb[lab], ja[lab], jb[lab], ja[rest], jb[rest], quantile="t")
    got = d["figures"]["murgat_s"]
    assert got["estimate"] == pytest.approx(want.estimate) and got["ci_high"] == pytest.approx(want.ci_high)
    assert got["ci_low"] <= float((hb - ha).mean()) <= got["ci_high"]
    assert "judge_agreement" not in doc  # different responses: judge agreement is not what this compares
    assert main(["calibrate", "--human", str(la), "--run", str(run_a), "--human", str(lb), "--human", str(lb),
                 "--run", str(run_b)]) == 2  # three label files for two runs


def test_plan_says_how_many_labels_a_width_needs(tmp_path: Path, capsys) -> None:
    human, judge = _population(6, 400)
    run = write_run(tmp_path, "run", judge.tolist())
    drawn, design = _sampled(run, human, 30)
    pilot = write_labels(tmp_path, "pilot.jsonl", {i: float(human[int(i[1:])]) for i in drawn}, design)
    assert main(["calibrate", "--plan", "--human", str(pilot), "--run", str(run), "--half-width", "0.03",
                 "--json"]) == 0
    p = json.loads(capsys.readouterr().out)["plan"][str(run)]["figures"]["murgat_s"]
    assert p["pilot_n"] == 30 and p["population"] == 400
    assert p["n_needed"] is not None and p["n_needed"] < p["n_needed_human_only"]
    assert main(["calibrate", "--plan", "--human", str(pilot), "--run", str(run), "--half-width", "0.03"]) == 0
    assert "labels needed for a 95% CI of ±0.03" in " ".join(capsys.readouterr().out.split())
    assert main(["calibrate", "--plan", "--human", str(pilot), "--run", str(run), "--half-width", "0"]) == 2


# --- agreement between judges on the same responses ---------------------------------------------------------


def test_agreement_between_judges_of_the_same_responses(tmp_path: Path, example_media: Path, capsys) -> None:
    good = make_run(tmp_path / "good", example_media)
    abstain = _abstaining_run(tmp_path, example_media)  # the same responses; abstains on the crown jewels
    labels = make_labels(tmp_path, set())
    assert main(["calibrate", "--human", str(labels), "--run", str(good), "--run", str(abstain), "--json",
                 "--bootstrap", "50"]) == 0
    ag = json.loads(capsys.readouterr().out)["judge_agreement"]
    ver = ag["verifiability"]["pairwise_kappa"][0]
    assert ver["n"] == 12 and ver["agreement"] == 1.0  # the 6 abstentions are absent, not "no"
    # every sentence verifiable by both: κ is undefined with its reason, as α is on the same verdicts
    assert ver["kappa"] is None and "every value is" in ver["reason"]
    assert ag["verifiability"]["krippendorff_alpha"]["alpha"] is None
    assert ag["verifiability"]["krippendorff_alpha"]["reason"] == ver["reason"]
    sup = ag["support"]["pairwise_kappa"][0]
    assert sup["n"] == 8 and sup["agreement"] == 1.0  # the same verdicts on the facts both decided
    assert ag["support"]["krippendorff_alpha"]["n_units"] == 8
    assert ag["support"]["errors"]["n_judges"] == 2
    assert "murgat_s" in ag
    assert main(["calibrate", "--human", str(labels), "--run", str(good), "--run", str(abstain),
                 "--bootstrap", "50"]) == 0
    assert "agreement between the judges" in capsys.readouterr().out


def test_labels_for_ids_not_in_the_run_are_said_out_loud(tmp_path: Path, example_media: Path, capsys) -> None:
    """Labels of another run (or of ids that changed) were left out of every statistic without a
    word: the table said "6 responses" and nothing about the 6 labelled ids it could not use."""
    run = make_run(tmp_path, example_media)
    labels = make_labels(tmp_path, flip_for_b=set())
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    ghosts = [{**r, "id": f"ghost-{r['id']}"} for r in rows]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows + ghosts))
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "50", "--json"]) == 0
    c = json.loads(capsys.readouterr().out)["runs"][str(run)]
    assert c["n_responses"] == 6 and c["n_labelled_not_in_run"] == 6 and c["labelled_not_in_run"][0] == "ghost-r0"
    assert c["n_labelled_with_error_records"] == 0
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "50"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "6 labelled responses left out of every statistic: no record in this run" in out


def test_an_unread_answer_is_not_correct_in_the_attributed_accuracy_being_corrected() -> None:
    """The judge's per-response attributed accuracy is counted as the run's figure counts it: an answer
    that could not be read is not correct (0), not left out (it was, so the corrected figure was over
    other items than the run's)."""
    from murgat.core.corrected import human_figures, judge_figure
    from murgat.core.schema import ResponseResult, Scores

    unread = ResponseResult(id="a", gold="B", answer_problem="no final answer found", scores=Scores(murgat_s=1.0))
    assert judge_figure(unread, "attributed_accuracy") == 0.0
    assert judge_figure(ResponseResult(id="b", scores=Scores(murgat_s=1.0)), "attributed_accuracy") is None  # no gold
    assert human_figures([], unread)["attributed_accuracy"] is None  # no human MURGAT-S without labels


def test_calibrate_out_is_claimed_before_any_work(tmp_path: Path, example_media: Path, capsys) -> None:
    """``--out`` goes through the one output rule: a run folder or the labels file is refused
    (exit 2, nothing touched) before a bootstrap starts; before, ``--out RUN`` wrote
    ``calibration.json`` and plots into another command's folder."""
    run = make_run(tmp_path, example_media)
    labels = make_labels(tmp_path, flip_for_b=set())
    before = {p: p.read_bytes() for p in [*run.iterdir(), labels] if p.is_file()}
    for out in (run, labels):
        assert main(["calibrate", "--human", str(labels), "--run", str(run), "--out", str(out),
                     "--bootstrap", "50"]) == 2
        err = capsys.readouterr().err
        assert f"--out {out}" in err and "Traceback" not in err
    assert {p: p.read_bytes() for p in before} == before and not (run / "calibration.json").exists()
    out = tmp_path / "cal"
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--out", str(out), "--bootstrap", "50",
                 "--json"]) == 0
    doc = json.loads((out / "calibration.json").read_text())
    assert sorted(p.name for p in out.iterdir()) == ["calibration.json", f"scatter_0_{run.name}.png"]
    assert doc["plots"][str(run)] == str(out / f"scatter_0_{run.name}.png")


def test_a_plot_that_cannot_be_written_is_refused_before_any_calibration(tmp_path: Path, example_media: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys) -> None:
    """``--out``'s scatter plot a symbolic link to the labels (or out of the folder): refused by the one
    output rule when ``--out`` is claimed, not after the bootstrap (where it cost the whole calibration
    and ``calibration.json`` was never written)."""
    import os

    import murgat.commands.calibrate.score_runs

    run = make_run(tmp_path, example_media)
    out = tmp_path / "cal"
    out.mkdir()
    labels = make_labels(out, set())  # the labels inside --out: an input there is never written over
    os.symlink(labels.name, out / f"scatter_0_{run.name}.png")
    monkeypatch.setattr(murgat.commands.calibrate.score_runs, "calibrate_run", lambda *a, **k: pytest.fail("calibrated before refusing"))
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--out", str(out)]) == 2
    assert f"scatter_0_{run.name}.png: is an input of this command" in capsys.readouterr().err
    assert labels.read_text().startswith("{")  # the labels are untouched


@pytest.mark.parametrize(("threshold", "why"), [
    ("NaN", "attributed_threshold is NaN, not a number in [0, 1]"),  # every SAA was 0
    ("true", "attributed_threshold is true, not a number in [0, 1]"),  # read as 1
    ('"0.5"', 'attributed_threshold is "0.5", not a number in [0, 1]'),
    ("DEEP", "cannot be read (JSON nested too deeply)"),  # was a RecursionError traceback
])
def test_a_summary_threshold_that_is_not_a_threshold_is_refused(tmp_path: Path, example_media: Path, threshold: str,
                                                                why: str, capsys) -> None:
    run = make_run(tmp_path, example_media)
    labels = make_labels(tmp_path, set())
    summary = run / "summary.json"
    doc = json.loads(summary.read_text())
    summary.write_text("[" * 100_000 + "]" * 100_000 if threshold == "DEEP" else
                       json.dumps({**doc, "attributed_threshold": "T"}).replace('"T"', threshold))
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "50"]) == 2
    err = capsys.readouterr().err
    assert f"{summary}: {why}" in err and "pass --attributed-threshold" in err
    # the option decides instead (its own range is checked by its parser)
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--bootstrap", "50", "--json",
                 "--attributed-threshold", "0.5"]) == 0
    capsys.readouterr()


def test_intervals_of_proportions_stay_in_their_range_and_say_when_cut(tmp_path: Path, capsys) -> None:
    """Three labelled responses of four, figures near 1: the normal interval runs past 1 (it gave
    coverage [0.775, 1.052]); a proportion's interval is cut to [0, 1] with a note, and the effective
    n is at most the four responses."""
    judge = [1.0, 0.8, 1.0, 0.9]
    run = write_run(tmp_path, "run", judge)
    labels = write_labels(tmp_path, "labels.jsonl", {"q000": 1.0, "q001": 0.85, "q002": 1.0}, None)
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--assume-random",
                 "--bootstrap", "50"]) == 0
    figures = json.loads(capsys.readouterr().out)["runs"][str(run)]["corrected"]["figures"]
    cut = 0
    for name, b in figures.items():
        for part in (b, b["ppi"], b["human_only"], b["judge_only"]):
            for key in ("estimate", "ci_low", "ci_high"):
                assert part[key] is None or 0.0 <= part[key] <= 1.0, (name, key, part)
        assert b["effective_n"] is None or b["effective_n"] <= 4, (name, b["effective_n"])
        cut += "figure's range [0, 1]" in (b.get("note") or "")
    assert cut  # the normal interval did run past 1, and the output says it was cut
    assert main(["calibrate", "--human", str(labels), "--run", str(run), "--assume-random", "--bootstrap", "50"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "cut to the figure's range [0, 1]" in out


def _labels_bound_to(run: Path, path: Path) -> Path:
    """Labels of every sentence and fact of ``run`` (all supported, all verifiable), each line carrying
    the digests the labelling page writes (the response's, each sentence's and fact's)."""
    from murgat.human_eval.labels import response_digest, text_digest

    rows = []
    for r in RunFolder(run).latest_results():
        sents = [{"index": sr.sentence.index, "text": sr.sentence.text, "verifiable": True,
                  "text_sha256": text_digest(sr.sentence.text),
                  "facts": [{"text": f.text, "citations": [c.raw for c in f.citations], "supported": True,
                             "text_sha256": text_digest(f.text)} for f in sr.facts]} for sr in r.sentences]
        rows.append({"id": r.id, "annotator": "ann", "sentences": sents,
                     "response_sha256": response_digest([sr.sentence.text for sr in r.sentences])})
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    return path


def test_labels_of_another_run_with_the_same_ids_are_set_aside(tmp_path: Path, example_media: Path, capsys) -> None:
    """Labels made on run A (digests of A's text) calibrate A; given with run B, whose items have the
    same ids but other responses, every line is set aside and said so, and nothing is compared."""
    run_a = make_run(tmp_path, example_media, "a", shift=1)
    run_b = make_run(tmp_path, example_media, "b", shift=2)
    labels = _labels_bound_to(run_a, tmp_path / "labels.jsonl")
    capsys.readouterr()
    assert main(["calibrate", "--human", str(labels), "--run", str(run_a), "--json", "--bootstrap", "50"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out[got.out.index("{"):])
    bind = doc["label_binding"][str(run_a)]
    assert bind["n_checked"] == 6 and bind["set_aside"] == [] and "set aside" not in got.err
    assert doc["runs"][str(run_a)]["verifiability"]["n"] == 18
    assert main(["calibrate", "--human", str(labels), "--run", str(run_b), "--json", "--bootstrap", "50"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out[got.out.index("{"):])
    bind = doc["label_binding"][str(run_b)]
    assert bind["n_checked"] == 0 and len(bind["set_aside"]) == 6
    assert got.err.count("another response text") == 6 and "'r3'" in got.err
    assert doc["runs"][str(run_b)]["n_responses"] == 0  # nothing of B was compared with labels of A


def test_an_edited_sentence_label_is_set_aside_and_an_undigested_file_is_read_with_a_warning(
        tmp_path: Path, example_media: Path, capsys) -> None:
    from murgat.human_eval.labels import bind_labels, load_labels, response_digest, text_digest

    run = make_run(tmp_path, example_media)
    labels = load_labels(_labels_bound_to(run, tmp_path / "labels.jsonl"))
    units = {r.id: {sr.sentence.index: sr.sentence.text for sr in r.sentences} for r in RunFolder(run).latest_results()}
    first = labels[0]
    edited = first.model_copy(update={"sentences": [
        first.sentences[0].model_copy(update={"text_sha256": text_digest("something else")}), *first.sentences[1:]]})
    fact_edited = labels[1].model_copy(deep=True)
    fact_edited.sentences[0].facts[0].text = "A fact nobody was shown."
    kept, b = bind_labels([edited, fact_edited, *labels[2:]], units)
    assert b.n_checked == 6 and len(b.set_aside) == 2
    assert [s.index for s in kept[0].sentences] == [s.index for s in first.sentences[1:]]
    assert kept[1].sentences[0].facts == [] and "edited" in b.set_aside[1]
    assert response_digest(["a b", "c"]) != response_digest(["a", "b c"])  # units are part of what is digested
    make_labels(tmp_path, flip_for_b=set())  # the old schema: no digests
    assert main(["calibrate", "--human", str(tmp_path / "labels.jsonl"), "--run", str(run), "--json",
                 "--bootstrap", "50"]) == 0
    err = capsys.readouterr().err
    assert "12 of 12 label lines carry no digest" in err and "cannot be checked" in err
