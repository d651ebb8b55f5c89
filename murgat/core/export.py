"""A score run as flat tables: one row per item, per sentence or per fact.

``results.jsonl`` nests facts inside sentences inside items, which is right for resuming and for
the viewer but awkward for analysis; these rows have one level each and snake_case column names
that read as pandas columns as they are (``pd.read_csv(...)["murgat_s"]``). Every level repeats
the item ``id`` (and sentence/fact indices), so the tables join on them.

Pure: results in, rows out, and writers for the three formats. Reading the run folder is the
command's job (``murgat export``, :mod:`murgat.commands.export.cli`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from murgat.core.schema import AtomicFact, Citation, FactVerdict, ResponseResult

Level = Literal["item", "sentence", "fact", "modality"]
Format = Literal["csv", "parquet", "jsonl"]
LEVELS: tuple[str, ...] = ("item", "sentence", "fact", "modality")
FORMATS: tuple[str, ...] = ("csv", "parquet", "jsonl")

ITEM_COLUMNS = ("id", "case", "error", "coverage", "precision", "recall", "f1", "murgat_s", "answer", "gold", "correct",
                "answer_problem", "n_sentences", "n_verifiable", "n_verifiable_cited", "n_verify_undetermined", "n_facts",
                "n_facts_judged", "n_facts_undetermined", "n_judge_errors", "judge_calls", "cache_hits", "media",
                "question")
SENTENCE_COLUMNS = ("id", "sentence_index", "text", "verifiable", "verify_verdict", "citations", "n_citations",
                    "n_invalid_citations", "invalid_reasons", "time_like", "n_facts")
MODALITY_COLUMNS = ("modality", "n_facts", "n_undetermined", "precision", "recall", "f1")
FACT_COLUMNS = ("id", "sentence_index", "fact_index", "text", "citations", "modalities", "n_invalid_citations",
                "status", "joint", "recall", "precision", "reason", "judge_answer", "judge_calls")


class ExportError(ValueError):
    """The export cannot be written as asked (e.g. parquet without pyarrow); the message says why."""


def _cites(cs: list[Citation]) -> str:
    # one cell: the citations as written, "; "-separated (CSV has no lists)
    return "; ".join(c.raw for c in cs)


def item_rows(results: Iterable[ResponseResult]) -> Iterator[dict[str, Any]]:
    for r in results:
        s = r.scores
        yield {"id": r.id, "case": r.case, "error": r.error, "coverage": s.coverage, "precision": s.precision,
               "recall": s.recall, "f1": s.f1, "murgat_s": s.murgat_s, "answer": r.predicted_option, "gold": r.gold,
               "correct": r.correct, "answer_problem": r.answer_problem, "n_sentences": r.n_sentences, "n_verifiable": r.n_verifiable,
               "n_verifiable_cited": r.n_verifiable_cited, "n_verify_undetermined": r.n_verify_undetermined,
               "n_facts": r.n_facts, "n_facts_judged": r.n_facts_judged,
               "n_facts_undetermined": r.n_facts_undetermined, "n_judge_errors": r.n_judge_errors,
               "judge_calls": r.judge_calls, "cache_hits": r.cache_hits, "media": r.video,
               "question": r.meta.get("question")}


def sentence_rows(results: Iterable[ResponseResult]) -> Iterator[dict[str, Any]]:
    for r in results:
        for sr in r.sentences:
            cs = sr.sentence.citations
            bad = [c for c in cs if not c.valid]
            yield {"id": r.id, "sentence_index": sr.sentence.index, "text": sr.sentence.text,
                   "verifiable": sr.verifiable, "verify_verdict": sr.verify_verdict, "citations": _cites(cs),
                   "n_citations": len(cs), "n_invalid_citations": len(bad),
                   "invalid_reasons": "; ".join(c.reason or "" for c in bad) or None,
                   # time-like text the grammar did not read as a citation, with the nearest accepted spelling
                   "time_like": "; ".join(t.text + (f" (nearest: {t.nearest})" if t.nearest else "")
                                          for t in sr.sentence.time_like) or None,
                   "n_facts": len(sr.facts)}


#: how the score command marks a fact left unjudged by a request cap (murgat.pipeline.stages.OVER_LIMIT) and
#: the stages of its wrong-box check (BOX_CHECK_STAGES), which never decide a fact; restated here because
#: the core cannot import the score command (tests/commands/export/test_export.py checks they agree)
OVER_LIMIT = "over limit: "
BOX_CHECK_STAGES = ("box_full", "box_crop")
#: fact statuses of the export, in the order the causes are told apart
FACT_STATUSES = ("judged", "invalid_citation", "abstained", "unparseable", "error", "over_limit",
                 "decomposition_failed", "undetermined", "not_judged")


def fact_status(fact: AtomicFact, verdict: FactVerdict | None) -> str:
    """What happened to one fact, in one word (:data:`FACT_STATUSES`).

    ``judged``: the judge answered every question the precision mode needs. ``invalid_citation``:
    no citation of the fact is valid, so nothing was asked and it counts as not entailed (recall 0
    by the metric's rule, zero judge calls) — never mistaken for the judge's "no". ``abstained`` /
    ``unparseable`` / ``error``: a needed question was answered ``unknown``, with text that could
    not be read, or not at all (a provider or evidence failure; the worst cause is named).
    ``over_limit``: a request cap kept it from the judge. ``decomposition_failed``: the sentence
    could not be split and stands as one undecided fact. ``not_judged``: no verdict recorded."""
    if verdict is None:
        return "not_judged"
    if verdict.status == "judged":
        return "invalid_citation" if fact.only_invalid_citations else "judged"
    reason = verdict.reason or ""
    if reason.startswith(OVER_LIMIT):
        return "over_limit"
    if reason.startswith("decomposition:"):
        return "decomposition_failed"
    asked: set[str | None] = {c.verdict for c in verdict.calls if c.stage not in BOX_CHECK_STAGES}
    for cause, status in (("error", "error"), ("unparseable", "unparseable"), ("unknown", "abstained")):
        if cause in asked:
            return status
    return "undetermined"


def judge_answer(fact: AtomicFact, verdict: FactVerdict | None) -> str | None:
    """The judge's words on the fact: the answer to the joint question (all valid citations), else
    the first entailment answer; the error text when it did not answer."""
    if verdict is None:
        return None
    calls = [c for c in verdict.calls if c.stage not in BOX_CHECK_STAGES]
    joint = sorted(i for i, c in enumerate(fact.citations) if c.valid)
    call = next((c for c in calls if sorted(c.evidence) == joint), calls[0] if calls else None)
    if call is None:
        return None
    return call.raw if call.raw is not None else call.error


def fact_rows(results: Iterable[ResponseResult]) -> Iterator[dict[str, Any]]:
    for r in results:
        for sr in r.sentences:
            verdicts = {v.fact_index: v for v in sr.verdicts}
            for f in sr.facts:
                v = verdicts.get(f.index)
                bad = [c for c in f.citations if not c.valid]
                status = fact_status(f, v)
                reason = v.reason if v else None
                if status == "invalid_citation" and not reason:
                    reason = "no valid citation: " + "; ".join(c.reason or c.raw for c in bad)
                yield {"id": r.id, "sentence_index": sr.sentence.index, "fact_index": f.index, "text": f.text,
                       "citations": _cites(f.citations),
                       "modalities": "+".join(sorted({c.modality for c in f.citations if c.modality})) or None,
                       "n_invalid_citations": len(bad), "status": status,
                       # no judge was asked: the joint question has no answer, and "no" would be the judge's word
                       "joint": "invalid citation" if status == "invalid_citation" else (v.joint if v else None),
                       "recall": v.recall if v else None, "precision": v.precision if v else None,
                       "reason": reason, "judge_answer": judge_answer(f, v),
                       "judge_calls": len(v.calls) if v else 0}


def modality_rows(results: Iterable[ResponseResult]) -> Iterator[dict[str, Any]]:
    """One row per modality of the facts' citations and one for all facts (``summary.json``'s
    ``by_modality``, :func:`murgat.core.metric.modality_figures`): a run-level table, not joined on ids."""
    from murgat.core.metric import MODALITY_GROUPS, modality_figures

    figs = modality_figures(results)
    for g in (*MODALITY_GROUPS, "all"):
        yield {"modality": g, **figs[g]}


ROWS = {"item": (item_rows, ITEM_COLUMNS), "sentence": (sentence_rows, SENTENCE_COLUMNS),
        "fact": (fact_rows, FACT_COLUMNS), "modality": (modality_rows, MODALITY_COLUMNS)}


#: first characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection": = + - @,
#: and tab / carriage return, which some programs skip before looking for one)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


#: text that is a plain decimal number ("-1", "+0.5", "-2e3"): a spreadsheet reads it as that number
#: and runs nothing, so it keeps its value (an id or an answer "-1" is not turned into the text "'-1")
PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """A CSV cell that no spreadsheet runs: text starting like a formula gets a leading ``'`` (what
    OWASP recommends; the quote shows in the cell and the formula is plain text). Numbers are kept
    as they are, so a negative figure stays a number — and so is text that is only a number
    (``"-1"``), which no spreadsheet evaluates as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


