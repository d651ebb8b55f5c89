"""Deprecated: :mod:`murgat.score.runner` (and, for :func:`run_items`, the engine's item loop)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from murgat.engine.folder import RunFolder
from murgat.engine.preflight import MediaPlace
from murgat.judging.pool import CallPool
from murgat.schema import Item, ResponseResult
from murgat.score import runner as _runner
from murgat.score.config import ScoreConfig
from murgat.score.runner import decompose_context, score_item, score_items, summarize_run
from murgat.score.stages import StageJudges

#: the name of earlier versions
process_item = score_item


async def run_items(items: Sequence[Item], cfg: ScoreConfig, judges: StageJudges, rundir: RunFolder, *,
                    media_root: str | Path | None = None, input_path: str | Path | None = None,
                    item_concurrency: int = 8, retry_errors: bool = False, allow_outside_root: bool = False,
                    on_item: Callable[[ResponseResult], None] | None = None, keep_results: bool = True,
                    todo: Sequence[Item] | None = None) -> tuple[list[ResponseResult], CallPool]:
    """The signature of earlier versions: :func:`murgat.score.runner.score_items`."""
    del keep_results, todo
    return await score_items(items, cfg, judges, rundir, place=MediaPlace(media_root, input_path, allow_outside_root),
                             concurrency=item_concurrency, retry_errors=retry_errors, on_item=on_item)


def __getattr__(name: str) -> Any:
    """Every other name of the runner module of earlier versions: :mod:`murgat.score.runner`."""
    return getattr(_runner, name)


__all__ = ["decompose_context", "process_item", "run_items", "summarize_run"]
