"""WorldSense annotations as murgat items (``murgat generate worldsense:FILE``, the inspect task).

WorldSense (Hong et al., 2025, "WorldSense: Evaluating Real-world Omnimodal Understanding for
Multimodal LLMs") asks four-option questions about videos whose answer needs the picture and the
sound together. Its results are read per task type, domain, duration and audio class, so those
fields are kept in :attr:`~murgat.core.schema.Item.meta` for breakdowns.

The fields were checked against two public readers of the benchmark, not written from memory:

- lmms-eval, ``EvolvingLMMs-Lab/lmms-eval`` @ ``0cf4eccd``, ``lmms_eval/tasks/worldsense/utils.py``
  (and ``worldsense.yaml``): a row has ``index``, ``video_path`` (relative to the dataset folder),
  ``subtitle_path``, ``question``, ``candidates`` (a list of ``"A. …"`` strings; the scorer cuts the
  letter and ``". "`` off with ``[3:]``), ``answer`` (a letter A–D), ``task_type``, ``task_domain``,
  ``duration`` and ``audio_class`` (a *list*: a question counts once in each of its audio classes);
- VLMEvalKit, ``open-compass/VLMEvalKit`` @ ``00fff545``, ``vlmeval/dataset/worldsense.py``: builds
  ``WorldSense.tsv`` from ``worldsense_qa.json`` (``{video: {duration, domain, sub_category,
  audio_class, video_caption, task1: {question, candidates, answer, task_domain, task_type}, …}}``,
  rows numbered in file order over each video's keys containing ``task``) with the columns
  ``index, video, video_path (./videos/V.mp4), duration, domain, candidates, sub_category,
  audio_class, task_domain, task_type, subtitle_path (./subtitles/V.srt), audio_path
  (./audios/V.wav), video_caption, question, answer``; list columns are written as Python list
  literals (read here with :func:`ast.literal_eval`, which evaluates no code).

So three shapes are read: rows (a JSON list, JSONL, or a ``{"test": [...]}`` split), that TSV, and
the nested ``worldsense_qa.json`` (ids then follow VLMEvalKit's numbering). A row may carry a model's
answer (``response``, or VLMEvalKit's ``prediction``), so outputs made elsewhere can be scored.

What murgat changes: the option letters (``"A. "``, ``"(A) "``) are stripped from the candidates —
murgat's prompt writes its own letters, and the one correct rule (:mod:`murgat.core.answers`) compares an
answer given as text with the option's text; a gold answer written as a whole candidate
(``"B. a drum"``) becomes its letter. Nothing else is dropped: every other field goes to ``meta``.

What murgat refuses (naming the row): an answer (``response``/``prediction``) that is not text, an
``index``, candidate, ``answer`` or video that is an object or a list (its Python form would be read
as the value), a TSV row with more cells than the header has columns (empty trailing cells aside),
and an object that holds no question. A pipe (``worldsense:/dev/stdin``) is read once.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from murgat.core.inputs import InputError
from murgat.core.jsonl import loads_line, split_lines
from murgat.core.schema import Item

LETTERS = "ABCDEFGHIJ"
#: fields that become murgat's own item fields (everything else is kept in ``meta``)
_OWN = frozenset({"index", "video_path", "question", "candidates", "answer", "response", "prediction"})
#: fields that hold lists (in the TSV as Python list literals)
_LIST_FIELDS = ("candidates", "audio_class")
#: a list literal longer than this is refused instead of parsed (the parser is linear, the cap keeps
#: one hostile cell from costing seconds)
MAX_LITERAL_CHARS = 65_536
_PREFIX = re.compile(r"\s*\(?\s*([A-Za-z])\s*[.)\]:：]\s*")


def strip_option_letter(text: str, index: int) -> str:
    """``"A. a dog"`` → ``"a dog"`` when the letter is the one of position ``index``; else ``text``."""
    m = _PREFIX.match(text)
    if m and index < len(LETTERS) and m.group(1).upper() == LETTERS[index] and text[m.end():].strip():
        return text[m.end():].strip()
    return text.strip()


def _as_list(value: Any, field: str, where: str) -> list[Any] | None:
    if value is None or isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if not text.startswith("["):
            return [text] if field == "audio_class" else [ln for ln in text.split("\n") if ln.strip()]
        if len(text) > MAX_LITERAL_CHARS:
            raise InputError(f"{where}: field '{field}' is over {MAX_LITERAL_CHARS:,} characters")
        try:
            parsed = json.loads(text)
        except RecursionError as exc:
            raise InputError(f"{where}: field '{field}' is nested too deeply") from exc
        except ValueError:
            try:
                parsed = ast.literal_eval(text)  # a Python list literal (VLMEvalKit's TSV): data only, no code
            except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError) as exc:
                raise InputError(f"{where}: field '{field}' is not a list ({type(exc).__name__})") from exc
        if isinstance(parsed, list | tuple):
            return list(parsed)
    raise InputError(f"{where}: field '{field}' must be a list, not {type(value).__name__}")


def _scalar(value: Any, field: str, where: str) -> str | None:
    """A field that is one value (text or a number) as text; ``None`` when absent. A nested object, a
    list or true/false is refused: its Python form must never be read as an answer, a video or an id."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 1.0 (a JSON writer's number) is the index 1
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError(f"{where}: field '{field}' must be text or a number, not {type(value).__name__}")
    return str(value)


