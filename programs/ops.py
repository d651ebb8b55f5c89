"""The three operations a program can perform, and the records they leave.

* ``find(query, modality)`` → time ranges, from one of three backends: ``model`` (the
  executor looks at the whole track of that modality and answers JSON ranges), ``transcript``
  (ASR words: exact phrase, then fuzzy spelling, then MiniLM similarity over ASR segments),
  ``ocr`` (on-screen text). Ranges are clamped to the media and merged; each records which
  backend found it.
* ``describe(ranges, modality, instruction)`` → a few sentences about exactly those
  segments of that one modality, built by the same evidence builder ``murgat score`` uses;
  murgat (not the model) attaches the citations. With the runtime check on, the entailment
  judge then asks whether those segments entail the description (the joint check of
  ``score``); "no" → regenerate with the checker's reason, up to ``check_retries`` times;
  still "no" → kept but marked unverified and left out of ``synthesize``.
* ``synthesize(instruction)`` → the conclusion, from the numbered descriptions only (no
  media); ``[n]`` markers are replaced by the citations of description ``n``.

Records tell the truth about each operation: a record is appended when the operation starts
(so a stop or a timeout mid-operation still shows it) and its status is set by how the
work ended — ``ok``/``verified``/``unchecked``/``unverified`` when it ran, ``empty`` only
when there was genuinely nothing (no range to describe, nothing found), ``error`` or
``unparseable`` with the reason when it failed, including when it raised (the exception
still stops the program, at the call's line) or was cancelled by the program's time limit.
Arguments arrive as bounded text (the interpreter's job); model answers are refused past
``max_answer_chars`` before anything reads them; times must be finite and within a week.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import math
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from murgat import prompts
from murgat.core.citations import (
    MAX_TIME_S,
    check_durations,
    format_group,
    make_citation,
    normalise_modality,
    parse_citations,
    parse_time,
)
from murgat.core.schema import AtomicFact, Citation
from murgat.core.text import canonical_text, split_sentences, strip_thinking
from murgat.judges.base import Judge, JudgeUnreachable
from murgat.judges.evidence import evidence_parts
from murgat.judges.parsing import parse_json_answer
from murgat.judges.types import JudgeRequest, Part, TextPart
from murgat.judging.channels import progress_line, text_channels
from murgat.judging.context import ItemContext
from murgat.judging.entail import ask_entailment
from murgat.judging.pool import CallPool
from murgat.media.evidence import EvidenceConfig, build_evidence
from murgat.programs.bounded import preview
from murgat.programs.interpreter import Api, TimeRange

FindBackend = Literal["model", "transcript", "ocr"]
FIND_SCHEMA = {"type": "object", "properties": {"ranges": {"type": "array", "items": {"type": "array"}}},
               "required": ["ranges"]}
_MAX_RANGES = 8
#: how many of a ``describe``'s range items, and characters of each, its record keeps
_RECORDED_ITEMS = 64
_RECORDED_CHARS = 400
#: most characters of a judge's raw answer a record keeps (the response cache keeps it whole)
_RECORDED_RAW = 2_000
#: most letter-words in a time written as text: the citation grammar's label part can read a
#: run of words joined by "and" many ways, so its cost grows exponentially with their number
#: (12 words ~1 ms, 25 words 0.7 s); real times ("1.5 seconds to 3 seconds", "audio 0:01-0:03
#: and 0:05-0:07") have a handful
_MAX_TIME_WORDS = 12


class OpRecord(BaseModel):
    """One operation as it ran: inputs, outputs, citations, judge calls, verdicts, timing."""

    op: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    output: Any = None
    citations: list[str] = Field(default_factory=list)
    status: str = Field(default="ok", description="running while it runs; then ok | empty | error | unparseable "
                                          "(find), verified | unchecked | unverified | empty | error (describe)")
    check: list[dict[str, Any]] = Field(default_factory=list, description="runtime attribution verdicts, in order")
    notes: list[str] = Field(default_factory=list, description="what the operation left out, and why (it still ran)")
    calls: int = 0
    seconds: float = 0.0
    error: str | None = None


@dataclass
class Description:
    """A description made by ``describe``, with the citations murgat attached."""

    index: int
    text: str
    modality: str
    citations: list[Citation]
    status: str  # verified | unchecked | unverified


@dataclass
class OpSettings:
    """Executor-side settings of a program run (part of the run's identity)."""

    find_backend: FindBackend = "model"
    check: bool = True
    check_retries: int = 2
    find_max_frames: int = 32
    transcript_fuzzy: float = 0.8
    transcript_similarity: float = 0.55
    ocr_fps: float = 1.0
    asr_model: str | None = None


def merge_ranges(ranges: list[tuple[float, float]], duration: float | None, gap: float = 0.0) -> list[tuple[float, float]]:
    """Clamp to ``[0, duration]``, drop empty or reversed ones, merge overlapping (or within ``gap``)."""
    out: list[tuple[float, float]] = []
    for a, b in sorted(ranges):
        if duration is not None:
            a, b = max(0.0, min(a, duration)), max(0.0, min(b, duration))
        else:
            a, b = max(0.0, a), max(0.0, b)
        if b < a:
            continue
        if out and a <= out[-1][1] + gap:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _seconds(v: Any) -> float | None:
    """A time in seconds, or ``None``: not a number, or not finite (``"nan"``, ``"inf"`` and
    ``"1e999"`` as text are refused here, as the interpreter refuses them as numbers)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, str):
        t = v.strip()
        try:
            x = float(t)
        except ValueError:
            pass
        else:
            return x if math.isfinite(x) else None
        if re.fullmatch(r"[0-9]{1,3}(?::[0-9]{1,2}){1,2}(?:\.[0-9]+)?", t):
            value, problem = parse_time(t)
            return None if problem else value
    return None


def _string_times(text: str, mod: str, *, reversed_only: bool = False) -> list[Citation]:
    """Times a planner wrote as text ("00:01-00:03", "0:04", "1.5s to 3s", "audio 0:01-0:03"),
    read by the citation grammar murgat reads every response with, so a description cites
    exactly the segments the planner named. Only the times are taken: the modality is
    ``describe``'s own. ``reversed_only``: the ranges the text names that end before they
    start (the program's error to report, not a time to drop)."""
    t = " ".join(text.split())
    if not t or len(t) > 400 or any(ch in t for ch in "()[]") or len(re.findall(r"[A-Za-z]+", t)) > _MAX_TIME_WORDS:
        return []
    for group in (f"({t})", f"({mod} {t})"):  # labelled by the planner, or not
        found = parse_citations(group)
        cites = [c for c in found if (c.valid if not reversed_only else _is_reversed(c))]
        if cites:
            return cites
    return []


def _is_reversed(c: Citation) -> bool:
    """An otherwise readable range whose end is before its start."""
    return (not c.valid and c.start is not None and c.end is not None and c.end < c.start
            and (c.reason or "").startswith("end "))


def is_run_failure(exc: BaseException) -> bool:
    """A failure of the whole run, not of one item's program: a replay cassette miss (exit 3,
    never an error record), results that cannot be written (exit 5), a judge that cannot be
    reached at all (exit 4: :class:`~murgat.judges.base.JudgeUnreachable`), or Ray's own errors
    (a lost worker or service is the scale-out layer's to restart and resubmit)."""
    from murgat.core.jsonl import ResultsWriteError
    from murgat.judges.replay import ReplayMiss

    # an endpoint that never answered stops the run (exit 4) instead of every item's program failing
    return (isinstance(exc, ReplayMiss | ResultsWriteError | JudgeUnreachable)
            or type(exc).__module__.split(".")[0] == "ray")


def _norm_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


@dataclass
class ExecutorApi(Api):
    """The operations for one item, recording everything in ``records`` and ``descriptions``."""

    executor: Judge
    checker: Judge | None
    pool: CallPool
    ctx: ItemContext
    settings: OpSettings
    question: str = ""
    options: list[str] = field(default_factory=list)
    records: list[OpRecord] = field(default_factory=list)
    descriptions: list[Description] = field(default_factory=list)
    conclusions: list[tuple[str, str]] = field(default_factory=list)  # (raw text, text with citations)
    _text_loaded: bool = False
    _full_transcript: Any = None

    #: most characters of a model answer an operation accepts (the runner sets the program's limit)
    max_answer_chars: int = 20_000

    def is_run_failure(self, exc: BaseException) -> bool:
        return is_run_failure(exc)

    @contextlib.contextmanager
    def _recording(self, rec: OpRecord) -> Iterator[OpRecord]:
        """Append ``rec`` now and settle its status when the work ends: whatever the operation
        set, else ``ok``; ``error`` with the reason if it raised (the exception goes on and
        stops the program) or was cancelled (the program's time ran out)."""
        rec.status = "running"
        self.records.append(rec)
        t0 = time.monotonic()
        try:
            yield rec
        except asyncio.CancelledError:
            rec.status, rec.error = "error", "cancelled: the program's time limit ran out during this operation"
            raise
        except Exception as exc:
            rec.status, rec.error = "error", f"{type(exc).__name__}: {str(exc)[:300]}"
            raise
        else:
            if rec.status == "running":
                rec.status = "ok"
        finally:
            rec.seconds = time.monotonic() - t0

    async def _text_channels(self) -> None:
        """Transcript, sound classes and screen text, once per item, before the first evidence
        is built, when a judge of this run reads evidence as text (as ``murgat score`` does).

        Why before: evidence is built once per segment and kept, and ``describe`` builds it
        for the executor before the checker asks. Built without the transcript, a
        text-reading checker (``--judge embedded``) was told "no speech is heard" in segments
        full of speech, unless a transcript ``find`` had happened to load it first."""
        if self._text_loaded:
            return
        self._text_loaded = True
        cfg = self.ctx.config
        need = (cfg.evidence_text or cfg.evidence.text or self.executor.needs_evidence_text
                or (self.checker is not None and self.checker.needs_evidence_text))
        if self.settings.asr_model is not None:
            cfg = cfg.model_copy(update={"asr_model": self.settings.asr_model})
        await text_channels(self.ctx, cfg, bool(need))

    # ----- helpers -----
    def _whole_transcript(self) -> Any:
        """Every word of the file, for a search over all of it (``find`` with the transcript backend):
        the item's transcript when it is whole (a short file), else a long file's chunks in order —
        one chunk of audio in memory at a time, with a progress line on stderr — kept for the item.
        The evidence text keeps reading the lazy windows (``ctx.transcript``)."""
        from murgat.media.asr import transcript_source

        if self.ctx.transcript is None:
            self.ctx.transcript = transcript_source(self.ctx.media, self.settings.asr_model)
        tr = self.ctx.transcript
        if hasattr(tr, "words"):
            return tr
        if self._full_transcript is None:
            self._full_transcript = tr.full(progress=progress_line(f"transcribing {Path(self.ctx.media).name}"))
        return self._full_transcript

    def _duration(self, modality: str) -> float | None:
        return self.ctx.durations.get(modality)

    async def _ask(self, req: JudgeRequest, rec: OpRecord) -> tuple[str | None, str | None]:
        out = await self.pool.ask(self.executor, req)
        self.ctx.calls.append(out)
        rec.calls += 1
        if out.error:
            return None, out.error
        text = out.text or ""
        if len(text) > self.max_answer_chars:  # refused before anything (the citation grammar, the reader) reads it
            return None, (f"the executor's answer is {len(text):,} characters, beyond the "
                          f"{self.max_answer_chars:,}-character limit")
        return text, None

    # ----- find -----
    async def find(self, query: str, modality: str) -> list[TimeRange]:
        rec = OpRecord(op="find", inputs={"query": str(query), "modality": str(modality)})
        with self._recording(rec):
            return await self._find(str(query), str(modality), rec)

    async def _find(self, query: str, modality: str, rec: OpRecord) -> list[TimeRange]:
        mod = normalise_modality(modality)
        if mod is None or self._duration(mod) is None:
            rec.status, rec.error = "error", f"no {mod} track in this media" if mod else \
                f"unknown modality {preview(modality)}"
            return []
        backend: str = self.settings.find_backend
        if (backend == "transcript" and mod != "audio") or (backend == "ocr" and mod != "visual"):
            backend = "model"  # the text backends read only their own modality
        rec.inputs["backend"] = backend
        if backend == "transcript":
            found = await asyncio.to_thread(self._find_transcript, query)
        elif backend == "ocr":
            found = await asyncio.to_thread(self._find_ocr, query)
        else:
            await self._text_channels()
            found = await self._find_model(query, mod, rec)
        merged = merge_ranges(found, self._duration(mod))[:_MAX_RANGES]
        result = [TimeRange(a, b, mod, backend) for a, b in merged]
        if rec.status != "running":  # the search failed (error, unparseable): a failure, never "nothing found"
            return result
        rec.output = [[r.start, r.end] for r in result]
        if not result:
            rec.status = "empty"
        return result

    async def _find_model(self, query: str, mod: str, rec: OpRecord) -> list[tuple[float, float]]:
        dur = self._duration(mod) or 0.0
        whole = make_citation(mod, 0.0, dur)
        cfg = self.ctx.config.evidence.model_copy(update={
            "fps": max(self.settings.find_max_frames / max(dur, 1e-6), 1e-3) if dur else 1.0,
            "max_frames": self.settings.find_max_frames, "pad_s": 0.0})
        ev = self.ctx.fitted(await asyncio.to_thread(build_evidence, self.ctx.media, [whole], cfg,
                                                     transcript=self.ctx.transcript, screen=self.ctx.screen,
                                                     limits=self.ctx.limits))
        parts = [TextPart(prompts.render("program_find", modality=mod, query=query)),
                 *evidence_parts(ev, self.ctx.config.evidence_text or self.executor.needs_evidence_text)]
        req = JudgeRequest(parts=parts, schema=FIND_SCHEMA, config=self.ctx.config.generate, task="find",
                           inputs={"query": query, "modality": mod})
        text, err = await self._ask(req, rec)
        if err is not None:
            rec.status, rec.error = "error", err
            return []
        value, problem = parse_json_answer(text or "")
        rows = value.get("ranges") if isinstance(value, dict) else value if isinstance(value, list) else None
        if not isinstance(rows, list):
            rec.status, rec.error = "unparseable", problem or "answer has no list of ranges"
            rec.output = (text or "")[:_RECORDED_RAW]
            return []
        out = []
        for row in rows:
            if isinstance(row, list | tuple) and len(row) == 2:
                a, b = _seconds(row[0]), _seconds(row[1])
                if a is not None and b is not None:
                    out.append((a, b))
            elif isinstance(row, dict):
                a, b = _seconds(row.get("start")), _seconds(row.get("end"))
                if a is not None and b is not None:
                    out.append((a, b))
        return out

    def _find_transcript(self, query: str) -> list[tuple[float, float]]:
        tr = self._whole_transcript()
        quoted = re.findall(r"[\"“'‘]([^\"”'’]{2,})[\"”'’]", query)
        target = _norm_words(quoted[0] if quoted else query)
        words = [(w, _norm_words(w.word)) for w in tr.words]
        flat = [(w, t) for w, toks in words for t in toks]
        n = len(target)
        if not n or not flat:
            return []
        hits: list[tuple[float, float]] = []
        for i in range(len(flat) - n + 1):  # exact phrase
            if [t for _, t in flat[i : i + n]] == target:
                hits.append((flat[i][0].start, flat[i + n - 1][0].end))
        if hits:
            return hits
        goal = " ".join(target)
        for i in range(len(flat) - n + 1):  # same words, near spelling
            window = " ".join(t for _, t in flat[i : i + n])
            if difflib.SequenceMatcher(None, window, goal).ratio() >= self.settings.transcript_fuzzy:
                hits.append((flat[i][0].start, flat[i + n - 1][0].end))
        if hits:
            return hits
        from murgat.human_eval.embeddings import minilm

        model = minilm()
        if model is None or not tr.segments:
            return []
        vecs = model.encode([query] + [s.text for s in tr.segments])
        sims = vecs[1:] @ vecs[0]
        return [(s.start, s.end) for s, sim in zip(tr.segments, sims, strict=True)
                if float(sim) >= self.settings.transcript_similarity]

    def _find_ocr(self, query: str) -> list[tuple[float, float]]:
        from murgat.media.ocr import screen_text

        if self.ctx.screen is None:
            self.ctx.screen = screen_text(self.ctx.media, self.settings.ocr_fps)
        st = self.ctx.screen
        quoted = re.findall(r"[\"“'‘]([^\"”'’]{2,})[\"”'’]", query)
        goal = " ".join(_norm_words(quoted[0] if quoted else query))
        step = 1.0 / max(st.fps, 1e-6)
        hits = []
        for ln in st.lines:
            line = " ".join(_norm_words(ln.text))
            if goal and (goal in line or difflib.SequenceMatcher(None, line, goal).ratio() >= self.settings.transcript_fuzzy):
                hits.append((ln.time, ln.time + step))
        return hits

    # ----- describe -----
    def _citations(self, ranges: Any, mod: str) -> tuple[list[Citation], list[str]]:
        """The citations ``ranges`` names, and a note for each item that names no usable time
        (unreadable, not finite, beyond a week): such an item is never silently dropped."""
        items = ranges if isinstance(ranges, list | tuple) else [] if ranges is None else [ranges]
        spans: list[tuple[float, float]] = []
        points: list[float] = []
        problems: list[str] = []
        for r in items:
            got: list[float] = []
            if isinstance(r, TimeRange):
                spans.append((r.start, r.end))
                continue
            if isinstance(r, str):
                named = _string_times(r, mod)
                spans += [(c.start, c.end) for c in named if not c.point and c.start is not None and c.end is not None]
                points += [c.start for c in named if c.point and c.start is not None]
                if named:
                    continue
                if _string_times(r, mod, reversed_only=True):
                    problems.append(f"{preview(r, 60)} is a reversed range (it ends before it starts)")
                    continue
                if (a := _seconds(r)) is not None:  # plain seconds ("4", "4.5")
                    got = [a]
            elif isinstance(r, list | tuple) and len(r) == 2:
                a, b = _seconds(r[0]), _seconds(r[1])
                got = [a, b] if a is not None and b is not None else []
                if got and got[1] < got[0]:  # a reversed range is the program's error, never "nothing found"
                    problems.append(f"{preview(r, 60)} is a reversed range (it ends before it starts)")
                    continue
            elif isinstance(r, int | float) and not isinstance(r, bool):
                got = [float(r)] if math.isfinite(r) else []
            if not got:
                problems.append(f"{preview(r, 60)} is not a time (finite seconds, or text such as 0:01-0:03)")
            elif any(abs(x) > MAX_TIME_S for x in got):
                problems.append(f"{preview(r, 60)} is beyond any media (more than a week)")
            elif len(got) == 2:
                spans.append((got[0], got[1]))
            else:
                points.append(got[0])
        cites = [make_citation(mod, a, b) for a, b in merge_ranges(spans, None)[:_MAX_RANGES]]
        cites += [make_citation(mod, t) for t in points[: max(0, _MAX_RANGES - len(cites))]]
        return check_durations(cites, self.ctx.durations, self.ctx.config.end_tolerance_s), problems

    async def describe(self, ranges: Any, modality: str, instruction: str) -> str:
        rec = OpRecord(op="describe", inputs={"ranges": _plain(ranges), "modality": str(modality),
                                              "instruction": str(instruction)})
        with self._recording(rec):
            return await self._describe(ranges, str(modality), str(instruction), rec)

    async def _describe(self, ranges: Any, modality: str, instruction: str, rec: OpRecord) -> str:
        mod = normalise_modality(modality)
        if mod is None:
            rec.status, rec.error = "error", f"unknown modality {preview(modality)}"
            return ""
        cites = self._describe_targets(ranges, mod, rec)
        if not cites:
            return ""
        idx = list(range(len(cites)))
        await self._text_channels()
        ev = self.ctx.fitted(await asyncio.to_thread(self.ctx.evidence_for, cites, idx))
        ev_parts = evidence_parts(ev, self.ctx.config.evidence_text or self.executor.needs_evidence_text)
        got = await self._describe_until_verified(ev_parts, [s.label for s in ev.segments], cites, instruction, rec)
        if got is None:
            return ""
        text, status = got
        rec.output, rec.status = text, status
        self.descriptions.append(Description(index=len(self.descriptions) + 1, text=text, modality=mod,
                                             citations=cites, status=status))
        return text

    def _describe_targets(self, ranges: Any, mod: str, rec: OpRecord) -> list[Citation]:
        """The usable citations a ``describe`` call names; none when the call is the program's error
        (a time that is not a time, or times given but none usable) or names nothing (a find that
        found nothing): ``rec`` then says which. Unusable ones beside usable ones are noted."""
        named, unreadable = self._citations(ranges, mod)
        if unreadable:  # a time that is not a time is a malformed call: nothing is described
            rec.status, rec.error = "error", _listed(unreadable)
            return []
        cites = [c for c in named if c.valid]
        rec.citations = [c.raw for c in cites]
        outside = [f"{c.raw}: {c.reason or 'not usable'}" for c in named if not c.valid]
        if not cites:
            # nothing given (a find that found nothing) is "empty"; times given but unusable are the program's error
            rec.status = "error" if outside else "empty"
            rec.error = _listed(outside) if outside else "no time range to describe (nothing found)"
            return []
        rec.notes = [f"left out {x}" for x in outside]
        return cites

    async def _describe_until_verified(self, ev_parts: list[Part], labels: list[str], cites: list[Citation],
                                       instruction: str, rec: OpRecord) -> tuple[str, str] | None:
        """The executor's description of the evidence and its status: asked again (with the rejected
        text and the checker's reason) while the checker says no, up to ``check_retries`` times.
        ``None`` when a call failed or came back empty (``rec`` says so)."""
        prompt = prompts.render("program_describe", instruction=instruction)
        idx = frozenset(range(len(cites)))
        text, status = "", "unchecked"
        previous, reason = "", ""
        for attempt in range(1 + (self.settings.check_retries if self.settings.check and self.checker else 0)):
            if attempt == 0:
                head = prompt
            else:
                head = prompts.render("program_describe_retry", previous=previous, reason=reason or "(none given)",
                                      instruction=instruction)
            req = JudgeRequest(parts=[TextPart(head), *ev_parts], config=self.ctx.config.generate, task="describe",
                               inputs={"instruction": instruction, "evidence": labels, "attempt": attempt})
            got, err = await self._ask(req, rec)
            text = _clean_description(got or "") if err is None else ""
            if not text:
                rec.status, rec.error = "error", err if err is not None else "empty description"
                return None
            if not (self.settings.check and self.checker):
                return text, "unchecked"
            fact = AtomicFact(index=0, sentence_index=0, text=text, citations=cites)
            verdict, call = await ask_entailment(self.pool, self.checker, fact, idx, self.ctx)
            rec.calls += 1
            rec.check.append({"attempt": attempt, "verdict": verdict, "raw": (call.raw or "")[:_RECORDED_RAW] or call.raw,
                              "error": call.error})
            if verdict == "yes":
                return text, "verified"
            if verdict != "no":
                return text, "unchecked"  # the checker could not decide: kept, and said so
            status, previous, reason = "unverified", text, (call.raw or "")[:500]
        return text, status

    # ----- synthesize -----
    async def synthesize(self, instruction: str, options: list[str] | None = None) -> str:
        opts = list(options or self.options)
        rec = OpRecord(op="synthesize", inputs={"instruction": str(instruction), "options": opts})
        with self._recording(rec):
            usable = [d for d in self.descriptions if d.status != "unverified" and d.text]
            listing = "\n".join(f"[{d.index}] ({d.modality}) {d.text}" for d in usable) or "(none)"
            block = ("Options:\n" + "\n".join(f"({chr(65 + i)}) {o}" for i, o in enumerate(opts))) if opts else ""
            req = JudgeRequest(parts=[TextPart(prompts.render("program_synthesize", descriptions=listing,
                                                              question=self.question or "(not given)", options=block,
                                                              instruction=str(instruction)))],
                               config=self.ctx.config.generate, task="synthesize",
                               inputs={"instruction": str(instruction), "descriptions": [d.index for d in usable]})
            text, err = await self._ask(req, rec)
            if err is not None:
                rec.status, rec.error = "error", err
                return ""
            raw = strip_thinking(text or "")[0].strip()
            by_index = {d.index: d for d in usable}
            cited = restore_citations(raw, by_index)
            rec.output = cited
            rec.inputs["used"] = sorted({int(n) for n in re.findall(r"\[(\d+)\]", raw) if int(n) in by_index})
            rec.citations = sorted({c.raw for n in rec.inputs["used"] for c in by_index[n].citations})
            self.conclusions.append((raw, cited))
            return raw


#: a run of ``[n]`` markers ("[1]", "[1][2]", "[1], [3]"); possessive spacing, one way to read
#: each run, so a scan is linear however the text is spaced
_MARKERS = re.compile(r"\[(?:[0-9]{1,9})\](?:[ \t]*+(?:,[ \t]*+)?\[[0-9]{1,9}\])*+")
#: spaces before punctuation, matched only from the start of a run of spaces (linear: a
#: match cannot start again inside the run it failed on)
_SPACE_BEFORE_PUNCT = re.compile(r"(?<![ \t])[ \t]++(?=[.,;:!?])")


def restore_citations(text: str, by_index: dict[int, Description]) -> str:
    """``[n]`` markers → the citation group of description ``n`` (unknown numbers dropped);
    the spaces before a marker and before punctuation it leaves are tidied."""
    out: list[str] = []
    pos = 0
    for m in _MARKERS.finditer(text):
        cites: list[Citation] = []
        for n in (int(x) for x in re.findall(r"[0-9]+", m.group(0))):
            d = by_index.get(n)
            for c in d.citations if d else []:
                if c.key() not in {x.key() for x in cites}:
                    cites.append(c)
        out.append(text[pos : m.start()].rstrip(" \t"))
        out.append(f" {format_group(cites)}" if cites else "")
        pos = m.end()
    out.append(text[pos:])
    return _SPACE_BEFORE_PUNCT.sub("", "".join(out))


def _listed(problems: list[str], most: int = 8) -> str:
    return "; ".join(problems[:most]) + (f" (and {len(problems) - most} more)" if len(problems) > most else "")


def _clean_description(text: str) -> str:
    """A description as one canonical line without the citations the model wrote (murgat attaches
    its own). Removing a group can leave text that reads as a new one; the response check
    (:func:`murgat.programs.runner.forged_citations`) reads the assembled response as ``score`` does and
    refuses it then."""
    from murgat.core.citations import strip_citations

    return canonical_text(strip_citations(canonical_text(text, one_line=True)), one_line=True)


def _plain(v: Any, depth: int = 0) -> Any:
    """``describe``'s ranges as the record keeps them: at most ``_RECORDED_ITEMS`` items of
    ``_RECORDED_CHARS`` characters each, two levels deep, cut with a marker (never a copy of
    whatever the program passed, part by part)."""
    if isinstance(v, TimeRange):
        return [v.start, v.end]
    if isinstance(v, str):
        return v if len(v) <= _RECORDED_CHARS else v[:_RECORDED_CHARS] + f"…[{len(v) - _RECORDED_CHARS} more characters]"
    if isinstance(v, list | tuple) and depth < 2:
        out = [_plain(x, depth + 1) for x in v[:_RECORDED_ITEMS]]
        return out + ([f"…[{len(v) - _RECORDED_ITEMS} more items]"] if len(v) > _RECORDED_ITEMS else [])
    return v if isinstance(v, int | float | bool | type(None)) else preview(v, _RECORDED_CHARS)


def cite_sentences(text: str, citations: list[Citation]) -> str:
    """Every sentence of ``text`` with the citation group inserted before its final punctuation."""
    group = format_group(citations)
    out = []
    for s in split_sentences(text):
        t = s.text.strip()
        end = len(t.rstrip("\"'”’)"))  # the sentence's end: punctuation, then closing quotes or brackets
        stop = len(t[:end].rstrip(".!?…"))  # (read from the end: linear, where a regex search was quadratic)
        out.append(f"{t[:stop]} {group}{t[stop:]}" if stop < end else f"{t} {group}.")
    return " ".join(out)


__all__ = ["Description", "EvidenceConfig", "ExecutorApi", "OpRecord", "OpSettings", "cite_sentences", "is_run_failure",
           "merge_ranges", "restore_citations"]
