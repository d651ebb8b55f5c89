"""Corrected and human-only intervals at small n: do they keep their nominal coverage?

The normal quantile of ppi-python's intervals is right only as the number of labels grows: with
30 labels the 90% PPI++ interval covered 0.856–0.880. Student-t quantiles (n − 1 degrees of
freedom; ``murgat.human_eval.ppi.prediction_powered_mean(..., quantile="t")``, what ``murgat calibrate``
uses) widen it by the factor t/z (1.699/1.645 at n = 30). Measured here, seeded (run:
``python benchmarks/bench_ppi_small_n.py [--draws 1000]``; writes ``benchmarks/results/ppi_small_n.json``):

1. **Real labels**: FaithScore's 1,378 sub-sentences (human "descriptive" vs murgat's rule-based
   verifiability check), 30 labelled per draw, the truth the share over all of them.
2. **A lenient judge** (``murgat.human_eval.simulation.lenient_judge_scores``): 500 responses, 30 labelled.
3. **Clustered** (``clustered_population``): 10 labelled videos of 6 items against 300 others,
   clustered by video (t with G − 1 df, as before).

Each: coverage of the 90% interval for PPI++ and human-only, with z and with t, over the draws.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from coverage_cli import coverage_args, mc_standard_error, write_result

HERE = Path(__file__).resolve().parent
FAITHSCORE = HERE.parent / "tests" / "data" / "real" / "annotations" / "faithscore" / "annotation.jsonl"
KINDS = (("ppi++", None), ("human-only", 0.0))


def _tally(draws: list[tuple[np.ndarray, np.ndarray, np.ndarray, float, Any]], alpha: float) -> dict[str, Any]:
    from murgat.human_eval.ppi import prediction_powered_mean

    out: dict[str, Any] = {}
    for q in ("z", "t"):
        for name, lam in KINDS:
            hits, width, undefined = 0, 0.0, 0
            for y, yh, yu, truth, cl in draws:
                e = prediction_powered_mean(y, yh, yu, alpha=alpha, lam=lam, clusters=cl, quantile=q)  # type: ignore[arg-type]
                if e.ci_low is None or e.ci_high is None:
                    undefined += 1
                    continue
                hits += e.ci_low <= truth <= e.ci_high
                width += e.ci_high - e.ci_low
            n = len(draws) - undefined
            out[f"{name} ({q})"] = {"coverage": hits / n if n else None, "mean_width": width / n if n else None,
                                    "undefined": undefined}
    return out


def real_labels(draws: int, n: int, rng: np.random.Generator) -> list[Any]:
    from murgat.core.rules import rule_verifiable
    from murgat.human_eval.labels import load_faithscore

    sents = [s for lab in load_faithscore(FAITHSCORE) for s in lab.sentences]
    human = np.array([1.0 if s.verifiable else 0.0 for s in sents])
    judge = np.array([1.0 if rule_verifiable(s.text or "")[0] else 0.0 for s in sents])
    out = []
    for _ in range(draws):
        order = rng.permutation(len(human))
        lab, unl = order[:n], order[n:]
        out.append((human[lab], judge[lab], judge[unl], float(human.mean()), None))
    return out


def lenient(draws: int, n: int, rng: np.random.Generator) -> list[Any]:
    from murgat.human_eval.simulation import LENIENT_TRUTH, lenient_judge_scores

    out = []
    for _ in range(draws):
        human, judge = lenient_judge_scores(rng, 500)
        order = rng.permutation(500)
        lab, unl = order[:n], order[n:]
        out.append((human[lab], judge[lab], judge[unl], LENIENT_TRUTH, None))
    return out


def clustered(draws: int, videos: int, rng: np.random.Generator) -> list[Any]:
    from murgat.human_eval.simulation import CLUSTERED_TRUTH, clustered_population

    out = []
    for _ in range(draws):
        y, yhat, video = clustered_population(rng, 300 + videos, 6)
        lab = video < videos
        out.append((y[lab], yhat[lab], yhat[~lab], CLUSTERED_TRUTH, np.concatenate([video[lab], video[~lab]])))
    return out


def main() -> None:
    args = coverage_args(__doc__, labelled=30)
    rng = np.random.default_rng(30)
    doc = {"draws": args.draws, "labelled": args.n, "alpha": args.alpha,
           "mc_standard_error": mc_standard_error(args.alpha, args.draws),
           "real_labels": _tally(real_labels(args.draws, args.n, rng), args.alpha),
           "lenient_judge": _tally(lenient(args.draws, args.n, rng), args.alpha),
           "clustered_10_videos": _tally(clustered(args.draws, 10, rng), args.alpha)}
    write_result("ppi_small_n", doc)


if __name__ == "__main__":
    main()