def check_cells(row: dict[Any, Any], where: str) -> None:
    """A CSV/TSV row with cells beyond the header's columns (``csv.DictReader`` keeps them under the
    key ``None``) is refused unless they are empty (a spreadsheet's trailing separators): a cell no
    column names would otherwise be dropped unseen, or (here) break the item."""
    extra = row.pop(None, None) or []
    if any(str(c).strip() for c in extra):
        raise InputError(f"{where}: {len(row) + len(extra)} cells, more than the header's {len(row)} columns")


def _gold(answer: Any, raw: list[str]) -> str | None:
    if answer is None:
        return None
    a = str(answer).strip()
    if not a:
        return None
    for i, c in enumerate(raw[: len(LETTERS)]):
        if a == c.strip():  # the whole candidate, letter and all
            return LETTERS[i]
    return a


def item_from_row(row: dict[str, Any], where: str, require_response: bool = False) -> Item:
    """One WorldSense row (see the module docstring) as an :class:`Item`; ``require_response``
    (``murgat score``): a row without ``response``/``prediction`` is refused, never scored as empty."""
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected an object, got {type(row).__name__}")
    check_cells(row, where)
    rid = _scalar(row.get("index"), "index", where)
    if not rid:
        raise InputError(f"{where}: missing field 'index'")
    where = f"{where} (index {rid})"
    if not row.get("question"):
        raise InputError(f"{where}: missing field 'question'")
    cands = _as_list(row.get("candidates"), "candidates", where)
    if not cands:
        raise InputError(f"{where}: missing field 'candidates'")
    raw = [_scalar(c, f"candidates[{i}]", where) or "" for i, c in enumerate(cands)]
    options = [strip_option_letter(c, i) for i, c in enumerate(raw)]
    video = _scalar(row.get("video"), "video", where)
    media = _scalar(row.get("video_path"), "video_path", where) or (f"videos/{video}.mp4" if video else None)
    if media is not None and media.startswith("./"):
        media = media[2:]
    meta: dict[str, Any] = {}
    for k, v in row.items():
        if k in _OWN:
            continue
        if k in _LIST_FIELDS:
            v = _as_list(v, k, where)
        meta[k] = v
    field = "response" if row.get("response") is not None else "prediction"
    response = row.get(field)
    if response is not None and not isinstance(response, str):
        raise InputError(f"{where}: field '{field}' must be text, not {type(response).__name__} (a model's answer is "
                         "read as written, never as the Python form of a value)")
    if require_response and response is None:
        raise InputError(f"{where}: no response field (response or prediction): murgat score needs the model's answer "
                         "(murgat generate writes answers to these questions)")
    return Item.model_validate({"id": rid, "media": media, "question": str(row["question"]), "options": options,
                                "gold": _gold(_scalar(row.get("answer"), "answer", where), raw),
                                "response": "" if response is None else response,
                                "meta": meta, "source": "worldsense"})


