"""Corrected (prediction-powered) estimates: do the intervals cover, and what do they cost in labels?

Three measurements, all seeded (run: ``python benchmarks/bench_ppi.py [--draws 10000]``; writes
``benchmarks/results/ppi.json``):

1. **Real labels** — FaithScore's 1,378 stage-1 sub-sentences (``tests/data/real/annotations/faithscore``, MIT): the
   human label "descriptive", the judge murgat's rule-based verifiability check. Each draw labels
   100 random sub-sentences and leaves 1,278 judged only; the truth is the share of descriptive
   ones among all 1,378. Coverage and mean width of the 90% PPI++, plain-PPI and human-only
   intervals.
2. **Clustered population** (``murgat.human_eval.simulation.clustered_population``): 60 labelled videos
   of 6 items against 300 other videos; truth 0.5. The 90% interval clustered by video against
   the one that treats items as independent.
3. **The worked example of docs/guide/calibration.md**: 500 responses judged by a lenient judge
   (``lenient_judge_scores``), 60 of them labelled by a random sample drawn as
   ``murgat annotate --sample 60`` draws it, then ``murgat calibrate`` on the real run folder —
   the judge-only, human-only and corrected MURGAT-S side by side — and, over repeated
   populations, how often each 95% interval covers the human truth.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FAITHSCORE = ROOT / "tests" / "data" / "real" / "annotations" / "faithscore" / "annotation.jsonl"


def _hit(e: Any, truth: float) -> tuple[bool, float]:
    """(the interval covers ``truth``, its width); every interval here is defined (n ≥ 60)."""
    assert e.ci_low is not None and e.ci_high is not None, e.reason
    return bool(e.ci_low <= truth <= e.ci_high), float(e.ci_high - e.ci_low)


def real_labels(draws: int, n: int = 100, alpha: float = 0.1, seed: int = 20241) -> dict:
    from murgat.core.rules import rule_verifiable
    from murgat.human_eval.labels import load_faithscore
    from murgat.human_eval.ppi import prediction_powered_mean

    sents = [s for lab in load_faithscore(FAITHSCORE) for s in lab.sentences]
    human = np.array([1.0 if s.verifiable else 0.0 for s in sents])
    judge = np.array([1.0 if rule_verifiable(s.text or "")[0] else 0.0 for s in sents])
    truth = float(human.mean())
    rng = np.random.default_rng(seed)
    covered = dict.fromkeys(("ppi++", "ppi", "human-only"), 0)
    widths = dict.fromkeys(covered, 0.0)
    lams: list[float] = []
    for _ in range(draws):
        order = rng.permutation(len(human))
        lab, unl = order[:n], order[n:]
        for name, lam in (("ppi++", None), ("ppi", 1.0), ("human-only", 0.0)):
            e = prediction_powered_mean(human[lab], judge[lab], judge[unl], alpha=alpha, lam=lam)
            hit, w = _hit(e, truth)
            covered[name] += hit
            widths[name] += w
            if lam is None and e.lam is not None:
                lams.append(e.lam)
    out: dict[str, Any] = {"items": len(human), "labelled": n, "alpha": alpha, "draws": draws, "truth": truth,
           "judge_share": float(judge.mean()), "judge_agreement": float((judge == human).mean()),
           "corr": float(np.corrcoef(human, judge)[0, 1]), "mean_lambda": float(np.mean(lams))}
    for name in covered:
        out[name] = {"coverage": covered[name] / draws, "mean_width": widths[name] / draws}
    return out


def clustered(draws: int, alpha: float = 0.1, seed: int = 7) -> dict:
    from murgat.human_eval.ppi import prediction_powered_mean
    from murgat.human_eval.simulation import CLUSTERED_TRUTH, clustered_population

    rng = np.random.default_rng(seed)
    cov = {"clustered": 0, "independent": 0}
    width = {"clustered": 0.0, "independent": 0.0}
    for _ in range(draws):
        y, yhat, video = clustered_population(rng, 360, 6)
        lab = video < 60
        cl = np.concatenate([video[lab], video[~lab]])
        for name, c in (("clustered", cl), ("independent", None)):
            hit, w = _hit(prediction_powered_mean(y[lab], yhat[lab], yhat[~lab], alpha=alpha, clusters=c),
                          CLUSTERED_TRUTH)
            cov[name] += hit
            width[name] += w
    se = float(np.sqrt((1 - alpha) * alpha / draws))
    return {"draws": draws, "alpha": alpha, "labelled_videos": 60, "other_videos": 300, "items_per_video": 6,
            "mc_standard_error": se,
            **{name: {"coverage": cov[name] / draws, "mean_width": width[name] / draws} for name in cov}}


def worked_example(repeats: int, seed: int = 35) -> dict:
    """500 responses, 60 labelled: one real run folder through murgat calibrate, then repeated populations."""
    from murgat.core.metric import summarize_results
    from murgat.core.schema import ResponseResult, Scores
    from murgat.engine.folder import RunFolder
    from murgat.human_eval.ppi import prediction_powered_mean
    from murgat.human_eval.sampling import draw_sample
    from murgat.human_eval.simulation import LENIENT_TRUTH, lenient_judge_scores

    rng = np.random.default_rng(seed)
    human, judge = lenient_judge_scores(rng, 500)
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        recs = [ResponseResult(id=f"r{k:03d}", video=f"v{k:03d}.mp4",
                               scores=Scores(coverage=1.0, precision=float(j), recall=float(j), f1=float(j),
                                             murgat_s=float(j))) for k, j in enumerate(judge)]
        rd = RunFolder(run)
        rd.append_many(recs)
        rd.write_summary(summarize_results(recs))
        drawn, design = draw_sample([r.id for r in recs], 60, seed=seed)  # what murgat annotate --sample 60 draws
        labels = Path(tmp) / "labels.jsonl"
        labels.write_text("".join(json.dumps({"id": i, "annotator": "ann", "sample": design.model_dump(),
                                              "ratings": {"coverage": 1.0, "murgat_s": float(human[int(i[1:])])}})
                                  + "\n" for i in drawn))
        got = subprocess.run([sys.executable, "-m", "murgat", "calibrate", "--human", str(labels), "--run", str(run),
                              "--json", "--bootstrap", "200"], capture_output=True, text=True, check=True)
        block = json.loads(got.stdout)["runs"][str(run)]["corrected"]["figures"]["murgat_s"]
    one = {"responses": 500, "labelled": 60, "seed": seed, "truth_of_this_population": float(human.mean()),
           "judge_only": block["judge_only"], "human_only": block["human_only"],
           "corrected": {k: block[k] for k in ("estimate", "ci_low", "ci_high", "lambda", "effective_n", "method")}}
    cover = {"judge-only": 0, "human-only": 0, "corrected": 0}
    width = {"judge-only": 0.0, "human-only": 0.0, "corrected": 0.0}
    for _ in range(repeats):
        h, j = lenient_judge_scores(rng, 500)
        order = rng.permutation(500)
        lab, unl = order[:60], order[60:]
        truth = LENIENT_TRUTH  # the population's expected MURGAT-S: intervals for the human figure
        for name, e in (("corrected", prediction_powered_mean(h[lab], j[lab], j[unl])),
                        ("human-only", prediction_powered_mean(h[lab], j[lab], j[unl], lam=0.0)),
                        ("judge-only", prediction_powered_mean(j, j, [], lam=0.0))):
            hit, w = _hit(e, truth)
            cover[name] += hit
            width[name] += w
    one["repeated"] = {"populations": repeats, **{k: {"coverage": cover[k] / repeats, "mean_width": width[k] / repeats}
                                                  for k in cover}}
    return one


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=10_000)
    args = ap.parse_args()
    t0 = time.perf_counter()
    out: dict[str, Any] = {"real_labels": real_labels(args.draws), "real_labels_1000": real_labels(1000),
           "clustered": clustered(args.draws), "worked_example": worked_example(min(args.draws, 2000))}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "ppi.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
