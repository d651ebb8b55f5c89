"""Plan, check, interpret and assemble: one item through one program variant.

Four variants on two axes: logic (a ``def execute_command(video, options)`` function) or
narrative (a bullet list of calls) × declarative (the planner writes the times) or
imperative (``find`` discovers them). Each item gives one ``murgat score`` input record
(every description a sentence with the citations of the segments that produced it, then
the conclusion with ``[n]`` markers turned into citations, then ``Answer: X``) and one trace.

Failure policy: a planner answer with no program, a syntax error or a refused program is a
recorded planning error (``--replan N`` shows the planner the refusal and lets it try
again); a program that breaks a budget, or whose operation raises, is stopped and recorded
(reason, line and column), and what it described so far is kept; a missing media file is
an error record; anything else that goes wrong for one item is that item's
``internal_error`` record. Nothing one item does reaches another item or ends the run, and
a trace is always writable and bounded (:func:`murgat.programs.bounded.writable`: lone surrogates
escaped, deep nesting, long strings and long lists cut with a marker).

What is scored is only what operations produced. The conclusion (the last ``synthesize``,
or the program's returned value when it never synthesized) may cite only segments that a
``describe`` of this item cited: a citation no operation produced is a forgery (the trace
would be truthful, the scored answer not), so the answer is refused (``forged_citations``,
an error record naming the citations) instead of reaching ``responses.jsonl``. The
returned value must fit in ``max_return_chars`` as text, and the assembled response in
``max_response_chars``, before the answer letter is read or anything is written.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from murgat import prompts
from murgat.core.answers import AnswerReading, grade, read_answer
from murgat.core.citations import format_group, format_time
from murgat.core.schema import Citation, Item
from murgat.core.text import canonical_text, scored_citations
from murgat.engine.preflight import ItemMediaError, MediaPlace, open_media
from murgat.judges.base import Judge
from murgat.judges.types import JudgeRequest, TextPart
from murgat.judging.config import JudgingConfig
from murgat.judging.context import ItemContext
from murgat.judging.pool import CallPool
from murgat.programs.bounded import Budget, text_of, writable
from murgat.programs.extract import NoProgram, extract_logic, extract_narrative
from murgat.programs.interpreter import Interpreter, ProgramStopped
from murgat.programs.ops import ExecutorApi, OpRecord, OpSettings, cite_sentences, is_run_failure
from murgat.programs.safety import Checked, Limits, ProgramRefused, parse_program

VARIANTS: tuple[str, ...] = ("logic-declarative", "logic-imperative", "narrative-declarative", "narrative-imperative")


class PlanAttempt(BaseModel):
    attempt: int
    raw: str | None = None
    program: str | None = None
    error: str | None = None


class ItemTrace(BaseModel):
    """Everything that happened for one item under one variant (one line of ``traces.jsonl``)."""

    id: str
    variant: str
    status: str = "ok"  # ok | planning_error | program_stopped | forged_citations | response_too_long | media_error
    #                     | no_answer | internal_error
    plan_attempts: list[PlanAttempt] = Field(default_factory=list)
    program: str | None = None
    program_kind: str | None = None
    validation: dict[str, Any] = Field(default_factory=dict)
    ops: list[OpRecord] = Field(default_factory=list)
    returned: Any = None
    error: str | None = None
    stopped_at: dict[str, int] | None = Field(default=None, description="line and column where the program stopped")
    interpreter_steps: int = 0
    op_calls: int = 0
    judge_calls: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    interpreter_seconds: float = 0.0
    trace_cut: int = Field(default=0, description="strings, lists or values this trace cut (with a marker) to stay bounded")


@dataclass
class ProgramRoles:
    """The providers of a program run: the planner writes programs, the executor answers the
    operations, the checker (``None``: ``--no-check``) verifies descriptions."""

    planner: Judge
    executor: Judge
    checker: Judge | None


def _modalities(durations: dict[str, float | None]) -> str:
    have = [m for m in ("visual", "audio") if durations.get(m) is not None]
    return ", ".join(have) or "none"


async def ask_planner(judges: ProgramRoles, pool: CallPool, item: Item, variant: str, cfg: JudgingConfig, ctx: ItemContext,
               limits: Limits, replan: int, trace: ItemTrace) -> Checked | None:
    """Ask the planner for a program and check it; with ``replan`` the refusal goes back to it."""
    kind = variant.split("-")[0]
    opts = "Options:\n" + "\n".join(f"({chr(65 + i)}) {o}" for i, o in enumerate(item.options)) if item.options else ""
    dur = max((d for d in ctx.durations.values() if d is not None), default=0.0)
    feedback = ""
    for attempt in range(replan + 1):
        prompt = prompts.render(f"plan_{variant.replace('-', '_')}", question=item.question or "(not given)",
                                options=opts, duration=f"{format_time(dur)} ({dur:.1f} s)",
                                modalities=_modalities(ctx.durations), feedback=feedback)
        req = JudgeRequest(parts=[TextPart(prompt)], config=cfg.generate, task="plan",
                           inputs={"id": item.id, "variant": variant, "attempt": attempt})
        out = await pool.ask(judges.planner, req)
        ctx.calls.append(out)
        rec = PlanAttempt(attempt=attempt, raw=out.text)
        trace.plan_attempts.append(rec)
        if out.error:
            rec.error = f"planner failed: {out.error}"
            return None  # a provider failure is not the planner's fault: no replan
        try:
            extract = extract_logic if kind == "logic" else extract_narrative
            code = extract(out.text or "", limits.max_answer_chars)
            rec.program = code
            checked = parse_program(code, limits, mode=kind)
        except (NoProgram, ProgramRefused) as exc:
            rec.error = str(exc)
            feedback = (f"Your previous answer was refused: {exc}. Write the program again, following the rules "
                        "exactly.")
            continue
        trace.program, trace.program_kind = code, checked.kind
        trace.validation = {"ok": True, "nodes": checked.n_nodes, "attempts": attempt + 1}
        return checked
    trace.validation = {"ok": False, "error": trace.plan_attempts[-1].error, "attempts": replan + 1}
    return None


class AnswerRefused(ValueError):
    """The item's answer cannot be scored as it is; ``status`` says why (forged citations, size)."""

    def __init__(self, status: str, reason: str) -> None:
        self.status, self.reason = status, reason
        super().__init__(reason)


