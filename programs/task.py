"""``murgat program``'s item task for the engine (:mod:`murgat.engine.loop`): one item under one
variant → one ``results.jsonl`` line ``{id, record, trace}`` of the variant's
:class:`~murgat.engine.folder.PairFolder` (here or in a Ray worker: the task is built from the
stream's payload by :meth:`murgat.programs.command.ProgramCommand.task`)."""

from __future__ import annotations

from typing import Any

from murgat.core.schema import Item
from murgat.engine.folder import pair_record
from murgat.engine.outcome import ItemFailure
from murgat.engine.preflight import MediaPlace
from murgat.judging.config import JudgingConfig
from murgat.judging.pool import CallPool
from murgat.programs.ops import OpSettings
from murgat.programs.runner import ProgramRoles, run_item
from murgat.programs.safety import Limits


class ProgramTask:
    """One item under one variant."""

    def __init__(self, variant: str, roles: ProgramRoles, cfg: JudgingConfig, settings: OpSettings, limits: Limits,
                 replan: int, place: MediaPlace) -> None:
        self.variant, self.roles, self.cfg, self.settings = variant, roles, cfg, settings
        self.limits, self.replan, self.place = limits, replan, place
        self.pool: CallPool | None = CallPool()

    async def run(self, item: Item) -> dict[str, Any]:
        record, trace = await run_item(item, self.variant, self.roles, self.cfg, self.settings, self.limits, self.replan,
                                       media_root=self.place.media_root, input_path=self.place.input_path,
                                       allow_outside_root=self.place.allow_outside_root, pool=self.pool)
        return pair_record(item.id, record, trace.model_dump(mode="json"))

    def error_record(self, item: Item, failure: ItemFailure) -> dict[str, Any]:
        record = {"id": item.id, "media": item.media, "question": item.question, "options": item.options,
                  "gold": item.gold, "response": "", "program_variant": self.variant,
                  "generation_error": failure.line, "error_kind": failure.kind}
        return pair_record(item.id, record, {"id": item.id, "variant": self.variant, "status": "internal_error",
                                             "error": failure.line})
