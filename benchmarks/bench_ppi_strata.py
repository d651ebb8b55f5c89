"""Stratified PPI: does its interval keep its coverage, and is it narrower than the unstratified one?

A simulated population of 1,000 responses in three strata whose judge–human disagreement differs
tenfold (``easy`` 600 items, judge noise 0.02; ``mid`` 300, 0.15; ``hard`` 100, 0.45; a lenient
judge, +0.1, everywhere). Per draw (seeded; run: ``python benchmarks/bench_ppi_strata.py
[--draws 1000]``; writes ``benchmarks/results/ppi_strata.json``):

* **stratified**: 60 labels by Neyman allocation (∝ N_h · sd(human − judge)_h), estimated with
  ``murgat.human_eval.stratified.stratified_mean`` (PPI++, plain PPI and human-only per stratum);
* **unstratified**: 60 labels drawn uniformly, ``prediction_powered_mean`` (PPI++, Student t), the
  estimate ``murgat calibrate`` gives on a uniform sample;
* **naive**: the Neyman-allocated labels put through the unstratified estimator, as if they were
  uniform: what calibrate would report if it ignored the design.

Each: coverage of the 90% interval of the population's human mean and its mean width.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from coverage_cli import coverage_args, mc_standard_error, write_result

SIZES = {"easy": 600, "mid": 300, "hard": 100}
NOISE = {"easy": 0.02, "mid": 0.15, "hard": 0.45}
BASE = {"easy": 0.7, "mid": 0.5, "hard": 0.3}


def population(rng: np.random.Generator) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    human = {h: np.clip(rng.normal(BASE[h], 0.15, n), 0, 1) for h, n in SIZES.items()}
    judge = {h: np.clip(human[h] + 0.1 + rng.normal(0, NOISE[h], len(human[h])), 0, 1) for h in SIZES}
    return human, judge


class Tally:
    """Coverage and width of one kind of interval over the draws."""

    def __init__(self) -> None:
        self.hits = self.n = self.undefined = 0
        self.width = 0.0

    def add(self, lo: float | None, hi: float | None, truth: float) -> None:
        if lo is None or hi is None:
            self.undefined += 1
            return
        self.n += 1
        self.hits += lo <= truth <= hi
        self.width += hi - lo

    def as_dict(self) -> dict[str, Any]:
        return {"coverage": self.hits / self.n if self.n else None, "mean_width": self.width / self.n if self.n else None,
                "undefined": self.undefined}


def run(draws: int, n: int, alpha: float, seed: int) -> dict[str, Any]:
    from murgat.human_eval.ppi import prediction_powered_mean
    from murgat.human_eval.stratified import StratumData, allocate, stratified_mean

    rng = np.random.default_rng(seed)
    human, judge = population(rng)
    truth = float(np.mean(np.concatenate(list(human.values()))))
    counts = allocate(n, SIZES, {h: float(np.std(human[h] - judge[h], ddof=1)) for h in SIZES})
    all_h, all_j = np.concatenate(list(human.values())), np.concatenate(list(judge.values()))
    kinds = ("stratified ppi++", "stratified ppi", "stratified human-only", "unstratified ppi++ (uniform sample)",
             "naive: unstratified ppi++ on the Neyman sample")
    t = {k: Tally() for k in kinds}
    for _ in range(draws):
        strata, lab_h, lab_j, unl_j = {}, [], [], []
        for h, k in counts.items():
            pick = rng.permutation(SIZES[h])
            strata[h] = StratumData(human[h][pick[:k]], judge[h][pick[:k]], judge[h][pick[k:]])
            lab_h.append(human[h][pick[:k]]), lab_j.append(judge[h][pick[:k]]), unl_j.append(judge[h][pick[k:]])
        for name, lam in (("stratified ppi++", None), ("stratified ppi", 1.0), ("stratified human-only", 0.0)):
            o = stratified_mean(strata, alpha=alpha, lam=lam).overall
            t[name].add(o.ci_low, o.ci_high, truth)
        pick = rng.permutation(len(all_h))
        u = prediction_powered_mean(all_h[pick[:n]], all_j[pick[:n]], all_j[pick[n:]], alpha=alpha, quantile="t")
        t[kinds[3]].add(u.ci_low, u.ci_high, truth)
        v = prediction_powered_mean(np.concatenate(lab_h), np.concatenate(lab_j), np.concatenate(unl_j), alpha=alpha,
                                    quantile="t")
        t[kinds[4]].add(v.ci_low, v.ci_high, truth)
    return {"draws": draws, "labelled": n, "alpha": alpha, "allocation": counts, "truth": truth,
            "mc_standard_error": mc_standard_error(alpha, draws),
            "intervals": {k: v.as_dict() for k, v in t.items()}}


def main() -> None:
    args = coverage_args(__doc__, labelled=60)
    doc = run(args.draws, args.n, args.alpha, seed=44)
    write_result("ppi_strata", doc)


if __name__ == "__main__":
    main()
