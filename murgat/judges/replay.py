"""Record and replay judge exchanges (JSONL cassettes) for tests and exact re-runs.

``record`` wraps any judge and appends one line per answered request::

    {"key": "<fingerprint>", "match": {"task": "entail", "inputs": {...}},
     "provider": "gemini", "model": "...", "output": {JudgeOutput}}

The fingerprint is the provider-independent request key (rendered prompt, media digests,
schema, output-affecting settings), so replaying needs the very same request. A line may
instead carry only ``match`` — the stage name and its structured inputs, all of them or
just the ones that identify the request — which lets a person write a readable cassette
by hand. ``replay:PATH`` serves both kinds and raises
:class:`ReplayMiss` on a request it has no answer for: a replayed run never silently asks
anyone else. Every line is checked when the cassette is opened: a line that is not such an
object (no ``key`` or ``match``, a ``match`` without a ``task``, ``inputs`` or ``output`` that
are not objects, an ``output.text`` that is not text, a ``usage`` that is not token counts, a
``blocked`` or ``truncated`` that is not ``true``/``false`` — ``"false"`` as a string once marked
every answer blocked — or bytes that are not UTF-8) is a :class:`ValueError` naming the file, the
line and what is wrong, before any request.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from murgat.core.jsonl import dumps, escape_line, iter_lines, loads_line
from murgat.judges.account import JudgeIdentity
from murgat.judges.base import Judge, RawAnswer
from murgat.judges.cache import request_key
from murgat.judges.types import JudgeOutput, JudgeRequest, Usage, memo_on
from murgat.media import safewrite


class ReplayMiss(RuntimeError):
    """The cassette has no answer for this request."""


def fingerprint(req: JudgeRequest) -> str:
    return request_key("cassette", "", req, {})


def line_problem(rec: Any) -> str | None:
    """What is wrong with one cassette line (parsed JSON), or ``None`` when it can be served."""
    if not isinstance(rec, dict):
        return f"a cassette line is a JSON object, not {type(rec).__name__}"
    if "key" not in rec and "match" not in rec:
        return 'the line has neither "key" nor "match": nothing would ever find it'
    if "key" in rec and not isinstance(rec["key"], str):
        return '"key" must be a string (the request fingerprint written by --record)'
    if "match" in rec:
        m = rec["match"]
        if not isinstance(m, dict):
            return '"match" must be an object: {"task": "entail", "inputs": {...}}'
        if not isinstance(m.get("task"), str) or not m["task"]:
            return '"match" needs a "task" (verify, decompose, entail, generate, …)'
        if not isinstance(m.get("inputs", {}), dict):
            return '"match.inputs" must be an object of input names and values'
    out = rec.get("output", {})
    if not isinstance(out, dict):
        return '"output" must be an object such as {"text": "yes"}'
    if out.get("text") is not None and not isinstance(out["text"], str):
        return f'"output.text" must be a string, not {type(out["text"]).__name__}'
    usage = out.get("usage", {})
    if not isinstance(usage, dict) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                              for v in usage.values()):
        return '"output.usage" must be token counts such as {"input_tokens": 10, "output_tokens": 1}'
    try:
        Usage.model_validate(usage)
    except ValueError as exc:
        return f'"output.usage" is not token counts ({exc.__class__.__name__})'
    if out.get("model") is not None and not isinstance(out["model"], str):
        return '"output.model" must be a string'
    for flag in ("blocked", "truncated"):
        if flag in out and not isinstance(out[flag], bool):
            return f'"output.{flag}" must be true or false, not {json.dumps(out[flag])[:40]}'
    return None


def _cassette_lines(path: Path) -> list[tuple[int, str]]:
    """The cassette's lines; bytes that are not UTF-8 are a ValueError naming the line."""
    try:
        return list(iter_lines(path))
    except UnicodeDecodeError as exc:
        data = path.read_bytes()
        lineno = data[:exc.start].count(b"\n") + 1
        raise ValueError(f"{path}: line {lineno}: not UTF-8 text (byte 0x{data[exc.start]:02x}); "
                         "a cassette is UTF-8 JSONL") from None


