"""Importers from the official annotation files of NExT-GQA, CiteVQA and ReXTime to gold JSONL.

Each reads the dataset's own files unchanged and returns :class:`~murgat.core.gold.GoldItem`
objects; every problem names the file, the row or item, and the field.

NExT-GQA (``datasets/nextgqa/`` of its repository)
    ``gsub_{split}.json`` = ``{video_id: {duration, fps, location: {qid: [[start, end], ...]}}}``
    in seconds, and ``{split}.csv`` with ``video_id, question, answer`` (the right option's
    text), ``qid, type, a0 … a4``. Ids become ``{video_id}_{qid}``, as the official scorer
    keys its predictions. Several segments of one question are alternatives (``need="any"``),
    which is what the scorer's maximum over segments means. ``map_vid_vidorID.json`` (optional)
    turns a video id into its VidOR path, kept as ``video``.
CiteVQA
    A JSON list or JSONL of items whose gold answer carries inline tags
    ``<bbox page="p" x1=".." y1=".." x2=".." y2=".." />`` (0–1000 page coordinates, pages
    from 1, ``doc="d"`` for multi-document items). Each tag is one crucial page item with
    its box; the answer text is the answer with the tags removed.
ReXTime
    A JSON list or JSONL with ``relevant_windows`` ([[start, end], …], seconds), ``ans``
    (option letter or index), ``options`` (or ``choices``), ``duration``.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from murgat.core.gold import GoldFormatError, GoldItem, bbox_tags
from murgat.engine.outputs import Claim, claim_output

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _load_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise GoldFormatError(f"{path}: no such {what} file")
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except ValueError as exc:
        raise GoldFormatError(f"{path}: not JSON ({exc})") from None


def _records(path: Path, what: str) -> list[tuple[str, dict[str, Any]]]:
    """``(where, record)`` from a JSON list, a JSON object of records, or JSONL."""
    if not path.is_file():
        raise GoldFormatError(f"{path}: no such {what} file")
    text = path.read_text(encoding="utf-8-sig")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
        out = []
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                out.append((f"{path}: line {n}", json.loads(line)))
            except ValueError as exc:
                raise GoldFormatError(f"{path}: line {n}: not JSON ({exc})") from None
    else:
        if isinstance(data, dict) and not any(isinstance(v, dict) for v in data.values()):
            data = [data]
        if isinstance(data, dict):
            out = [(f"{path}: item {k!r}", {"id": k, **v}) for k, v in data.items()]
        elif isinstance(data, list):
            out = [(f"{path}: item {i}", r) for i, r in enumerate(data)]
        else:
            raise GoldFormatError(f"{path}: expected a list of items, a JSON object of items or JSONL")
    for where, r in out:
        if not isinstance(r, dict):
            raise GoldFormatError(f"{where}: an item must be a JSON object, not {type(r).__name__}")
    return out


def _item(where: str, **fields: Any) -> GoldItem:
    try:
        return GoldItem(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise GoldFormatError(f"{where}: {loc}: {first['msg']}") from None


def _seconds(value: Any, where: str) -> float:
    """A time in seconds from an annotation file: a finite number (or numeric text), else a
    :class:`GoldFormatError` naming the place and the value."""
    import math

    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise GoldFormatError(f"{where}: {value!r} is not a number of seconds")
    try:
        x = float(value)
    except ValueError:
        raise GoldFormatError(f"{where}: {value!r} is not a number of seconds") from None
    if not math.isfinite(x):
        raise GoldFormatError(f"{where}: {value!r} is not a finite number of seconds")
    return x


def _spans(segs: list[Any], where: str) -> list[dict[str, Any]]:
    return [{"modality": "visual", "start": _seconds(a, f"{where}, segment {k} start"),
             "end": _seconds(b, f"{where}, segment {k} end")} for k, (a, b) in enumerate(segs)]


def _first(rec: dict[str, Any], names: tuple[str, ...]) -> Any:
    for n in names:
        if rec.get(n) is not None:
            return rec[n]
    return None


def _record_id(rec: dict[str, Any], names: tuple[str, ...], where: str) -> Any:
    """A record's id under the first of ``names`` it has; a named error when it has none (the
    message names the first two, the ones the format's documents use)."""
    qid = _first(rec, names)
    if qid is None:
        raise GoldFormatError(f"{where}: no '{names[0]}' (or '{names[1]}')")
    return qid


# ---------------------------------------------------------------- NExT-GQA


