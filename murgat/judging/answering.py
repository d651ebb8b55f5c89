"""The model being evaluated answers a question about a media file: plain, cited, or adding
citations to an earlier answer (``post-hoc``). ``generate`` and ``sweep`` ask it for every
question, ``reflect`` for the chains it then repairs.

The model watches the whole file with its sound (a :class:`~murgat.judges.types.MediaPart`)
through the same providers as the judges, so caching, retries, limits and cost accounting are
the same; it is typed :class:`Model`, never a judge: it is what is measured.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from murgat import prompts
from murgat.core.answers import grade
from murgat.core.citations import strip_citations
from murgat.core.inputs import response_problem
from murgat.core.schema import Item
from murgat.core.text import preprocess
from murgat.judges.types import GenerateConfig, JudgeRequest, MediaPart, TextPart
from murgat.judging.pool import Provider

Mode = Literal["base", "cite", "posthoc"]
MODES: tuple[str, ...] = ("base", "cite", "posthoc")
LETTERS = "ABCDEFGHIJ"


class Model(Provider, Protocol):
    """The model being evaluated: any provider of :mod:`murgat.judges`, asked as the judges are
    (a call pool, the response cache), but what is measured, never what measures."""


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
    if item.meta:  # the dataset's own fields (murgat.core.breakdown groups on them)
        rec["meta"] = item.meta
    rec.update(meta)
    return rec


async def generate_one(model: Model, item: Item, media: Path, mode: Mode, cfg: GenerateConfig, *,
                       fps: float = 1.0, max_frames: int = 64, base_response: str | None = None,
                       max_chars: int | None = None) -> dict[str, Any]:
    """One answer for ``item`` (its media already found by the preflight: a missing file never gets here).

    An answer longer than ``max_chars`` (``--max-response-chars``) is an error record
    (``response_too_long``), as an input response over the cap is: nothing downstream reads it.
    The chosen option is read by :func:`murgat.core.answers.read_answer` and graded by
    :func:`murgat.core.answers.grade`: an unread answer has ``correct: null`` and ``answer_problem``."""
    meta: dict[str, Any] = {"model": model.name, "mode": mode, "effort": cfg.reasoning_effort}
    req = build_request(item, media, mode, cfg, fps, max_frames, base_response)
    out = await model.generate(req)
    meta["usage"] = out.usage.model_dump()
    meta["cached"] = out.cached
    if out.evidence_notes:  # a long file's sound track was sent in part: the record says what was heard
        meta["evidence_notes"] = out.evidence_notes
    if out.error or out.text is None:
        return record_for(item, base_response or "", **meta, generation_error=out.error or "empty answer",
                          error_kind="model_error")
    text = out.text.strip()
    too_long = response_problem(text, max_chars)
    if too_long:
        return record_for(item, base_response or "", **meta, generation_error=too_long,
                          error_kind=too_long.partition(":")[0])
    if mode == "posthoc":
        ok, where = preserved(base_response or "", text)
        if not ok:
            meta["posthoc"] = {"status": "rejected", "reason": where, "rewrite": text}
            return record_for(item, base_response or "", **meta)
        meta["posthoc"] = {"status": "accepted"}
    pre = preprocess(text, len(item.options or []) or 10, item.options)
    meta["predicted_option"] = pre.option
    g = grade(pre.reading, item.gold, item.options)
    if g.correct is not None or g.answer_problem is not None:  # items without a gold option carry neither
        meta["correct"] = g.correct
    if g.answer_problem is not None:
        meta["answer_problem"] = g.answer_problem
    return record_for(item, text, **meta)
