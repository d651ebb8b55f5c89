"""``murgat reflect``'s item task for the engine (:mod:`murgat.engine.loop`): one question →
a chain (generated, or taken from ``--from``) → Algorithm 2 → one ``results.jsonl`` line
``{id, record, trace}`` of a :class:`~murgat.engine.folder.PairFolder`. The same task is rebuilt
in a Ray worker by :func:`ray_task`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from murgat.answers import is_correct
from murgat.engine.folder import pair_record
from murgat.engine.preflight import MediaPlace
from murgat.faithfulness.label import STEP_PROMPTS, Labeller
from murgat.faithfulness.reflect import Reflector, reflect_item
from murgat.faithfulness.runner import item_context
from murgat.generation.generate import generate_one
from murgat.pipeline.config import ScoreConfig
from murgat.pipeline.stages import CallPool
from murgat.schema import Item
from murgat.text import preprocess


@dataclass
class Roles:
    """The three parts of a reflect run: the model (writes, regenerates, continues), the detector
    (drives the regenerations) and the judge (measures UPR before and after)."""

    model: Any
    reflector: Reflector
    judge: Labeller
    pool: CallPool


def build_roles(settings: dict[str, Any], judge: Callable[..., Any]) -> Roles:
    """The roles from the run's settings; ``judge(spec, options, config)`` makes a judge (local or
    wired to a Ray cluster)."""
    cfg = ScoreConfig.model_validate(settings["config"])
    model = judge(settings["model"], settings["model_options"], cfg.generate)
    if settings["detector"] == "self":
        detector, variant = model, "vanilla"
    else:
        detector, variant = judge(settings["detector"], settings["detector_options"], cfg.generate), settings["variant"]
    measurer = judge(settings["judge"], settings["judge_options"], cfg.generate) if settings["judge"] else detector
    pool = CallPool()
    labeller = Labeller(judge=detector, pool=pool, variant=variant, granularity="step", max_frames=settings["max_frames"],
                        step_prompt=STEP_PROMPTS[settings["detector_prompt"]])
    judge_labeller = Labeller(judge=measurer, pool=pool, variant=settings["variant"], granularity=settings["granularity"],
                              max_frames=settings["max_frames"])
    reflector = Reflector(model=model, detector=labeller, pool=pool, k=settings["k"], cite=settings["mode"] == "cite",
                          max_regenerations=settings["max_regenerations"], max_steps=settings["max_steps"])
    return Roles(model=model, reflector=reflector, judge=judge_labeller, pool=pool)


class ReflectTask:
    """One question reflected."""

    def __init__(self, roles: Roles | None, cfg: ScoreConfig, place: MediaPlace, *, mode: str, fps: float,
                 start: dict[str, str] | None) -> None:
        self.roles, self.cfg, self.place, self.mode, self.fps, self.start = roles, cfg, place, mode, fps, start
        self.pool = roles.pool if roles is not None else None

    def _record(self, item: Item) -> dict[str, Any]:
        return {"id": item.id, "media": item.media, "question": item.question, "options": item.options,
                "gold": item.gold, "question_type": item.question_type}

    def error_record(self, item: Item, error: str) -> dict[str, Any]:
        return pair_record(item.id, {**self._record(item), "response": "", "generation_error": error},
                           {"id": item.id, "error": error})

    async def run(self, item: Item) -> dict[str, Any]:
        assert self.roles is not None
        ctx = await item_context(item, self.cfg, self.place.media_root, self.place.input_path,
                                 self.place.allow_outside_root)
        if isinstance(ctx, str):
            return self.error_record(item, ctx)
        if self.start is not None:
            original = self.start.get(item.id)
            if original is None:
                return self.error_record(item, "no starting chain for this id in --from")
        else:
            g = await generate_one(self.roles.model, item, ctx.media, self.mode, self.cfg.generate, fps=self.fps)
            if g.get("generation_error") or not g.get("response"):
                return self.error_record(item, g.get("generation_error") or "the model gave an empty chain")
            original = g["response"]
        row, trace = await reflect_item(item.id, original, ctx, self.roles.reflector, self.roles.judge,
                                        item.question or "", list(item.options or []))
        n_opt = len(item.options or []) or 10
        before, after = preprocess(original, n_opt).option, preprocess(trace.final, n_opt).option
        rec = {**self._record(item), "response": trace.final, "original_response": original, "predicted_option": after,
               "reflect": {"regenerations": trace.regenerations, "unresolved": trace.unresolved,
                           "resolved_after": trace.resolved_after, "undetermined": trace.undetermined,
                           "stopped": trace.stopped}}
        row.update(correct_before=is_correct(before, item.gold, item.options),
                   correct_after=is_correct(after, item.gold, item.options))
        if row["correct_after"] is not None:
            rec["correct"] = row["correct_after"]
        return pair_record(item.id, rec, row)

    def digest(self, item: Item) -> str:
        return self.place.digest(item, (self.start or {}).get(item.id))


def ray_task(settings: dict[str, Any], judge: Callable[..., Any]) -> ReflectTask:
    """The task rebuilt inside a Ray worker (see :mod:`murgat.scaleout.tasks`)."""
    cfg = ScoreConfig.model_validate(settings["config"])
    return ReflectTask(build_roles(settings, judge), cfg, MediaPlace(**settings["place"]), mode=settings["mode"],
                       fps=settings["fps"], start=settings["start"])