def _decimals(value: float) -> int:
    """How many decimals a time read from a citation was written with (``1.2`` → 1, ``65.0`` → 0)."""
    text = repr(float(value))
    if "e" in text or "." not in text:
        return 0
    frac = text.split(".", 1)[1].rstrip("0")
    return min(len(frac), 6)


def _same_time(written: float | None, made: float | None) -> bool:
    """Whether a time as written equals an operation's time at the written precision (a found time
    of 1.23456 s is written 0:01.235; it is that time, not a forgery)."""
    if written is None or made is None:
        return bool(written is made)
    return bool(abs(written - made) <= 0.5 * 10.0 ** -_decimals(written) + 1e-9)


def _made_by_an_operation(c: Citation, made: list[Citation]) -> bool:
    """Whether citation ``c`` as ``score`` reads it is one an operation attached: valid, without a
    box (operations attach none), same modality, start and end at the written precision."""
    if not c.valid or c.boxes or "box" in c.raw.lower() or c.start is None:
        return False
    return any(m.modality == c.modality and _same_time(c.start, m.start) and _same_time(c.end, m.end) for m in made)


def forged_citations(api: ExecutorApi, text: str, options: list[str] | None = None) -> list[str]:
    """Citation groups of ``text`` that cite a segment no ``describe`` of this item cited, read
    exactly as ``murgat score`` reads the response (:func:`murgat.core.text.scored_citations` on the
    canonical text): a citation that only appears once thinking is removed, blanks collapsed or a
    group re-read is as forged as one written plainly."""
    made = [c for d in api.descriptions if d.text and d.status != "unverified" for c in d.citations]
    read = scored_citations(canonical_text(text), options)
    forged = [c for c in read if not _made_by_an_operation(c, made)]
    return list(dict.fromkeys(f"({c.raw})" if not c.valid or c.start is None else format_group([c])
                              for c in forged))


