"""Seeded synthetic populations for checking corrected estimates (tests, benchmarks, README).

Real labels show whether an interval covers on one data set; a simulation whose truth is known
shows it over many. Two populations:

* :func:`clustered_population` — binary labels on items grouped in videos: each video has its
  own share of true items (Beta(2, 2)), and the judge is right on an item with a probability
  that leans by video (0.85 + N(0, 0.15), clipped to [0.5, 1]) — items of one video are alike
  for the human *and* the judge. The population share of true items is 0.5 exactly.
* :func:`lenient_judge_scores` — MURGAT-S-like figures in [0, 1]: the human's per response
  from Beta(2, 3) (mean 0.4), the judge's = human + 0.08 + N(0, 0.12), clipped: a judge that is
  too generous by about 0.08 and noisy, as an LLM judge often is.
"""

from __future__ import annotations

import numpy as np

CLUSTERED_TRUTH = 0.5
LENIENT_TRUTH = 0.4


def clustered_population(rng: np.random.Generator, videos: int, per_video: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, yhat, video)`` for ``videos × per_video`` items, video-major order."""
    share = rng.beta(2, 2, videos)
    lean = rng.normal(0, 0.15, videos)
    y = (rng.random((videos, per_video)) < share[:, None]).astype(float)
    right = rng.random((videos, per_video)) < np.clip(0.85 + lean, 0.5, 1.0)[:, None]
    yhat = np.where(right, y, 1 - y)
    return y.ravel(), yhat.ravel(), np.repeat(np.arange(videos), per_video)


def lenient_judge_scores(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(human, judge)`` figures of ``n`` responses (module docstring)."""
    human = rng.beta(2, 3, n)
    judge = np.clip(human + 0.08 + rng.normal(0, 0.12, n), 0.0, 1.0)
    return human, judge
