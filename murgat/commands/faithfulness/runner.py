"""``murgat faithfulness``'s item task: label every step of one chain (:func:`label_item`).

Same run-folder contract as ``score``: ``config.json`` (settings; a rerun with other ones is
refused), ``results.jsonl`` (one :class:`FaithResult` per item, appended and fsync'd),
``cache.sqlite``, ``summary.json``; resumable, one process per folder, bad items become
error records, judge failures leave steps undetermined (retried with ``--retry-errors``).
"""

from __future__ import annotations

import logging
from typing import Any

from murgat.core.answers import grade
from murgat.core.breakdown import item_fields
from murgat.core.schema import Item
from murgat.core.steps import FaithResult, tally
from murgat.core.text import preprocess
from murgat.engine.outcome import ItemFailure
from murgat.engine.preflight import MediaPlace, item_context
from murgat.judging.config import JudgingConfig
from murgat.judging.pool import CallPool
from murgat.judging.steps import Labeller
from murgat.media.errors import MediaError

log = logging.getLogger("murgat.faithfulness")


def failed(res: FaithResult, failure: ItemFailure) -> FaithResult:
    res.error, res.error_kind = failure.line, failure.kind
    return tally(res)


def new_result(item: Item, **fields: Any) -> FaithResult:
    """The item's record before labelling, with the item's own fields (``meta.item``, what ``--by``
    groups on, as in a score record; :func:`murgat.core.breakdown.item_fields`) when it has any."""
    res = FaithResult(id=item.id, video=item.media, **fields)
    if kept := item_fields(item):
        res.meta["item"] = kept
    return res


async def label_item(item: Item, labeller: Labeller, cfg: JudgingConfig, segmentation: str,
                     place: MediaPlace) -> FaithResult:
    """Every step of the item's chain labelled (type, modality, faithfulness)."""
    res = new_result(item, gold=item.gold, segmentation=segmentation)
    extra = item.model_extra or {}
    if extra.get("generation_error"):
        return failed(res, ItemFailure("generation_failed", str(extra["generation_error"])))
    ctx = await item_context(item, cfg, place)
    if isinstance(ctx, ItemFailure):
        return failed(res, ctx)
    pre = preprocess(item.response, len(item.options or []) or 10, item.options)
    res.predicted_option = pre.option
    g = grade(pre.reading, item.gold, item.options)  # an unread answer is unknown (None, with the reason), never wrong
    res.correct, res.answer_problem = g.correct, g.answer_problem
    steps, note = await labeller.segment(pre.reasoning, ctx, segmentation)
    if note:
        res.meta["segmentation_note"] = note
    try:
        await labeller.label(steps, ctx, item.question or "")
    except MediaError as exc:
        return failed(res, ItemFailure(exc.kind, exc.reason))
    res.steps = steps
    res.judge_calls = len(ctx.calls)
    res.cache_hits = sum(1 for c in ctx.calls if c.cached)
    return tally(res)


class FaithTask:
    """``faithfulness``' item task for the engine (:mod:`murgat.engine.loop`)."""

    def __init__(self, labeller: Labeller, cfg: JudgingConfig, segmentation: str, place: MediaPlace) -> None:
        self.labeller, self.cfg, self.segmentation, self.place = labeller, cfg, segmentation, place
        self.pool: CallPool | None = labeller.pool

    async def run(self, item: Item) -> FaithResult:
        return await label_item(item, self.labeller, self.cfg, self.segmentation, self.place)

    def error_record(self, item: Item, failure: ItemFailure) -> FaithResult:
        return failed(new_result(item), failure)
