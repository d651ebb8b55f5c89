"""`murgat calibrate` end to end: a score run made in the test, two annotators' labels."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from murgat.calibrate import calibrate_run, human_scores
from murgat.cli import main
from murgat.judges.scripted import ScriptedJudge
from murgat.pipeline.config import JudgeSpec, ScoreConfig
from murgat.pipeline.rundir import RunDir
from murgat.pipeline.runner import run_items, summarize_run
from murgat.pipeline.stages import Judges
from murgat.schema import Item

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


def make_run(tmp: Path, media: Path) -> Path:
    items = []
    for k in range(6):
        a, b = CLAIMS[k], CLAIMS[(k + 1) % 6]
        text = f"{a[0]} ({a[1]}). {b[0]} ({b[1]}). So that is that."
        items.append(Item(id=f"r{k}", media="friday.mp4", response=text, system="m1" if k < 3 else "m2"))
    spec = JudgeSpec(spec="scripted")
    cfg = ScoreConfig(judge_verify=spec, judge_decompose=spec, judge_entail=spec)
    j = ScriptedJudge(_answer)
    rd = RunDir(tmp / "run")
    asyncio.run(run_items(items, cfg, Judges(j, j, j), rd, media_root=media))
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
    from human_eval.labels import ResponseLabel

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
    from human_eval.labels import load_labels
    from murgat.calibrate import select_judges

    labels = load_labels(labels_path)
    good = calibrate_run(labels, RunDir(run).latest_results(), n_resamples=200)
    worse = json.loads(json.dumps(good))
    worse["support"]["kappa"] = 0.1
    worse["verifiability"]["kappa"] = 0.2
    ranking = select_judges({"good": good, "worse": worse})
    assert [r["run"] for r in ranking] == ["good", "worse"]


def test_ratings_given_directly_are_the_human_figures() -> None:
    from human_eval.labels import ResponseLabel
    from murgat.calibrate import human_scores

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
    from murgat.calibrate import select_judges

    def doc(vk, sk, r):
        return {"verifiability": {"kappa": vk}, "support": {"kappa": sk},
                "response": {"murgat_s": {"pearson": {"value": r}}}}

    ranking = select_judges({"a": doc(None, 0.5, 0.9), "b": doc(0.4, 0.4, 0.1)})
    a = next(r for r in ranking if r["run"] == "a")
    assert a["ranked_on"] == 2 and a["mean_rank"] == 1.0  # ranked on support κ and r only, first on both
