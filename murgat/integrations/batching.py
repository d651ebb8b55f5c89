"""The scorer's machinery apart from inspect_ai's objects: the group commit of samples into one
``murgat.score`` call per batch (:class:`Batcher`, see *Batching* in
:mod:`murgat.integrations.inspect_ai`), the record in words (:func:`explain`) and the record kept in
a score (:func:`strip_raw`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from murgat.commands.imports.samples import INPUT, MARKER, write_input
from murgat.core.schema import Item, ResponseResult

#: the run settings a summary needs to be the one ``murgat score`` writes
SUMMARY_OPTIONS = ("precision_mode", "empty_policy", "cluster_by_video", "bootstrap", "seed", "attributed_threshold")
FIGURES = ("murgat_s", "coverage", "precision", "recall", "f1")


def _num(v: Any) -> float:
    return float("nan") if v is None else float(v)


def summary_figures(records: Sequence[ResponseResult], opts: dict[str, Any]) -> dict[str, float]:
    """The run summary of ``records`` under the settings ``opts`` (:data:`SUMMARY_OPTIONS`) as inspect
    metrics: each figure, ``_ci_low``, ``_ci_high`` and ``_n``, plus item counts; an undefined figure is
    NaN (inspect drops ``None``), never 0."""
    from murgat.core.metric import summarize_results

    summary = summarize_results(records, precision_mode=opts.get("precision_mode", "alce"),
                                empty_policy=opts.get("empty_policy", "zero"),
                                cluster_by_video=bool(opts.get("cluster_by_video", False)),
                                n_resamples=int(opts.get("bootstrap", 2000)), seed=int(opts.get("seed", 0)),
                                attributed_threshold=float(opts.get("attributed_threshold", 0.5)))
    out: dict[str, float] = {}
    named = [(m, getattr(summary, m)) for m in FIGURES]
    named += [("accuracy", summary.accuracy), ("saa", summary.attributed_accuracy)]
    for name, iv in named:
        out[name] = _num(iv.value if iv else None)
        out[f"{name}_ci_low"] = _num(iv.ci_low if iv else None)
        out[f"{name}_ci_high"] = _num(iv.ci_high if iv else None)
        out[f"{name}_n"] = float(iv.n if iv else 0)
    out.update(n_items=float(summary.n_items), n_errors=float(summary.n_errors), n_scored=float(summary.n_scored))
    return out


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
        res = score(str(path), judge=self.judge, out=str(self.folder), media_root=self.media_root, **self.options)
        want = {it.id for it in batch}
        return {r["id"]: ResponseResult.model_validate(r) for r in res.iter_records() if r.get("id") in want}
