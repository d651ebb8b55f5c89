"""``murgat generate``: answers from an omni/vision model, plain, cited or post-hoc cited.

Modes:

* ``base`` — reason step by step, end with ``Answer: <letter>``;
* ``cite`` — the same, and every observed fact ends with ``(modality, MM:SS[-MM:SS])``;
* ``posthoc`` — given a ``base`` response, the model adds or corrects citations. The
  text outside citations must come back unchanged (compared token by token after removing
  citation groups); a rewrite that changed it is rejected, recorded with the first
  difference, and the original response is kept.

The model watches the whole file with its sound (a :class:`MediaPart`) through the judge
layer's providers, so caching, retries, limits and cost accounting are the same as for
scoring. Output lines are ``murgat score`` input records; each is appended and fsync'd as
it finishes, and a rerun skips ids already written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import prompts
from murgat.answers import is_correct
from murgat.citations import strip_citations
from murgat.engine.folder import RunFolder
from murgat.engine.loop import plan, run_items
from murgat.engine.preflight import ItemMediaError, MediaPlace, resolve
from murgat.judges.base import Judge
from murgat.judges.types import GenerateConfig, JudgeRequest, MediaPart, TextPart
from murgat.schema import Item
from murgat.text import preprocess

Mode = Literal["base", "cite", "posthoc"]
MODES: tuple[str, ...] = ("base", "cite", "posthoc")
LETTERS = "ABCDEFGHIJ"


def options_block(options: Sequence[str] | None) -> str:
    if not options:
        return "Answer in a few words."
    return "Options:\n" + "\n".join(f"({LETTERS[i]}) {o}" for i, o in enumerate(options))


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", strip_citations(text))


def preserved(original: str, rewrite: str) -> tuple[bool, str | None]:
    """Whether ``rewrite`` keeps every word and mark of ``original`` outside citations.

    Returns ``(ok, where)`` with a short description of the first difference.
    """
    a, b = _tokens(original), _tokens(rewrite)
    if a == b:
        return True, None
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    ctx_a = " ".join(a[max(0, n - 4) : n + 4])
    ctx_b = " ".join(b[max(0, n - 4) : n + 4])
    return False, f"text changed at token {n}: '{ctx_a}' → '{ctx_b}'"


def build_request(item: Item, media: Path, mode: Mode, cfg: GenerateConfig, fps: float, max_frames: int,
                  base_response: str | None = None) -> JudgeRequest:
    prompt = generate_prompt(item, mode, base_response)
    return JudgeRequest(parts=[MediaPart(str(media), fps=fps, max_frames=max_frames), TextPart(prompt)], config=cfg,
                        task="generate", inputs={"id": item.id, "mode": mode, "effort": cfg.reasoning_effort})


def generate_prompt(item: Item, mode: Mode, base_response: str | None = None) -> str:
    """The text an answering model is given with the media (also what the inspect_ai task sends)."""
    question = item.question or "(no question given)"
    if mode == "posthoc":
        if base_response is None:
            raise ValueError(f"{item.id}: posthoc mode needs a base response")
        return prompts.render("generate_posthoc", question=question, response=base_response)
    return prompts.render(f"generate_{mode}", question=question, options=options_block(item.options))


def record_for(item: Item, response: str, **meta: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": item.id, "media": item.media, "question": item.question, "options": item.options, "gold": item.gold,
           "question_type": item.question_type, "response": response}
    rec.update({k: v for k, v in (item.model_extra or {}).items() if k not in rec and k != "response"})
    if item.meta:  # the dataset's own fields (murgat.breakdown groups on them)
        rec["meta"] = item.meta
    rec.update(meta)
    return rec


async def generate_one(judge: Judge, item: Item, media: Path, mode: Mode, cfg: GenerateConfig, *,
                       fps: float = 1.0, max_frames: int = 64, base_response: str | None = None) -> dict[str, Any]:
    """One answer for ``item`` (its media already found by the preflight: a missing file never gets here)."""
    meta: dict[str, Any] = {"model": judge.name, "mode": mode, "effort": cfg.reasoning_effort}
    req = build_request(item, media, mode, cfg, fps, max_frames, base_response)
    out = await judge.generate(req)
    meta["usage"] = out.usage.model_dump()
    meta["cached"] = out.cached
    if out.error or out.text is None:
        return record_for(item, base_response or "", **meta, generation_error=out.error or "empty answer")
    text = out.text.strip()
    if mode == "posthoc":
        ok, where = preserved(base_response or "", text)
        if not ok:
            meta["posthoc"] = {"status": "rejected", "reason": where, "rewrite": text}
            return record_for(item, base_response or "", **meta)
        meta["posthoc"] = {"status": "accepted"}
    pre = preprocess(text, len(item.options or []) or 10)
    meta["predicted_option"] = pre.option
    correct = is_correct(pre.option, item.gold, item.options)
    if correct is not None:
        meta["correct"] = correct
    return record_for(item, text, **meta)


class GenerateTask:
    """``generate``'s item task for the engine (:mod:`murgat.engine.loop`): one answer per item."""

    def __init__(self, judge: Judge | None, mode: Mode, cfg: GenerateConfig, place: MediaPlace, *, fps: float = 1.0,
                 max_frames: int = 64, base: dict[str, str] | None = None, model: str = "") -> None:
        self.judge, self.mode, self.cfg, self.place = judge, mode, cfg, place
        self.fps, self.max_frames, self.base = fps, max_frames, base or {}
        self.model = judge.name if judge is not None else model

    async def run(self, item: Item) -> dict[str, Any]:
        assert self.judge is not None
        try:
            media = resolve(item, self.place)
        except ItemMediaError as exc:
            return self.error_record(item, str(exc))
        b = self.base.get(item.id)
        if self.mode == "posthoc" and b is None:
            return self.error_record(item, "no base response for this id")
        return await generate_one(self.judge, item, media, self.mode, self.cfg, fps=self.fps, max_frames=self.max_frames,
                                  base_response=b)

    def error_record(self, item: Item, error: str) -> dict[str, Any]:
        return record_for(item, "", model=self.model, mode=self.mode, effort=self.cfg.reasoning_effort,
                          generation_error=error)

    def digest(self, item: Item) -> str:
        return self.place.digest(item, self.base.get(item.id))