def _refuse_forged(forged: list[str], where: str) -> AnswerRefused:
    shown = ", ".join(forged[:5]) + (f" and {len(forged) - 5} more" if len(forged) > 5 else "")
    return AnswerRefused("forged_citations", f"{where} cites {shown}, which no operation of this item produced; "
                                             "the answer is not scored")


def read_conclusion(api: ExecutorApi, returned: str, n_options: int,
                    options: list[str] | None = None) -> AnswerReading:
    """The option the conclusion chose (the last synthesize's raw answer, else the program's returned
    text), read by the one answer reader every command uses (:func:`murgat.core.answers.read_answer`)."""
    raw = api.conclusions[-1][0] if api.conclusions else returned
    if not raw or not raw.strip():
        return AnswerReading(None, "the program gave no conclusion (no synthesize, nothing returned)")
    return read_answer(raw, options, n_options=n_options)


def assemble(api: ExecutorApi, returned: str, n_options: int,
             reading: AnswerReading | None = None, options: list[str] | None = None) -> tuple[str, str | None]:
    """The cited response (in canonical form: :func:`murgat.core.text.canonical_text`) and the chosen
    option letter; :class:`AnswerRefused` when the conclusion, or the response as ``score`` will
    read it, cites what no operation produced. ``returned``: the program's returned value as
    (bounded) text; ``reading``: the conclusion's answer (:func:`read_conclusion`, read here when
    not given)."""
    parts = [cite_sentences(d.text, d.citations) for d in api.descriptions if d.text and d.status != "unverified"]
    conclusion = canonical_text(api.conclusions[-1][1] if api.conclusions else returned)
    where = "the last synthesize's answer" if api.conclusions else "the program's returned text"
    forged = forged_citations(api, conclusion, options)
    if forged:
        raise _refuse_forged(forged, where)
    option = (reading if reading is not None else read_conclusion(api, returned, n_options)).letter
    # the conclusion's own "Answer:" line is replaced by one canonical line
    lines = [ln for ln in conclusion.split("\n") if not ln.strip().lower().startswith(("answer:", "final answer"))]
    body = "\n".join(lines).strip()
    text = " ".join(p for p in parts if p)
    if body:
        text = f"{text}\n{body}" if text else body
    if option:
        text = f"{text}\nAnswer: {option}" if text else f"Answer: {option}"
    text = canonical_text(text)
    # the whole response, as score reads it: descriptions whose cleaned text forms a citation, and
    # parts that join into one, are caught here
    forged = forged_citations(api, text, options)
    if forged:
        raise _refuse_forged(forged, "the assembled response (as murgat score reads it)")
    return text, option


async def run_item(item: Item, variant: str, judges: ProgramRoles, cfg: JudgingConfig, settings: OpSettings,
                   limits: Limits, replan: int, *, media_root: str | Path | None, input_path: str | Path | None,
                   allow_outside_root: bool = False, pool: CallPool | None = None) -> tuple[dict[str, Any], ItemTrace]:
    """One item under one variant → (``score`` input record, trace); never raises for the item's sake.

    ``pool``: the run's call pool, shared by the items in flight, so two items asking the same
    question at once (the same plan, the same description) send it once."""
    t0 = time.monotonic()
    trace = ItemTrace(id=item.id, variant=variant)
    record: dict[str, Any] = {"id": item.id, "media": item.media, "question": item.question, "options": item.options,
                              "gold": item.gold, "question_type": item.question_type, "response": "",
                              "program_variant": variant}
    try:
        return await _run_item(item, variant, judges, cfg, settings, limits, replan, t0, trace, record,
                               media_root=media_root, input_path=input_path, allow_outside_root=allow_outside_root,
                               pool=pool)
    except Exception as exc:  # one item's failure is its own record, never another item's loss
        if is_run_failure(exc):
            raise
        reason = f"{type(exc).__name__}: {str(exc)[:500]}"
        trace.status, trace.error = "internal_error", reason
        record["generation_error"], record["error_kind"] = f"internal_error: {reason}", "internal_error"
        record["program_status"] = "internal_error"
        return _finish(record, trace, t0)