def import_nextgqa(gsub: str | Path, qa: str | Path, vid_map: str | Path | None = None) -> list[GoldItem]:
    """Gold items for every question of ``qa`` (csv) with a location in ``gsub``.

    Questions of the csv without a location are left out (the official scorer never sees
    them); locations without a csv row are kept without an answer.
    """
    gsub_p, qa_p = Path(gsub), Path(qa)
    ground = _load_json(gsub_p, "gsub")
    if not isinstance(ground, dict):
        raise GoldFormatError(f"{gsub_p}: expected {{video_id: {{duration, fps, location}}}}")
    mapping = _load_json(Path(vid_map), "video map") if vid_map else {}
    if not qa_p.is_file():
        raise GoldFormatError(f"{qa_p}: no such QA csv file")
    rows: dict[str, tuple[int, dict[str, str]]] = {}
    with qa_p.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        need = {"video_id", "qid", "answer"}
        if not need <= set(reader.fieldnames or []):
            raise GoldFormatError(f"{qa_p}: the csv needs columns {sorted(need)}; it has {reader.fieldnames}")
        for n, row in enumerate(reader, 2):
            rows[f"{row['video_id']}_{row['qid']}"] = (n, row)
    items: list[GoldItem] = []
    for vid, anno in ground.items():
        where_v = f"{gsub_p}: video {vid}"
        if not isinstance(anno, dict) or not isinstance(anno.get("location"), dict):
            raise GoldFormatError(f"{where_v}: needs a 'location' object")
        for qid, segs in anno["location"].items():
            key = f"{vid}_{qid}"
            where = f"{where_v}, question {qid}"
            if not isinstance(segs, list) or not all(isinstance(s, list | tuple) and len(s) == 2 for s in segs):
                raise GoldFormatError(f"{where}: location must be a list of [start, end] pairs")
            evidence = _spans(segs, where)
            answer = question = qtype = None
            if key in rows:
                n, row = rows[key]
                choices = [row[f"a{i}"] for i in range(5) if row.get(f"a{i}") is not None]
                index = None
                if row["answer"] in choices:
                    index = choices.index(row["answer"])
                elif choices:
                    raise GoldFormatError(f"{qa_p}: line {n}: answer {row['answer']!r} is none of the options a0-a4")
                answer = {"text": row["answer"], "choices": choices or None, "index": index}
                question, qtype = row.get("question"), row.get("type")
            video = mapping.get(str(vid)) if isinstance(mapping, dict) else None
            items.append(_item(where, id=key, video=str(video or vid), duration=anno.get("duration"),
                               fps=anno.get("fps"), question=question, question_type=qtype, answer=answer,
                               need="any", evidence=evidence, source="nextgqa"))
    return items


# ---------------------------------------------------------------- CiteVQA


def import_citevqa(path: str | Path) -> list[GoldItem]:
    """Gold items from CiteVQA items (fields ``id``/``question_id``, ``question``, ``answer``/``gold_answer``)."""
    out: list[GoldItem] = []
    for where, rec in _records(Path(path), "CiteVQA items"):
        qid = _record_id(rec, ("id", "question_id", "qid", "uid"), where)
        ans = _first(rec, ("answer", "gold_answer", "gt_answer"))
        if not isinstance(ans, str):
            raise GoldFormatError(f"{where}: 'answer' must be the gold answer text with <bbox> tags")
        evidence, _, text = bbox_tags(ans, where)
        doc = _first(rec, ("doc", "doc_id", "document", "image"))
        out.append(_item(where, id=str(qid), video=str(doc) if isinstance(doc, str | int) else None,
                         question=rec.get("question"), answer={"text": text}, need="all",
                         evidence=[e.model_dump() for e in evidence], source="citevqa"))
    return out


# ---------------------------------------------------------------- ReXTime


def _answer_index(ans: Any, n: int, where: str) -> int:
    if isinstance(ans, bool):
        raise GoldFormatError(f"{where}: 'ans' must be an option letter or index")
    if isinstance(ans, int):
        idx = ans
    elif isinstance(ans, str) and ans.strip().strip("()").upper() in LETTERS[:max(n, 1)] and len(ans.strip().strip("()")) == 1:
        idx = LETTERS.index(ans.strip().strip("()").upper())
    elif isinstance(ans, str) and ans.strip().isdigit():
        idx = int(ans.strip())
    else:
        raise GoldFormatError(f"{where}: 'ans' {ans!r} is not an option letter or index")
    if not 0 <= idx < n:
        raise GoldFormatError(f"{where}: 'ans' {ans!r} names no option (there are {n})")
    return idx


def import_rextime(path: str | Path) -> list[GoldItem]:
    """Gold items from ReXTime annotations."""
    out: list[GoldItem] = []
    for where, rec in _records(Path(path), "ReXTime"):
        qid = _record_id(rec, ("id", "qid", "query_id", "question_id"), where)
        windows = rec.get("relevant_windows")
        if not isinstance(windows, list) or not all(isinstance(w, list | tuple) and len(w) == 2 for w in windows):
            raise GoldFormatError(f"{where}: 'relevant_windows' must be a list of [start, end] pairs")
        choices = _first(rec, ("options", "choices"))
        answer = None
        if isinstance(choices, list) and rec.get("ans") is not None:
            choices = [str(c) for c in choices]
            idx = _answer_index(rec["ans"], len(choices), where)
            answer = {"text": choices[idx], "choices": choices, "index": idx}
        elif rec.get("ans") is not None:
            answer = {"text": str(rec["ans"])}
        video = _first(rec, ("vid", "video", "video_id"))
        out.append(_item(where, id=str(qid), video=str(video) if video is not None else None,
                         duration=rec.get("duration"), question=rec.get("question"), answer=answer, need="any",
                         evidence=_spans(windows, f"{where}: relevant_windows"),
                         source="rextime"))
    return out


def iter_summary(items: list[GoldItem]) -> Iterator[str]:
    """Lines saying what an import produced, for people."""
    n_ev = sum(len(i.evidence) for i in items)
    n_ans = sum(1 for i in items if i.answer is not None)
    yield f"{len(items)} questions, {n_ev} evidence items, {n_ans} with an answer"


def write_gold(items: Iterable[GoldItem], path: str | Path | Claim, inputs: Sequence[str | Path | None] = ()) -> int:
    """Write ``items`` as gold JSONL, whole or not at all; returns the count.

    ``path`` is claimed by the one output rule (:mod:`murgat.engine.outputs`: it may replace a
    gold file, never a cassette, a run's records, an input or a device link) unless it is a
    claim already; ``/dev/stdout`` is streamed into."""
    claim = path if isinstance(path, Claim) else claim_output(path, role="file", replaces=("gold",), inputs=inputs)
    lines = [it.model_dump_json(exclude_none=True) + "\n" for it in items]
    claim.write_text("".join(lines))
    return len(lines)
