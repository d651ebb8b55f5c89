"""The scorer's machinery apart from inspect_ai's objects: the group commit of samples into one
``murgat.score`` call per batch (:class:`Batcher`, see *Batching* in
:mod:`murgat.integrations.inspect_ai`), the log's metrics (:func:`metric_values`), the record in words
(:func:`explain`) and the record kept in a score (:func:`strip_raw`)."""

from __future__ import annotations

import contextlib
import io
import logging
import math
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from murgat.commands.imports.samples import INPUT, MARKER, write_input
from murgat.core.jsonl import split_lines
from murgat.core.schema import Item, ResponseResult

#: the run settings a summary needs to be the one ``murgat score`` writes
SUMMARY_OPTIONS = ("precision_mode", "empty_policy", "cluster_by_video", "bootstrap", "seed", "attributed_threshold")


#: the log's metrics and the run summary's figure each one is (names that say what they are: the answer's
#: accuracy is not MURGAT-S's)
METRICS = {"murgat_s": "murgat_s", "coverage": "coverage", "precision": "precision", "recall": "recall", "f1": "f1",
           "answer_accuracy": "accuracy", "attributed_accuracy": "attributed_accuracy"}


def _num(v: float | None) -> float:
    return float("nan") if v is None else float(v)


def stderr_of(values: Sequence[float], clusters: Sequence[str] | None = None) -> float | None:
    """The standard error of the mean of ``values`` (sample standard deviation over √n, as inspect's
    ``stderr()``); with ``clusters``, the cluster-robust one (items of one video are not independent).
    ``None`` below two values (or two clusters): a spread of one value is undefined, not 0."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    if clusters is None:
        return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)
    sums: dict[str, float] = {}
    for v, c in zip(values, clusters, strict=True):
        sums[c] = sums.get(c, 0.0) + (v - mean)
    g = len(sums)
    if g < 2:
        return None
    return math.sqrt(g / (g - 1) * sum(x * x for x in sums.values())) / n


def metric_values(records: Sequence[ResponseResult], opts: dict[str, Any]) -> dict[str, float]:
    """The log's metrics of ``records`` under the run settings ``opts`` (:data:`SUMMARY_OPTIONS`):
    murgat's own run summary (:func:`murgat.core.metric.summarize_results`, the figures of
    ``summary.json``) for each of :data:`METRICS`, plus ``murgat_s_stderr`` over the same items as
    the MURGAT-S mean. An undefined figure (no judged item, no gold answer) is NaN, never 0; the
    counts and the bootstrap CIs stay in the run folder's ``summary.json``."""
    from murgat.core.metric import summarize_results

    summary = summarize_results(records, precision_mode=opts.get("precision_mode", "alce"),
                                empty_policy=opts.get("empty_policy", "zero"),
                                cluster_by_video=bool(opts.get("cluster_by_video", False)),
                                n_resamples=int(opts.get("bootstrap", 2000)), seed=int(opts.get("seed", 0)),
                                attributed_threshold=float(opts.get("attributed_threshold", 0.5)))
    out = {name: _num(iv.value if (iv := getattr(summary, figure)) else None) for name, figure in METRICS.items()}
    rows = sorted((r.id, r.scores.murgat_s, r.video or r.id) for r in records
                  if r.error is None and r.scores.murgat_s is not None)
    clusters = [c for _, _, c in rows] if opts.get("cluster_by_video") else None
    spread = _num(stderr_of([float(v) for _, v, _ in rows if v is not None], clusters))
    return {"murgat_s": out.pop("murgat_s"), "murgat_s_stderr": spread, **out}


def strip_raw(rec: dict[str, Any]) -> dict[str, Any]:
    """A record without the judges' words (``verify_raw``, ``decompose_raw``, each call's ``raw``):
    the run folder keeps them; the log keeps the verdicts."""
    for s in rec.get("sentences", []):
        s.pop("verify_raw", None)
        s.pop("decompose_raw", None)
        for v in s.get("verdicts", []):
            for c in v.get("calls", []):
                c.pop("raw", None)
    return rec


def _f(v: float | None) -> str:
    return "–" if v is None else f"{v:.3f}"


