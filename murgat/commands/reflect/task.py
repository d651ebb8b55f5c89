"""``murgat reflect``'s item task for the engine (:mod:`murgat.engine.loop`): one question →
a chain (generated, or taken from ``--from``) → Algorithm 2 → one ``results.jsonl`` line
``{id, record, trace}`` of a :class:`~murgat.engine.folder.PairFolder`. The same task is built
in a Ray worker (:meth:`~murgat.commands.reflect.command.ReflectCommand.task`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from murgat.commands.reflect.algorithm import Reflector, reflect_item
from murgat.core.answers import grade
from murgat.core.breakdown import item_fields
from murgat.core.schema import Item
from murgat.core.text import preprocess
from murgat.engine.folder import pair_record
from murgat.engine.outcome import ItemFailure
from murgat.engine.preflight import MediaPlace, item_context
from murgat.engine.roles import JudgeFactory
from murgat.judging.answering import Mode, Model, generate_one
from murgat.judging.config import JudgingConfig
from murgat.judging.pool import CallPool
from murgat.judging.steps import STEP_PROMPTS, Labeller


@dataclass
class Roles:
    """The three parts of a reflect run: the model (writes, regenerates, continues), the detector
    (drives the regenerations) and the judge (measures UPR before and after)."""

    model: Model
    reflector: Reflector
    judge: Labeller
    pool: CallPool


def build_roles(settings: dict[str, Any], judge: JudgeFactory) -> Roles:
    """The roles from the run's settings; ``judge(spec, options, config)`` makes a provider (local or
    wired to a Ray cluster)."""
    cfg = JudgingConfig.model_validate(settings["config"])
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

    def __init__(self, roles: Roles, cfg: JudgingConfig, place: MediaPlace, *, mode: Mode, fps: float,
                 start: dict[str, str] | None, max_chars: int | None = None) -> None:
        self.roles, self.cfg, self.place, self.mode, self.fps, self.start = roles, cfg, place, mode, fps, start
        self.max_chars = max_chars  # --max-response-chars: a longer written chain is an error record
        self.pool: CallPool | None = roles.pool

    def _record(self, item: Item) -> dict[str, Any]:
        """The item in ``responses.jsonl`` (the input of a later ``score``), its dataset fields kept
        (``meta``) as ``generate`` keeps them, so that run can be grouped on them."""
        return {"id": item.id, "media": item.media, "question": item.question, "options": item.options,
                "gold": item.gold, "question_type": item.question_type, **({"meta": item.meta} if item.meta else {})}

    @staticmethod
    def _row(item: Item, row: dict[str, Any]) -> dict[str, Any]:
        """A ``traces.jsonl`` row with the item's own fields (``meta.item``, what ``--by`` groups on)."""
        if kept := item_fields(item):
            row["meta"] = {"item": kept}
        return row

    def error_record(self, item: Item, failure: ItemFailure) -> dict[str, Any]:
        return pair_record(item.id, {**self._record(item), "response": "", "generation_error": failure.line,
                                     "error_kind": failure.kind}, self._row(item, {"id": item.id, "error": failure.line}))

    async def _original(self, item: Item, media: Any) -> str | ItemFailure:
        """The chain to reflect: from ``--from``, or written by the model."""
        if self.start is not None:
            original = self.start.get(item.id)
            return original if original is not None else ItemFailure("missing_chain",
                                                                     "no starting chain for this id in --from")
        g = await generate_one(self.roles.model, item, media, self.mode, self.cfg.generate, fps=self.fps,
                               max_chars=self.max_chars)
        if g.get("generation_error") or not g.get("response"):
            if g.get("error_kind") == "response_too_long":
                return ItemFailure("response_too_long", str(g["generation_error"]).partition(": ")[2])
            return ItemFailure("generation_failed", g.get("generation_error") or "the model gave an empty chain")
        return str(g["response"])

    async def run(self, item: Item) -> dict[str, Any]:
        ctx = await item_context(item, self.cfg, self.place)
        if isinstance(ctx, ItemFailure):
            return self.error_record(item, ctx)
        original = await self._original(item, ctx.media)
        if isinstance(original, ItemFailure):
            return self.error_record(item, original)
        row, trace = await reflect_item(item.id, original, ctx, self.roles.reflector, self.roles.judge,
                                        item.question or "", list(item.options or []))
        n_opt = len(item.options or []) or 10
        before = preprocess(original, n_opt, item.options).reading
        after = preprocess(trace.final, n_opt, item.options).reading
        rec = {**self._record(item), "response": trace.final, "original_response": original,
               "predicted_option": after.letter,
               "reflect": {"regenerations": trace.regenerations, "unresolved": trace.unresolved,
                           "resolved_after": trace.resolved_after, "undetermined": trace.undetermined,
                           "stopped": trace.stopped}}
        # an answer that cannot be read is unknown (correct None, with the reason), never wrong
        g_before, g_after = grade(before, item.gold, item.options), grade(after, item.gold, item.options)
        row.update(correct_before=g_before.correct, correct_after=g_after.correct)
        for when, g in (("before", g_before), ("after", g_after)):
            if g.answer_problem is not None:
                row[f"answer_problem_{when}"] = g.answer_problem
        if g_after.correct is not None or g_after.answer_problem is not None:
            rec["correct"] = g_after.correct
        if g_after.answer_problem is not None:
            rec["answer_problem"] = g_after.answer_problem
        return pair_record(item.id, rec, self._row(item, row))
