"""``murgat faithfulness``: label every step of every chain, persist each item as it finishes.

Same run-folder contract as ``score``: ``config.json`` (settings; a rerun with other ones is
refused), ``results.jsonl`` (one :class:`FaithResult` per item, appended and fsync'd),
``cache.sqlite``, ``summary.json``; resumable, one process per folder, bad items become
error records, judge failures leave steps undetermined (retried with ``--retry-errors``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from media.errors import MediaError
from murgat.answers import is_correct
from murgat.engine.folder import RunDir
from murgat.engine.loop import plan, run_items
from murgat.engine.preflight import ItemMediaError, MediaPlace, open_media
from murgat.faithfulness.label import Labeller
from murgat.faithfulness.records import FaithResult, tally
from murgat.pipeline.config import ScoreConfig
from murgat.pipeline.stages import ItemContext
from murgat.schema import Item
from murgat.text import preprocess

log = logging.getLogger("murgat.faithfulness")


async def item_context(item: Item, cfg: ScoreConfig, media_root: str | Path | None, input_path: str | Path | None,
                       allow_outside_root: bool) -> ItemContext | str:
    """The item's media context, or the error text that makes it an error record."""
    try:
        path, info = await open_media(item, MediaPlace(media_root, input_path, allow_outside_root))
    except ItemMediaError as exc:
        return str(exc)
    return ItemContext(media=Path(path), durations=info.durations(), config=cfg, question=item.question or "")


async def process_item(item: Item, labeller: Labeller, cfg: ScoreConfig, segmentation: str, *,
                       media_root: str | Path | None, input_path: str | Path | None,
                       allow_outside_root: bool = False) -> FaithResult:
    res = FaithResult(id=item.id, video=item.media, gold=item.gold, segmentation=segmentation)
    extra = item.model_extra or {}
    if extra.get("generation_error"):
        res.error = f"generation_failed: {extra['generation_error']}"
        return tally(res)
    ctx = await item_context(item, cfg, media_root, input_path, allow_outside_root)
    if isinstance(ctx, str):
        res.error = ctx
        return tally(res)
    pre = preprocess(item.response, len(item.options or []) or 10)
    res.predicted_option = pre.option
    res.correct = is_correct(pre.option, item.gold, item.options)
    steps, note = await labeller.segment(pre.reasoning, ctx, segmentation)
    if note:
        res.meta["segmentation_note"] = note
    try:
        await labeller.label(steps, ctx, item.question or "")
    except MediaError as exc:
        res.error = f"{exc.kind}: {exc.reason}"
        return tally(res)
    res.steps = steps
    res.judge_calls = len(ctx.calls)
    res.cache_hits = sum(1 for c in ctx.calls if c.cached)
    return tally(res)


class FaithTask:
    """``faithfulness``' item task for the engine (:mod:`murgat.engine.loop`)."""

    def __init__(self, labeller: Labeller | None, cfg: ScoreConfig, segmentation: str, place: MediaPlace) -> None:
        self.labeller, self.cfg, self.segmentation, self.place = labeller, cfg, segmentation, place

    async def run(self, item: Item) -> FaithResult:
        assert self.labeller is not None
        return await process_item(item, self.labeller, self.cfg, self.segmentation, media_root=self.place.media_root,
                                  input_path=self.place.input_path, allow_outside_root=self.place.allow_outside_root)

    def error_record(self, item: Item, error: str) -> FaithResult:
        return tally(FaithResult(id=item.id, video=item.media, error=error))

    def digest(self, item: Item) -> str:
        return self.place.digest(item)


def ray_task(settings: dict[str, Any], judge: Callable[..., Any]) -> FaithTask:
    """``faithfulness``' task rebuilt inside a Ray worker (see :mod:`murgat.scaleout.tasks`)."""
    from murgat.pipeline.stages import CallPool

    cfg = ScoreConfig.model_validate(settings["config"])
    labeller = Labeller(judge=judge(settings["judge"], settings["options"], cfg.generate), pool=CallPool(),
                        variant=settings["variant"], granularity=settings["granularity"], max_frames=settings["max_frames"])
    task = FaithTask(labeller, cfg, settings["segmentation"], MediaPlace(**settings["place"]))
    task.pool = labeller.pool  # type: ignore[attr-defined]  (the worker reports its request counts)
    return task


async def run_faithfulness(items: Sequence[Item], labeller: Labeller, cfg: ScoreConfig, segmentation: str,
                           rundir: RunDir, *, media_root: str | Path | None, input_path: str | Path | None,
                           item_concurrency: int = 8, retry_errors: bool = False, allow_outside_root: bool = False,
                           on_item: Callable[[FaithResult], None] | None = None) -> list[FaithResult]:
    """Label the items not yet in ``rundir`` (or edited since) through the engine's one item loop."""
    task = FaithTask(labeller, cfg, segmentation, MediaPlace(media_root, input_path, allow_outside_root))
    todo = plan(task, items, rundir, retry_errors).todo
    return await run_items(task, todo, rundir, concurrency=item_concurrency, on_item=on_item, keep=True)


def failure_line(results: Sequence[Any], max_undetermined: float | None) -> str | None:
    """Same rule as ``score``: any error record, or too many undetermined items, fails the run."""
    from murgat.engine.outcome import failure_line as run_failure_line

    return run_failure_line(list(results), max_undetermined)
