"""``murgat program``'s item task for the engine (:mod:`murgat.engine.loop`): one item under one
variant → one ``results.jsonl`` line ``{id, record, trace}`` of the variant's
:class:`~murgat.engine.folder.PairFolder`; and the same task rebuilt in a Ray worker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from murgat.engine.folder import pair_record
from murgat.engine.preflight import MediaPlace
from murgat.pipeline.config import ScoreConfig
from murgat.pipeline.stages import CallPool
from murgat.schema import Item
from programs.ops import OpSettings
from programs.runner import Judges, run_item
from programs.safety import Limits


class ProgramTask:
    """One item under one variant."""

    def __init__(self, variant: str, judges: Judges | None, cfg: ScoreConfig, settings: OpSettings, limits: Limits,
                 replan: int, place: MediaPlace) -> None:
        self.variant, self.judges, self.cfg, self.settings = variant, judges, cfg, settings
        self.limits, self.replan, self.place = limits, replan, place
        self.pool = CallPool()

    async def run(self, item: Item) -> dict[str, Any]:
        assert self.judges is not None
        record, trace = await run_item(item, self.variant, self.judges, self.cfg, self.settings, self.limits, self.replan,
                                       media_root=self.place.media_root, input_path=self.place.input_path,
                                       allow_outside_root=self.place.allow_outside_root, pool=self.pool)
        return pair_record(item.id, record, trace.model_dump(mode="json"))

    def error_record(self, item: Item, error: str) -> dict[str, Any]:
        record = {"id": item.id, "media": item.media, "question": item.question, "options": item.options,
                  "gold": item.gold, "response": "", "program_variant": self.variant, "generation_error": error}
        return pair_record(item.id, record, {"id": item.id, "variant": self.variant, "status": "internal_error",
                                             "error": error})

    def digest(self, item: Item) -> str:
        return self.place.digest(item)


def ray_task(settings: dict[str, Any], judge: Callable[..., Any]) -> ProgramTask:
    """The task rebuilt inside a Ray worker (see :mod:`murgat.scaleout.tasks`)."""
    cfg = ScoreConfig.model_validate(settings["config"])
    specs = settings["judges"]

    def role(name: str) -> Any:
        s = specs.get(name)
        return None if s is None else judge(s["spec"], s["options"], cfg.generate)

    judges = Judges(planner=role("planner"), executor=role("executor"), checker=role("checker"))
    return ProgramTask(settings["variant"], judges, cfg, OpSettings(**settings["settings"]),
                       Limits(**settings["limits"]), settings["replan"], MediaPlace(**settings["place"]))
