"""``murgat faithfulness``: label every step of every chain, persist each item as it finishes.

Same run-folder contract as ``score``: ``config.json`` (settings; a rerun with other ones is
refused), ``results.jsonl`` (one :class:`FaithResult` per item, appended and fsync'd),
``cache.sqlite``, ``summary.json``; resumable, one process per folder, bad items become
error records, judge failures leave steps undetermined (retried with ``--retry-errors``).
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from media.errors import MediaError
from media.probe import probe
from murgat.faithfulness.label import Labeller
from murgat.faithfulness.records import FaithResult, tally
from murgat.inputs import MediaOutsideRoot, resolve_media
from murgat.judges.replay import ReplayMiss
from murgat.pipeline.config import ScoreConfig
from murgat.pipeline.rundir import RunDir, needs_retry
from murgat.pipeline.runner import ResultWriter, gold_letter
from murgat.pipeline.stages import ItemContext
from murgat.schema import Item
from murgat.text import preprocess

log = logging.getLogger("murgat.faithfulness")


async def item_context(item: Item, cfg: ScoreConfig, media_root: str | Path | None, input_path: str | Path | None,
                       allow_outside_root: bool) -> ItemContext | str:
    """The item's media context, or the error text that makes it an error record."""
    if item.media is None:
        return "missing_media: the item names no media file"
    try:
        path = resolve_media(item, media_root, input_path, allow_outside_root=allow_outside_root)
    except MediaOutsideRoot as exc:
        return f"media_outside_root: {exc}"
    if path is None:
        return f"missing_media: '{item.media}' not found" + (f" under {media_root}" if media_root else "")
    try:
        info = await asyncio.to_thread(probe, path)
    except MediaError as exc:
        return f"{exc.kind}: {exc.reason}"
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
    gl = gold_letter(item)
    if gl is not None:
        res.correct = pre.option == gl
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


async def run_faithfulness(items: Sequence[Item], labeller: Labeller, cfg: ScoreConfig, segmentation: str,
                           rundir: RunDir, *, media_root: str | Path | None, input_path: str | Path | None,
                           item_concurrency: int = 8, retry_errors: bool = False, allow_outside_root: bool = False,
                           on_item: Callable[[FaithResult], None] | None = None) -> list[FaithResult]:
    done = {r.id for r in rundir.latest_results() if not (retry_errors and needs_retry(r))}
    sem = asyncio.Semaphore(max(1, item_concurrency))
    fresh: list[FaithResult] = []
    writer = ResultWriter(rundir)

    async def one(item: Item) -> None:
        async with sem:
            try:
                res = await process_item(item, labeller, cfg, segmentation, media_root=media_root,
                                         input_path=input_path, allow_outside_root=allow_outside_root)
            except ReplayMiss:
                raise
            except Exception as exc:
                log.error("item %s failed: %s", item.id, traceback.format_exc())
                res = tally(FaithResult(id=item.id, video=item.media, error=f"internal_error: {type(exc).__name__}: {exc}"))
        await writer.write(res)
        fresh.append(res)
        if on_item:
            on_item(res)

    try:
        async with asyncio.TaskGroup() as tg:
            for it in items:
                if it.id not in done:
                    tg.create_task(one(it))
    finally:
        await writer.close()
    return fresh


def failure_line(results: Sequence[Any], max_undetermined: float | None) -> str | None:
    """Same rule as ``score``: any error record, or too many undetermined items, fails the run."""
    from murgat.pipeline.cli import failure_line as score_failure_line

    return score_failure_line(list(results), max_undetermined)
