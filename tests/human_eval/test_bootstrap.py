"""murgat's one bootstrap (murgat.human_eval.bootstrap): its two forms draw the same resamples for a
seed, so every interval built on either is the same for the same seed."""

from __future__ import annotations

import numpy as np
import pytest

from murgat.human_eval import bootstrap
from murgat.human_eval.bootstrap import percentile_interval, resample_blocks, resample_statistics


@pytest.mark.parametrize("size", [1, 7, 101])
def test_blocks_and_one_by_one_draw_the_same_resamples(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.arange(size, dtype=float) ** 1.5
    one_by_one = resample_statistics(lambda idx: float(x[idx].mean()), [size], 300, seed=4)
    monkeypatch.setattr(bootstrap, "BLOCK_CELLS", size * 7)  # blocks of 7 rows: many block boundaries
    blocked = resample_blocks(lambda draws: x[draws].mean(axis=1), size, 300, seed=4)
    assert blocked.tolist() == one_by_one.tolist()


def test_undefined_resamples_are_left_out_and_samples_drawn_in_order() -> None:
    seen: list[tuple[int, int]] = []

    def statistic(a: np.ndarray, b: np.ndarray) -> float | None:
        seen.append((len(a), len(b)))
        return None if len(seen) % 2 else float(len(seen))

    values = resample_statistics(statistic, [3, 0], 10, seed=0)
    assert seen == [(3, 0)] * 10 and values.tolist() == [2.0, 4.0, 6.0, 8.0, 10.0]


def test_progress_is_reported_every_nth_resample_and_at_the_end() -> None:
    done: list[int] = []
    resample_statistics(lambda idx: 0.0, [2], 250, seed=0, progress=done.append, progress_every=100)
    assert done == [100, 200, 250]


def test_percentile_interval_is_numpy_quantiles() -> None:
    values = np.linspace(0.0, 1.0, 101)
    assert percentile_interval(values, 0.1) == (pytest.approx(0.05), pytest.approx(0.95))