def match_key(task: str, inputs: dict[str, Any]) -> str:
    blob = json.dumps({"task": task, "inputs": inputs}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class ReplayJudge(Judge):
    """Serves answers from a cassette.

    ``-J delay_s=0.3`` simulates provider latency; ``-J log=PATH`` appends the fingerprint
    of every answer served (not cache hits), which tests use to prove nothing is asked twice.
    """

    provider = "replay"

    def __init__(self, model: str, options: dict[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(model, options, **kw)
        path = Path(self.options.get("path") or model)
        if not path.exists():
            raise FileNotFoundError(f"replay cassette {path} does not exist")
        self.path = path
        self.delay_s = float(self.options.get("delay_s", 0.0))
        self.by_key: dict[str, dict[str, Any]] = {}
        self.by_match: dict[str, dict[str, Any]] = {}
        self.partial: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        # partial lines indexed by task → one of their inputs → that input's value, so a lookup
        # checks the few lines that can match instead of every line of the task (a cassette
        # of thousands of hand-written lines made each lookup a scan)
        self._partial_index: dict[str, dict[str, dict[str, list[int]]]] = {}
        self._partial_rest: dict[str, list[int]] = {}  # lines with no text input to index by
        for lineno, line in _cassette_lines(path):
            if not line.strip():
                continue
            try:
                rec = loads_line(line)
            except ValueError as exc:
                raise ValueError(f"{path}: line {lineno}: not valid JSON ({exc})") from exc
            problem = line_problem(rec)
            if problem:
                raise ValueError(f"{path}: line {lineno}: {problem}")
            if "key" in rec:
                self.by_key[rec["key"]] = rec
            if "match" in rec:
                m = rec["match"]
                task, inputs = m["task"], m.get("inputs", {})
                self.by_match[match_key(task, inputs)] = rec
                lines = self.partial.setdefault(task, [])
                lines.append((inputs, rec))
                texts = sorted(k for k, v in inputs.items() if isinstance(v, str))
                if texts:
                    by_value = self._partial_index.setdefault(task, {}).setdefault(texts[0], {})
                    by_value.setdefault(inputs[texts[0]], []).append(len(lines) - 1)
                else:
                    self._partial_rest.setdefault(task, []).append(len(lines) - 1)
        self.served = 0

    def lookup(self, req: JudgeRequest) -> dict[str, Any]:
        """The cassette line answering ``req`` (found once per request: generate and _call both ask)."""
        return memo_on(req, f"replay:{id(self)}", lambda: self._find(req))

    def _find(self, req: JudgeRequest) -> dict[str, Any]:
        rec = self.by_key.get(fingerprint(req)) or self.by_match.get(match_key(req.task, req.inputs))
        if rec is None:
            # hand-written lines may name only some inputs (e.g. the sentence, not its context);
            # the first such line in the file that fits wins
            lines = self.partial.get(req.task, [])
            index = self._partial_index.get(req.task, {})
            cands = [i for name, by_value in index.items() if isinstance(req.inputs.get(name), str)
                     for i in by_value.get(req.inputs[name], [])]
            for i in sorted(cands + self._partial_rest.get(req.task, [])):
                inputs, cand = lines[i]
                if all(req.inputs.get(k) == v for k, v in inputs.items()):
                    rec = cand
                    break
        if rec is None:
            raise ReplayMiss(
                f"{self.path}: no recorded answer for task {req.task!r} with inputs "
                f"{json.dumps(req.inputs, ensure_ascii=False)[:300]}"
            )
        return rec

    async def _call(self, req: JudgeRequest) -> RawAnswer:
        rec = self.lookup(req)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        out = rec.get("output", {})
        self.served += 1
        log = self.options.get("log")
        if log:  # one line per answer actually served (cache hits never reach _call)
            safewrite.append_bytes(log, (fingerprint(req) + "\n").encode())  # never through a link out
        return RawAnswer(text=out.get("text"), usage=Usage.model_validate(out.get("usage", {})),
                         raw=out.get("raw"), blocked=bool(out.get("blocked")), model=out.get("model"),
                         truncated=bool(out.get("truncated")))

    async def generate(self, req: JudgeRequest, materialize: Any = None) -> JudgeOutput:
        self.lookup(req)  # a miss is loud, never retried or turned into an error record
        return await super().generate(req, materialize)


class RecordingJudge(Judge):
    """Wraps ``inner`` and appends every successful exchange to a cassette."""

    def __init__(self, inner: Judge, path: str | Path) -> None:
        super().__init__(inner.model, inner.options, cache=None)
        self.inner = inner
        self.provider = inner.provider  # type: ignore[misc]
        self.needs_evidence_text = inner.needs_evidence_text  # type: ignore[misc]
        self.tasks = inner.tasks  # type: ignore[misc]
        self.stats = inner.stats
        self.path = Path(path)  # claimed by the command first (murgat.engine.outputs, role "cassette")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    async def _call(self, req: JudgeRequest) -> RawAnswer:  # pragma: no cover - generate is overridden
        raise NotImplementedError

    async def generate(self, req: JudgeRequest, materialize: Any = None) -> JudgeOutput:
        out = await self.inner.generate(req, materialize)
        if out.error is None:
            output = out.model_dump(include={"text", "usage", "model", "blocked"})
            if out.truncated:  # written only when true: lines of answers that were not cut stay as they were
                output["truncated"] = True
            rec = {"key": fingerprint(req), "match": {"task": req.task, "inputs": req.inputs},
                   "provider": self.inner.provider, "model": self.inner.model, "output": output}
            with self._lock:
                safewrite.append_bytes(self.path, (escape_line(dumps(rec)) + "\n").encode("utf-8"))
        return out

    def key(self, req: JudgeRequest) -> str:
        return self.inner.key(req)

    def identity(self) -> JudgeIdentity:
        return self.inner.identity()

    async def aclose(self) -> None:
        await self.inner.aclose()