def explain(rec: ResponseResult) -> str:
    """The record in words: the figures, then every sentence and fact with citations and verdicts."""
    if rec.error:
        return f"error: {rec.error}"
    sc = rec.scores
    answer = rec.predicted_option or "none read"
    verdict = "" if rec.correct is None else (" (correct)" if rec.correct else " (wrong)")
    lines = [f"MURGAT-S {_f(sc.murgat_s)} = coverage {_f(sc.coverage)} × F1 {_f(sc.f1)} (precision {_f(sc.precision)}, "
             f"recall {_f(sc.recall)}); case {rec.case}; answer {answer}{verdict}"]
    for s in rec.sentences:
        cites = "; ".join(c.raw for c in s.sentence.citations)
        kind = "verifiable" if s.verifiable else ("not verifiable" if s.verifiable is False else
                                                  f"verifiability {s.verify_verdict or 'undetermined'}")
        lines.append(f"s{s.sentence.index} [{kind}{', cites ' + cites if cites else ''}] {s.sentence.text}")
        verdicts = {v.fact_index: v for v in s.verdicts}
        for fact in s.facts:
            v = verdicts.get(fact.index)
            fc = "; ".join(c.raw for c in fact.citations) or "no citation"
            if v is None:
                lines.append(f"  f{fact.index} {fact.text} ({fc}): not judged")
            elif fact.only_invalid_citations:
                # never put to a judge: not the judge's "no" (it counts as not entailed, recall 0)
                lines.append(f"  f{fact.index} {fact.text} ({fc}): invalid citation, no judge asked; recall {_f(v.recall)}")
            elif v.status == "undetermined":
                lines.append(f"  f{fact.index} {fact.text} ({fc}): undetermined — {v.reason or v.joint}")
            else:
                lines.append(f"  f{fact.index} {fact.text} ({fc}): joint {v.joint}, recall {_f(v.recall)}, "
                             f"precision {_f(v.precision)}")
    return "\n".join(lines)


class _PerThreadStderr(io.TextIOBase):
    """``sys.stderr`` while batches run: what a batch's thread writes goes to the lines it keeps; every
    other thread (inspect's display, the event loop) writes to the real stream as before."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.kept: dict[int, list[str]] = {}

    def write(self, text: str) -> int:
        buf = self.kept.get(threading.get_ident())
        if buf is None:
            return int(self.real.write(text))
        buf.append(text)
        return len(text)

    def flush(self) -> None:
        self.real.flush()


_STDERR_LOCK = threading.Lock()
_LOG = logging.getLogger("murgat.inspect")


@contextlib.contextmanager
def inner_lines() -> Iterator[None]:
    """A batch's ``murgat score`` lines (stage lines, its outcome: "FAILED: 1 of 1 item(s) undetermined"
    is about one batch, not the eval) kept off the terminal: they go to the log as INFO records (inspect
    records them in the sample's transcript); each sample's own outcome is its score."""
    me = threading.get_ident()
    with _STDERR_LOCK:
        proxy = sys.stderr if isinstance(sys.stderr, _PerThreadStderr) else _PerThreadStderr(sys.stderr)
        sys.stderr = proxy
        proxy.kept[me] = []
    try:
        yield
    finally:
        with _STDERR_LOCK:
            lines = split_lines("".join(proxy.kept.pop(me, [])))  # at "\n" only: U+2028 in a line stays in it
            if not proxy.kept and sys.stderr is proxy:
                sys.stderr = proxy.real
        for line in lines:
            if line.strip():
                _LOG.info("murgat score (scorer batch): %s", line)


@dataclass
class Slot:
    item: Item
    done: bool = False
    record: ResponseResult | None = None
    error: BaseException | None = None


@dataclass
class Batcher:
    """One run folder's group commit (see the module docstring, *Batching*)."""

    folder: Path
    media_root: str | None
    judge: str
    options: dict[str, Any]
    wait: float
    made_by: dict[str, Any]
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    waiting: list[Slot] = field(default_factory=list)
    known: dict[str, Item] | None = None

    async def score(self, item: Item) -> ResponseResult:
        slot = Slot(item)
        self.waiting.append(slot)
        async with self.lock:
            if not slot.done:
                await anyio.sleep(self.wait)
                batch, self.waiting = self.waiting, []
                try:
                    got = await anyio.to_thread.run_sync(self._run, [s.item for s in batch])
                except BaseException as exc:
                    for s in batch:
                        s.error, s.done = exc, True
                else:
                    for s in batch:
                        s.record, s.done = got.get(s.item.id), True
        if slot.error is not None:
            raise slot.error
        if slot.record is None:
            raise RuntimeError(f"item {item.id}: murgat score left no record in {self.folder}")
        return slot.record

    def _run(self, batch: Sequence[Item]) -> dict[str, ResponseResult]:
        from murgat.api import score
        from murgat.core.inputs import iter_items

        if self.known is None:  # a folder this scorer wrote before (a rerun of the eval): keep its items
            prior = self.folder / INPUT
            self.known = {it.id: it for it in iter_items(prior)} if prior.exists() and (self.folder / MARKER).exists() \
                else {}
        for it in batch:
            self.known[it.id] = it
        path = write_input(self.folder, self.known.values(), self.made_by)
        with inner_lines():
            res = score(str(path), judge=self.judge, out=str(self.folder), media_root=self.media_root, quiet=True,
                        **self.options)
        want = {it.id for it in batch}
        return {r["id"]: ResponseResult.model_validate(r) for r in res.iter_records() if r.get("id") in want}
