"""murgat's one bootstrap: seeded resamples with replacement and their percentile interval.

Every interval of murgat that resamples comes from here: the run's means and paired differences
(``murgat.core.metric``), UPR's ratios (``murgat.core.upr``), the agreement statistics and ICC
(``murgat.human_eval.stats``) and the corrected estimates (``murgat.human_eval.ppi``). One routine
means one place where the draws are made, so a seed names the same resamples everywhere.

The draws: ``numpy.random.default_rng(seed)``, and for each resample, for each sample in
``sizes``, ``size`` positions drawn from ``range(size)`` with replacement (a sample of clusters
is drawn as its clusters: the caller expands them). Drawing a block of resamples at once takes the
same stream of numbers as drawing them one by one, so the vectorised form (one sample, statistics
computed on a whole block of rows) and the loop give the same resamples for the same seed; the
block is capped (about a million positions) so 10,000 items do not cost a 320 MB index array.

Lives in murgat.human_eval (a leaf) so that the statistics there and the core can both use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: the most positions drawn in one block of the vectorised form
BLOCK_CELLS = 1 << 20

#: one resample's statistic from its drawn positions, one array per sample; None when undefined there
Statistic = Callable[..., float | None]
#: the vectorised form: a block of resamples (rows × positions) → the statistics of the rows that count
BlockStatistic = Callable[[np.ndarray], np.ndarray]


def resample_statistics(statistic: Statistic, sizes: Sequence[int], n_resamples: int, seed: int, *,
                        progress: Callable[[int], None] | None = None, progress_every: int = 1) -> np.ndarray:
    """``statistic`` over ``n_resamples`` resamples of the samples of ``sizes`` (a sample of size 0
    draws nothing: an empty array); the values that were not None, in resample order.

    ``progress`` is called with the number of resamples done after every ``progress_every``-th and
    after the last (a progress bar's update can cost more than a resample)."""
    rng = np.random.default_rng(seed)
    kept: list[float] = []
    for k in range(n_resamples):
        if progress is not None and ((k + 1) % progress_every == 0 or k + 1 == n_resamples):
            progress(k + 1)
        draws = [rng.integers(0, s, s) if s else np.zeros(0, int) for s in sizes]
        value = statistic(*draws)
        if value is not None:
            kept.append(value)
    return np.asarray(kept, dtype=float)


def resample_blocks(statistic: BlockStatistic, size: int, n_resamples: int, seed: int) -> np.ndarray:
    """The vectorised form for one sample: ``statistic`` gets blocks of resampled positions (one
    resample a row) and returns the statistics of the rows that count; all of them, in order."""
    rng = np.random.default_rng(seed)
    step = max(1, min(n_resamples, BLOCK_CELLS // max(size, 1)))
    parts = []
    for lo_row in range(0, n_resamples, step):
        rows = min(step, n_resamples - lo_row)
        parts.append(np.asarray(statistic(rng.integers(0, size, size=(rows, size))), dtype=float))
    return np.concatenate(parts) if parts else np.zeros(0)


def percentile_interval(values: np.ndarray | Sequence[float], alpha: float = 0.05) -> tuple[float, float]:
    """The ``1 - alpha`` percentile interval of resampled statistics (there must be at least one)."""
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)