def rows_from_qa(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """``worldsense_qa.json`` (per video, its tasks) as rows, numbered as VLMEvalKit numbers them."""
    rows: list[dict[str, Any]] = []
    for video, vd in doc.items():
        if not isinstance(vd, dict):
            raise InputError(f"video {video!r}: expected an object, got {type(vd).__name__}")
        shared = {k: v for k, v in vd.items() if "task" not in k}
        for key in (k for k in vd if "task" in k):
            task = vd[key]
            if not isinstance(task, dict):
                raise InputError(f"video {video!r} {key}: expected an object, got {type(task).__name__}")
            rows.append({"index": len(rows), "video": str(video), "video_path": f"./videos/{video}.mp4",
                         **shared, **task, "task": key, "subtitle_path": f"./subtitles/{video}.srt",
                         "audio_path": f"./audios/{video}.wav"})
    if doc and not rows:  # an object that is no WorldSense file ({"test": {...}}): not an empty benchmark
        raise InputError(f"no question: none of the {len(doc)} video(s) has a 'task…' key (worldsense_qa.json holds "
                         "{video: {task1: {question, candidates, answer, …}, …}})")
    return rows


def _tsv_rows(p: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    """The rows of a WorldSense TSV, each named by the line it starts on. A cell that opens a quote
    and closes it lines later is refused when what it swallowed reads as rows (a stray ``"`` at the
    start of a cell, not a quoted line break), and a cell past the reader's size limit is an error
    naming its line, never a ``_csv.Error`` traceback."""
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t")
    rows: list[tuple[str, dict[str, Any]]] = []
    start = 2
    try:
        for r in reader:
            swallowed = _swallowed_rows(r, len(reader.fieldnames or ()))
            if swallowed:
                raise InputError(f"{p}: line {start}: a cell opens a quote (\") that closes only at line "
                                 f"{reader.line_num}, taking in {swallowed} line(s) that read as rows; remove the quote "
                                 "or close it in its own cell")
            rows.append((f"{p}: line {start}", dict(r)))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"{p}: line {start}: not a TSV row murgat can read ({exc}; a cell may hold at most "
                         f"{csv.field_size_limit():,} characters)") from None
    return rows


def _swallowed_rows(row: dict[Any, Any], n_columns: int) -> int:
    """How many lines inside one cell of ``row`` hold as many tabs as a row does (0: none)."""
    if n_columns < 2:
        return 0
    return sum(1 for v in row.values() if isinstance(v, str) and "\n" in v
               for line in v.split("\n")[1:] if line.count("\t") >= n_columns - 1)


def _read_rows(p: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    if p.suffix.lower() == ".tsv":
        return _tsv_rows(p, text)
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            if stripped.startswith("{"):  # JSONL whose first line is an object
                doc = None
            else:
                raise InputError(f"{p}: not valid JSON ({exc})") from exc
        except RecursionError as exc:
            raise InputError(f"{p}: JSON nested too deeply") from exc
        if isinstance(doc, dict) and isinstance(doc.get("test"), list):
            doc = doc["test"]
        if isinstance(doc, list):
            return [(f"{p}: item {i}", r) for i, r in enumerate(doc)]
        if isinstance(doc, dict) and "question" in doc:  # JSONL of one row
            return [(f"{p}: line 1", doc)]
        if isinstance(doc, dict):
            try:
                rows = rows_from_qa(doc)
            except InputError as exc:
                raise InputError(f"{p}: {exc}") from None
            return [(f"{p}: row {r['index']}", r) for r in rows]
    out = []
    for n, line in enumerate(split_lines(text), 1):
        if not line.strip():
            continue
        try:
            out.append((f"{p}: line {n}", loads_line(line)))
        except ValueError as exc:
            raise InputError(f"{p}: line {n}: not valid JSON ({exc})") from exc
    return out


def load_worldsense(path: str | Path, require_response: bool = False) -> list[Item]:
    """Every question of a WorldSense annotation file (any of the three shapes), in file order
    (``require_response``: see :func:`item_from_row`)."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{p}: is a folder; give the WorldSense annotation file itself (its TSV, worldsense_qa.json "
                         "or rows)")
    if not p.exists():
        raise InputError(f"{p}: WorldSense annotation file does not exist")
    try:  # a regular file, or a pipe such as /dev/stdin (read once)
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not valid UTF-8 (byte {exc.start})") from exc
    except OSError as exc:
        raise InputError(f"{p}: cannot be read ({exc.strerror or exc})") from exc
    items: list[Item] = []
    seen: set[str] = set()
    for where, row in _read_rows(p, text):
        it = item_from_row(row, where, require_response)
        if it.id in seen:
            raise InputError(f"{where}: duplicate index {it.id!r}")
        seen.add(it.id)
        items.append(it)
    return items


def looks_like_worldsense(path: str | Path) -> bool:
    """Whether a file's start reads as WorldSense annotations (so ``generate FILE`` needs no prefix)."""
    p = Path(path)
    try:
        with open(p, encoding="utf-8", errors="replace") as f:
            head = f.read(65_536)
    except OSError:
        return False
    if p.suffix.lower() == ".tsv":
        cols = set(head.split("\n", 1)[0].strip().split("\t"))
        return {"candidates", "task_type", "question"} <= cols
    return '"candidates"' in head and '"task_type"' in head and '"id"' not in head