async def _run_item(item: Item, variant: str, judges: ProgramRoles, cfg: JudgingConfig, settings: OpSettings,
                    limits: Limits, replan: int, t0: float, trace: ItemTrace, record: dict[str, Any], *,
                    media_root: str | Path | None, input_path: str | Path | None,
                    allow_outside_root: bool, pool: CallPool | None) -> tuple[dict[str, Any], ItemTrace]:
    pool = pool if pool is not None else CallPool()
    try:  # the one media preflight every command uses (its error text names the kind: missing, outside, corrupt)
        media, info = await open_media(item, MediaPlace(media_root, input_path, allow_outside_root))
    except ItemMediaError as exc:
        trace.status, trace.error = "media_error", str(exc)
        record["generation_error"], record["error_kind"] = str(exc), exc.failure.kind
        return _finish(record, trace, t0)
    ctx = ItemContext(media=Path(media), durations=info.durations(), config=cfg, question=item.question or "")
    checked = await ask_planner(judges, pool, item, variant, cfg, ctx, limits, replan, trace)
    if checked is None:
        trace.status = "planning_error"
        trace.error = trace.plan_attempts[-1].error if trace.plan_attempts else "no plan"
        record["generation_error"], record["error_kind"] = f"planning_error: {trace.error}", "planning_error"
        _count(trace, ctx)
        return _finish(record, trace, t0)
    api = ExecutorApi(executor=judges.executor, checker=judges.checker, pool=pool, ctx=ctx, settings=settings,
                      question=item.question or "", options=list(item.options or []),
                      max_answer_chars=limits.max_return_chars)
    interp = Interpreter(api, limits, options=list(item.options or []))
    returned_text = await _execute(interp, checked, limits, trace)
    trace.interpreter_steps, trace.op_calls, trace.ops = interp.steps, interp.ops, api.records
    _count(trace, ctx)
    if not _answer(api, returned_text, item, limits, trace, record):
        return _finish(record, trace, t0)
    checks = [r.status for r in api.records if r.op == "describe"]
    record["descriptions"] = {s: checks.count(s) for s in sorted(set(checks))}
    return _finish(record, trace, t0)


async def _execute(interp: Interpreter, checked: Checked, limits: Limits, trace: ItemTrace) -> str:
    """Run the checked program under its budgets; the returned value as text (``""`` when it
    returned nothing or was stopped: the trace says why)."""
    ti = time.monotonic()
    returned_text = ""
    try:
        returned = await asyncio.wait_for(interp.run(checked), timeout=limits.max_seconds)
        # only plain scalars are kept: a program may return arbitrarily nested values
        trace.returned = returned if isinstance(returned, str | int | float | bool | type(None)) else (
            f"<{type(returned).__name__}>")
        if returned not in (None, ""):
            returned_text, complete = text_of(returned, limits.max_return_chars)
            if not complete:  # refused before the answer reader (or anything) reads it
                trace.returned = returned_text[:200] + "…"
                returned_text = ""
                raise ProgramStopped(f"the program's returned value is longer than {limits.max_return_chars:,} "
                                     "characters as text")
    except ProgramStopped as exc:
        trace.status, trace.error = "program_stopped", str(exc)
        if exc.line is not None:
            trace.stopped_at = {"line": exc.line, "column": exc.col if exc.col is not None else 0}
    except TimeoutError:
        trace.status, trace.error = "program_stopped", f"ran longer than {limits.max_seconds:g} s"
    trace.interpreter_seconds = time.monotonic() - ti
    return returned_text


