"""Do corrected intervals cover what they claim? On real labels and on a clustered population.

Real labels: FaithScore's 1,378 stage-1 sub-sentences (``tests/data/real/annotations/faithscore``, MIT), the human
label "descriptive", the judge murgat's rule-based verifiability check. Over 1,000 random draws
of 100 labelled items (the other 1,278 judged only), the 90% PPI++ interval must cover the share
of descriptive sub-sentences among all 1,378 at least 88% of the time and be narrower on average
than the human-only interval of the same 100 labels. The rule verifier is being refined in
parallel, so the test asserts these properties, never its exact numbers.

Clustered population (``murgat.human_eval.simulation``): labelled videos against other videos. The
clustered interval must cover at ≥ 88% (nominal 90 − 2); the one that treats items as
independent must not. Seeds are fixed; each test takes about a second.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from murgat.core.rules import rule_verifiable
from murgat.human_eval.labels import load_faithscore
from murgat.human_eval.ppi import prediction_powered_mean
from murgat.human_eval.simulation import CLUSTERED_TRUTH, clustered_population

FAITHSCORE = Path(__file__).resolve().parents[1] / "data" / "real" / "annotations" / "faithscore" / "annotation.jsonl"


def faithscore_items() -> tuple[np.ndarray, np.ndarray]:
    """(human: descriptive, judge: the rule verifier says verifiable) per stage-1 sub-sentence."""
    sents = [s for lab in load_faithscore(FAITHSCORE) for s in lab.sentences]
    human = np.array([1.0 if s.verifiable else 0.0 for s in sents])
    judge = np.array([1.0 if rule_verifiable(s.text or "")[0] else 0.0 for s in sents])
    return human, judge


def test_corrected_interval_covers_the_all_human_share_on_real_labels() -> None:
    human, judge = faithscore_items()
    assert len(human) == 1378
    truth = human.mean()
    rng = np.random.default_rng(20241)
    covered = covered_h = 0
    width = width_h = 0.0
    draws = 1000
    for _ in range(draws):
        order = rng.permutation(len(human))
        lab, unl = order[:100], order[100:]
        ppi = prediction_powered_mean(human[lab], judge[lab], judge[unl], alpha=0.1)
        only = prediction_powered_mean(human[lab], judge[lab], judge[unl], alpha=0.1, lam=0.0)
        covered += ppi.ci_low <= truth <= ppi.ci_high
        covered_h += only.ci_low <= truth <= only.ci_high
        width += ppi.ci_high - ppi.ci_low
        width_h += only.ci_high - only.ci_low
    assert covered / draws >= 0.88, covered / draws
    assert width / draws < width_h / draws, (width / draws, width_h / draws)
    assert covered_h / draws >= 0.85  # the human-only interval is valid too, only wider


def test_clustered_interval_covers_where_the_unclustered_one_does_not() -> None:
    rng = np.random.default_rng(7)
    draws, labelled_videos, other_videos, per_video = 1000, 60, 300, 6
    covered = covered_iid = 0
    for _ in range(draws):
        y, yhat, video = clustered_population(rng, labelled_videos + other_videos, per_video)
        lab = video < labelled_videos
        clusters = np.concatenate([video[lab], video[~lab]])
        clustered = prediction_powered_mean(y[lab], yhat[lab], yhat[~lab], alpha=0.1, clusters=clusters)
        iid = prediction_powered_mean(y[lab], yhat[lab], yhat[~lab], alpha=0.1)
        covered += clustered.ci_low <= CLUSTERED_TRUTH <= clustered.ci_high
        covered_iid += iid.ci_low <= CLUSTERED_TRUTH <= iid.ci_high
    assert covered / draws >= 0.88, covered / draws
    assert covered_iid / draws < 0.88, covered_iid / draws