def ray_task(settings: dict[str, Any], judge: Callable[..., Any]) -> GenerateTask:
    """``generate``'s task rebuilt inside a Ray worker (see :mod:`murgat.scaleout.tasks`)."""
    cfg = GenerateConfig.model_validate(settings["config"])
    return GenerateTask(judge(settings["model"], settings["options"], cfg), settings["mode"], cfg,
                        MediaPlace(**settings["place"]), fps=settings["fps"], max_frames=settings["max_frames"],
                        base=settings["base"])


async def generate_all(judge: Judge, items: Sequence[Item], folder: RunFolder, mode: Mode, cfg: GenerateConfig, *,
                       place: MediaPlace, fps: float = 1.0, max_frames: int = 64, base: dict[str, str] | None = None,
                       concurrency: int = 8, retry_errors: bool = False,
                       on_item: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Generate for every item not yet in ``folder`` (or edited since); the responses file is then
    rewritten in input order with one record per id (retried items leave no old lines)."""
    task = GenerateTask(judge, mode, cfg, place, fps=fps, max_frames=max_frames, base=base)
    todo = plan(task, items, folder, retry_errors).todo
    fresh = await run_items(task, todo, folder, concurrency=concurrency, on_item=on_item, keep=True)
    folder.compact([it.id for it in items])
    return fresh


def accuracy_table(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy overall and per question type (items with a gold letter only)."""
    from murgat.answers import gold_problem
    from murgat.metric import bootstrap_ci

    rows = [r for r in records if r.get("correct") is not None]
    by_type: dict[str, list[float]] = {}
    for r in rows:
        by_type.setdefault(str(r.get("question_type") or "all"), []).append(1.0 if r["correct"] else 0.0)
    overall = bootstrap_ci([1.0 if r["correct"] else 0.0 for r in rows]) if rows else None
    return {
        "n": len(records), "n_with_gold": len(rows),
        "n_errors": sum(1 for r in records if r.get("generation_error")),
        "n_posthoc_rejected": sum(1 for r in records if (r.get("posthoc") or {}).get("status") == "rejected"),
        "n_gold_unusable": sum(1 for r in records if not r.get("generation_error")
                               and gold_problem(r.get("gold"), r.get("options")) is not None),
        "accuracy": overall.model_dump() if overall else None,
        "by_type": {t: {"n": len(v), "accuracy": sum(v) / len(v)} for t, v in sorted(by_type.items())},
    }