def _answer(api: ExecutorApi, returned_text: str, item: Item, limits: Limits, trace: ItemTrace,
            record: dict[str, Any]) -> bool:
    """The response assembled from what the ops found and the program returned, read and graded
    into ``record``; ``False`` when it was refused (the record says why)."""
    n_options = len(item.options or []) or 10
    reading = read_conclusion(api, returned_text, n_options, list(item.options or []) or None)
    try:
        text, option = assemble(api, returned_text, n_options, reading, list(item.options or []) or None)
        if len(text) > limits.max_response_chars:
            raise AnswerRefused("response_too_long", f"the assembled response is {len(text):,} characters, beyond "
                                                     f"the {limits.max_response_chars:,}-character limit")
    except AnswerRefused as exc:
        trace.status, trace.error = exc.status, exc.reason
        record["generation_error"], record["error_kind"] = f"{exc.status}: {exc.reason}", exc.status
        record["program_status"] = exc.status
        return False
    record["response"] = text
    record["predicted_option"] = option
    g = grade(reading, item.gold, item.options)  # an unread answer is unknown (None, with the reason), never wrong
    if g.correct is not None or g.answer_problem is not None:
        record["correct"] = g.correct
    if g.answer_problem is not None:
        record["answer_problem"] = g.answer_problem
    record["program_status"] = trace.status
    if trace.status == "ok" and option is None and item.options:
        trace.status = "no_answer"
        record["program_status"] = "no_answer"
    return True


def _count(trace: ItemTrace, ctx: ItemContext) -> None:
    trace.judge_calls = len(ctx.calls)
    trace.cache_hits = sum(1 for c in ctx.calls if c.cached)


#: the trace fields written last: the long ones, least needed to see what happened (the step
#: counts, status, error and operations come first, so a huge replan never costs them their place)
_WRITTEN_LAST = ("program", "plan_attempts")


def _by_priority(dumped: dict[str, Any]) -> dict[str, Any]:
    """The dumped trace with its long, least needed fields last (the budget is spent in this order)."""
    return {**{k: v for k, v in dumped.items() if k not in _WRITTEN_LAST},
            **{k: dumped[k] for k in _WRITTEN_LAST if k in dumped}}


def _typed_lists(dumped: Any) -> Any:
    """``ops`` and ``plan_attempts`` without the note a cut list ends with (a list of records cannot
    hold a string); the cut is still counted in ``trace_cut``."""
    if isinstance(dumped, dict):
        for key in ("ops", "plan_attempts"):
            if isinstance(dumped.get(key), list):
                dumped[key] = [x for x in dumped[key] if isinstance(x, dict)]
    return dumped


def _finish(record: dict[str, Any], trace: ItemTrace, t0: float) -> tuple[dict[str, Any], ItemTrace]:
    trace.seconds = time.monotonic() - t0
    record["program_calls"] = trace.judge_calls
    safe_record = writable(record)
    try:
        # bounded before pydantic sees it: the serializer's own allocation failure aborts the process
        budget = Budget()
        safe_trace = ItemTrace.model_validate(_typed_lists(writable(_by_priority(trace.model_dump(mode="python")),
                                                                    budget)))
        safe_trace.trace_cut = budget.cut
        safe_trace.model_dump_json()
    except Exception as exc:  # the last resort: the stop is recorded instead of the full trace
        safe_trace = ItemTrace(id=writable(trace.id), variant=trace.variant, status="internal_error",
                               error=writable(f"the trace could not be written: {type(exc).__name__}: {str(exc)[:300]}"),
                               seconds=trace.seconds, judge_calls=trace.judge_calls)
    return safe_record, safe_trace
