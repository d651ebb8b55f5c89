"""``murgat generate``: answers from an omni/vision model, plain, cited or post-hoc cited.

Modes:

* ``base`` — reason step by step, end with ``Answer: <letter>``;
* ``cite`` — the same, and every observed fact ends with ``(modality, MM:SS[-MM:SS])``;
* ``posthoc`` — given a ``base`` response, the model adds or corrects citations. The
  text outside citations must come back unchanged (compared token by token after removing
  citation groups); a rewrite that changed it is rejected, recorded with the first
  difference, and the original response is kept.

The model's answer is :func:`murgat.judging.answering.generate_one`'s. Output lines are
``murgat score`` input records; each is appended and fsync'd as it finishes, and a rerun skips
ids already written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from murgat.core.answers import gold_problem
from murgat.core.metric import accuracy_figures, record_answer_state
from murgat.core.schema import Item
from murgat.engine.outcome import ItemFailure
from murgat.engine.preflight import ItemMediaError, MediaPlace, resolve
from murgat.judges.types import GenerateConfig
from murgat.judging.answering import Mode, Model, generate_one, record_for
from murgat.judging.pool import CallPool


class GenerateTask:
    """``generate``'s item task for the engine (:mod:`murgat.engine.loop`): one answer per item."""

    def __init__(self, model: Model, mode: Mode, cfg: GenerateConfig, place: MediaPlace, *, fps: float = 1.0,
                 max_frames: int = 64, base: dict[str, str] | None = None, max_chars: int | None = None) -> None:
        self.model, self.mode, self.cfg, self.place = model, mode, cfg, place
        self.fps, self.max_frames, self.base, self.max_chars = fps, max_frames, base or {}, max_chars
        self.pool: CallPool | None = None  # one request per item: nothing to share in flight

    async def run(self, item: Item) -> dict[str, Any]:
        try:
            media = resolve(item, self.place)
        except ItemMediaError as exc:
            return self.error_record(item, exc.failure)
        b = self.base.get(item.id)
        if self.mode == "posthoc" and b is None:
            return self.error_record(item, ItemFailure("missing_base", "no base response for this id"))
        return await generate_one(self.model, item, media, self.mode, self.cfg, fps=self.fps,
                                  max_frames=self.max_frames, base_response=b, max_chars=self.max_chars)

    def error_record(self, item: Item, failure: ItemFailure) -> dict[str, Any]:
        return record_for(item, "", model=self.model.name, mode=self.mode, effort=self.cfg.reasoning_effort,
                          generation_error=failure.line, error_kind=failure.kind)


def accuracy_table(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy overall and per question type, over the items with a gold option; an answer that
    could not be read counts as not correct (:func:`murgat.core.metric.accuracy_figures`), with
    ``n_answer_unknown`` and ``accuracy_answered`` (over the answers that were read) beside it."""
    graded = [(r, st) for r in records if (st := record_answer_state(r)) is not None]
    by_type: dict[str, list[float]] = {}
    unknown_by_type: dict[str, int] = {}
    for r, st in graded:
        t = str(r.get("question_type") or "all")
        by_type.setdefault(t, []).append(1.0 if st == "right" else 0.0)
        unknown_by_type[t] = unknown_by_type.get(t, 0) + (st == "unknown")
    acc = accuracy_figures([st for _, st in graded])
    return {
        "n": len(records), "n_with_gold": len(graded), **acc.as_dict(),
        "n_errors": sum(1 for r in records if r.get("generation_error")),
        "n_posthoc_rejected": sum(1 for r in records if (r.get("posthoc") or {}).get("status") == "rejected"),
        "n_gold_unusable": sum(1 for r in records if not r.get("generation_error")
                               and gold_problem(r.get("gold"), r.get("options")) is not None),
        "by_type": {t: {"n": len(v), "accuracy": sum(v) / len(v), "n_answer_unknown": unknown_by_type[t]}
                    for t, v in sorted(by_type.items())},
    }
