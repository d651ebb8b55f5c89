"""A score run as flat tables: one row per item, per sentence or per fact.

``results.jsonl`` nests facts inside sentences inside items, which is right for resuming and for
the viewer but awkward for analysis; these rows have one level each and snake_case column names
that read as pandas columns as they are (``pd.read_csv(...)["murgat_s"]``). Every level repeats
the item ``id`` (and sentence/fact indices), so the tables join on them.

Pure: results in, rows out, and writers for the three formats. Reading the run folder is the
command's job (``murgat export``, :mod:`murgat.export_cli`).
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from murgat.schema import Citation, ResponseResult

Level = Literal["item", "sentence", "fact"]
Format = Literal["csv", "parquet", "jsonl"]
LEVELS: tuple[str, ...] = ("item", "sentence", "fact")
FORMATS: tuple[str, ...] = ("csv", "parquet", "jsonl")

ITEM_COLUMNS = ("id", "case", "error", "coverage", "precision", "recall", "f1", "murgat_s", "answer", "gold", "correct",
                "n_sentences", "n_verifiable", "n_verifiable_cited", "n_verify_undetermined", "n_facts",
                "n_facts_judged", "n_facts_undetermined", "n_judge_errors", "judge_calls", "cache_hits", "media",
                "question")
SENTENCE_COLUMNS = ("id", "sentence_index", "text", "verifiable", "verify_verdict", "citations", "n_citations",
                    "n_invalid_citations", "invalid_reasons", "n_facts")
FACT_COLUMNS = ("id", "sentence_index", "fact_index", "text", "citations", "modalities", "status", "joint", "recall",
                "precision", "reason")


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
               "correct": r.correct, "n_sentences": r.n_sentences, "n_verifiable": r.n_verifiable,
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
                   "invalid_reasons": "; ".join(c.reason or "" for c in bad) or None, "n_facts": len(sr.facts)}


def fact_rows(results: Iterable[ResponseResult]) -> Iterator[dict[str, Any]]:
    for r in results:
        for sr in r.sentences:
            verdicts = {v.fact_index: v for v in sr.verdicts}
            for f in sr.facts:
                v = verdicts.get(f.index)
                yield {"id": r.id, "sentence_index": sr.sentence.index, "fact_index": f.index, "text": f.text,
                       "citations": _cites(f.citations),
                       "modalities": "+".join(sorted({c.modality for c in f.citations})) or None,
                       # a fact without a verdict was never judged (e.g. no valid citation): say so, not "judged"
                       "status": v.status if v else "not_judged", "joint": v.joint if v else None,
                       "recall": v.recall if v else None, "precision": v.precision if v else None,
                       "reason": v.reason if v else None}


ROWS = {"item": (item_rows, ITEM_COLUMNS), "sentence": (sentence_rows, SENTENCE_COLUMNS),
        "fact": (fact_rows, FACT_COLUMNS)}


def _atomic(out: Path, write: Any, binary: bool = False) -> None:
    """Write through a temporary file in the same folder: an interrupted export leaves no half file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_rows(rows: Iterable[dict[str, Any]], columns: tuple[str, ...], out: Path, fmt: str) -> int:
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
        _atomic(out, lambda p: frame.to_parquet(p, index=False))
        return len(frame)
    n = 0

    def text(p: Path) -> None:
        nonlocal n
        with p.open("w", encoding="utf-8", newline="") as fh:
            if fmt == "csv":
                w = csv.DictWriter(fh, fieldnames=list(columns))
                w.writeheader()
                for row in rows:
                    w.writerow(row)
                    n += 1
            else:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                    n += 1

    _atomic(out, text)
    return n


def export_results(results: Iterable[ResponseResult], out: Path, fmt: str = "csv", level: str = "item") -> int:
    """Flatten ``results`` at ``level`` and write them to ``out`` as ``fmt``; returns the row count."""
    if level not in ROWS:
        raise ExportError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")
    make, columns = ROWS[level]
    return write_rows(make(results), columns, out, fmt)