class Sink(Protocol):
    """Where a table goes: anything that makes a file from a function filling a binary file
    (:class:`murgat.engine.outputs.Claim`: atomically, or streamed into ``/dev/stdout``)."""

    def write(self, fill: Callable[[IO[bytes]], object]) -> Path: ...


def write_rows(rows: Iterable[dict[str, Any]], columns: tuple[str, ...], out: Sink, fmt: str) -> int:
    """Write ``rows`` to ``out`` as ``fmt``; returns the number of rows written."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "parquet":
        try:
            import pandas as pd
            import pyarrow  # noqa: F401  (pandas' parquet engine; only checked for a clear message)
        except ImportError as exc:
            raise ExportError(f"--format parquet needs pandas and pyarrow ({exc.name} is not installed): "
                              "pip install pandas pyarrow, or use --format csv or jsonl") from exc
        frame = pd.DataFrame(list(rows), columns=list(columns))
        out.write(lambda f: frame.to_parquet(f, index=False))
        return len(frame)
    n = 0

    def text(f: IO[bytes]) -> None:
        nonlocal n
        fh = io.TextIOWrapper(f, encoding="utf-8", newline="")
        try:
            if fmt == "csv":
                w = csv.DictWriter(fh, fieldnames=list(columns))
                w.writeheader()
                for row in rows:
                    w.writerow({k: csv_cell(v) for k, v in row.items()})
                    n += 1
            else:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                    n += 1
            fh.flush()
        finally:
            fh.detach()  # the file is the sink's to close

    out.write(text)
    return n


def export_results(results: Iterable[ResponseResult], out: Sink, fmt: str = "csv", level: str = "item") -> int:
    """Flatten ``results`` at ``level`` and write them to ``out`` as ``fmt``; returns the row count."""
    if level not in ROWS:
        raise ExportError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")
    make, columns = ROWS[level]
    return write_rows(make(results), columns, out, fmt)
