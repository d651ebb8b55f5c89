"""Question sets for ``murgat generate``, ``sweep``, ``program`` and ``reflect``: murgat JSONL, CSV, HF
``load_from_disk``, and the Video-MMMU, NExT-GQA and WorldSense annotation files; and the
responses ``score`` and ``ground`` read (:func:`load_responses`: a response file, or a dataset
spec whose rows carry the model's answers, such as ``worldsense:FILE``).

Every loader returns :class:`~murgat.core.schema.Item` objects (with an empty ``response``)
whose ``media`` is a file name or a video id resolved later with ``--media-root``. A record's
fields that murgat has no place for are kept in the item's ``meta`` (so figures can be grouped
on them), never dropped.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from murgat.core.inputs import MAX_RESPONSE_CHARS, InputError, iter_items, load_items, response_problem
from murgat.core.schema import Item
from murgat.core.worldsense import check_cells, load_worldsense, looks_like_worldsense

LETTERS = "ABCDEFGHIJ"


def _rest(rec: dict[str, Any], used: set[str]) -> dict[str, Any]:
    """The fields of ``rec`` that no item field took (the item's ``meta``)."""
    return {k: v for k, v in rec.items() if k not in used}


def youtube_id(url: str) -> str | None:
    """The video id of a YouTube watch, short or embed link."""
    u = urlparse(url.strip())
    if u.hostname and u.hostname.endswith("youtu.be"):
        return u.path.strip("/").split("/")[0] or None
    if u.hostname and "youtube" in u.hostname:
        q = parse_qs(u.query).get("v")
        if q:
            return q[0]
        m = re.match(r"^/(?:embed|shorts|v)/([^/?#]+)", u.path)
        if m:
            return m.group(1)
    return None


def load_videommmu(path: str | Path) -> list[Item]:
    """Video-MMMU track files: ``{track: {"0": {id, link_selected, question, options, answer}}}``.

    Ids repeat across tracks, so an item id is ``<track>/<id>``; the track is the question
    type unless the item names one (Adaptation items do: ``multiple-choice`` / ``open``).
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for track, items in data.items():
        rows = items.values() if isinstance(items, dict) else items
        for rec in rows:
            vid = youtube_id(rec.get("link_selected", "")) or rec["id"]
            meta = _rest(rec, {"id", "link_selected", "question", "options", "answer", "question_type"})
            out.append(Item.model_validate({
                "id": f"{track}/{rec['id']}", "media": vid, "question": rec["question"],
                "options": list(rec.get("options") or []), "gold": rec.get("answer"), "response": "",
                "question_type": rec.get("question_type") or track, "meta": meta, "track": track,
                "source": "videommmu"}))
    return out


def load_nextgqa(path: str | Path) -> list[Item]:
    """NExT-GQA ``val.csv``: ``video_id, question, answer (text), qid, type, a0..a4``."""
    out = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            options = [row[f"a{i}"] for i in range(10) if f"a{i}" in row]
            gold = LETTERS[options.index(row["answer"])] if row["answer"] in options else None
            meta = _rest(row, {"video_id", "question", "answer", "qid", "type", *(f"a{i}" for i in range(10))})
            out.append(Item.model_validate({
                "id": f"{row['video_id']}_{row['qid']}", "media": row["video_id"], "question": row["question"],
                "options": options, "gold": gold, "response": "", "question_type": row.get("type"), "meta": meta,
                "source": "nextgqa"}))
    return out


def load_csv(path: str | Path) -> list[Item]:
    """A generic CSV: ``id``, ``media`` (or ``video``), ``question``, ``options`` (JSON list) or
    ``a0..aN`` / ``A..J`` columns, ``answer`` or ``gold``, optional ``type``."""
    out = []
    with open(path, newline="", encoding="utf-8") as f:
        for lineno, row in enumerate(csv.DictReader(f), 2):
            check_cells(row, f"{path}: line {lineno}")
            if not row.get("id"):
                raise InputError(f"{path}: line {lineno}: missing field 'id'")
            opts: list[str] | None = None
            if row.get("options"):
                try:
                    opts = list(json.loads(row["options"]))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}: line {lineno}: field 'options' is not a JSON list") from exc
            else:
                cols = [c for c in (f"a{i}" for i in range(10)) if row.get(c)] or [c for c in LETTERS if row.get(c)]
                opts = [row[c] for c in cols] or None
            used = {"id", "media", "video", "question", "options", "gold", "answer", "type", "question_type",
                    *(f"a{i}" for i in range(10)), *LETTERS}
            out.append(Item(id=row["id"], media=row.get("media") or row.get("video"), question=row.get("question"),
                            options=opts, gold=row.get("gold") or row.get("answer"), response="",
                            question_type=row.get("type") or row.get("question_type"),
                            meta=_rest(row, used)))
    return out


def load_hf(path: str | Path, split: str | None = None) -> list[Item]:
    """A dataset saved with ``datasets.save_to_disk`` (needs the ``datasets`` package)."""
    try:
        from datasets import DatasetDict, load_from_disk
    except ImportError as exc:
        raise InputError("reading a HF dataset folder needs: pip install datasets") from exc
    ds: Any = load_from_disk(str(path))
    if isinstance(ds, DatasetDict):
        ds = ds[split or next(iter(ds))]
    out = []
    for i, rec in enumerate(ds):
        rec = dict(rec)
        used = {"id", "media", "video", "video_id", "question", "options", "gold", "answer", "question_type"}
        out.append(Item(id=str(rec.get("id", i)), media=rec.get("media") or rec.get("video") or rec.get("video_id"),
                        question=rec.get("question"), options=list(rec["options"]) if rec.get("options") else None,
                        gold=rec.get("gold") or rec.get("answer"), response="", question_type=rec.get("question_type"),
                        meta=_json_safe(_rest(rec, used))))
    return out


def _json_safe(meta: dict[str, Any]) -> dict[str, Any]:
    """HF rows may hold decoded images or arrays: those are named, not kept (records are JSON)."""
    return {k: v if isinstance(v, str | int | float | bool | type(None) | list | dict) else f"<{type(v).__name__}>"
            for k, v in meta.items()}


KINDS = ("videommmu", "nextgqa", "worldsense", "hf", "csv", "jsonl")


def _kind_and_path(spec: str) -> tuple[str, Path]:
    kind, colon, rest = spec.partition(":")
    if kind in KINDS and colon and not rest:
        raise InputError(f"{spec}: names no file (write {kind}:FILE)")
    if rest and kind in KINDS:
        return kind, Path(rest)
    return "", Path(spec)


def _missing(spec: str, p: Path, what: str) -> InputError:
    """``p`` (what ``spec`` names) does not exist: said, with what the spec was read as when that is
    why (a file named ``csv:x.json`` is ``./csv:x.json``)."""
    kind = spec.partition(":")[0]
    if kind in KINDS and Path(spec).exists():
        return InputError(f"{p}: {what} does not exist ({spec} was read as a {kind} dataset spec; the file named "
                          f"{spec} is ./{spec})")
    return InputError(f"{p}: {what} does not exist")


def dataset_path(spec: str) -> Path:
    """The file or folder a dataset spec names (``worldsense:FILE`` → ``FILE``)."""
    return _kind_and_path(spec)[1]


def load_dataset(spec: str) -> list[Item]:
    """``videommmu:PATH``, ``nextgqa:PATH``, ``worldsense:PATH``, ``hf:PATH``, a ``.csv`` or murgat
    JSONL/JSON; a WorldSense file (its TSV, ``worldsense_qa.json`` or rows) is also recognised unprefixed."""
    kind, p = _kind_and_path(spec)
    if not p.exists():
        raise _missing(spec, p, "dataset")
    if kind in ("videommmu", "nextgqa") or (not kind and _question_kind(kind, p) == "nextgqa"):
        return _read_questions(_question_kind(kind, p), p)
    if kind == "worldsense" or (not kind and p.is_file() and looks_like_worldsense(p)):
        return load_worldsense(p)
    if kind == "hf" or (not kind and p.is_dir()):
        return load_hf(p)
    if kind == "csv" or p.suffix == ".csv":
        return _read_questions("csv", p)
    # questions: a response field there is never read (generate, program and reflect write their own), so no cap
    return list(iter_items(p, require_response=False, max_response_chars=None))


def _question_kind(kind: str, p: Path) -> str:
    """The question set a spec names (its prefix; unprefixed: NExT-GQA's ``val.csv``, else a CSV)."""
    return kind or ("nextgqa" if p.name == "val.csv" and "nextgqa" in str(p).lower() else "csv")


def _read_questions(what: str, p: Path) -> list[Item]:
    """A Video-MMMU, NExT-GQA or CSV file (``what``), its flaws as :class:`InputError` naming the file and
    what is wrong (these loaders trust a well-formed file; a malformed one must not end in a traceback)."""
    load = {"videommmu": load_videommmu, "nextgqa": load_nextgqa}.get(what, load_csv)
    try:
        return load(p)
    except InputError:
        raise
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not valid UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}: not valid JSON at line {exc.lineno}: {exc.msg}") from None
    except KeyError as exc:
        raise InputError(f"{p}: a {what} record lacks the field {exc.args[0]!r}") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot be read ({exc.strerror or exc})") from None
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:  # a record of another shape
        raise InputError(f"{p}: not a {what} file as murgat reads it ({type(exc).__name__}: {str(exc)[:200]})") from None


def is_dataset_spec(spec: str) -> bool:
    """Whether ``spec`` names a dataset rather than a response file or a run folder: a known prefix
    (``worldsense:FILE``), or a file :func:`load_dataset` recognises unprefixed (a WorldSense file,
    NExT-GQA's ``val.csv``, a ``.csv``). A folder is a run folder (its ``responses.jsonl``) here."""
    kind, p = _kind_and_path(spec)
    if kind:
        return True
    if not p.is_file():
        return False
    return p.suffix == ".csv" or looks_like_worldsense(p)


def load_responses(spec: str, limit: int | None = None, *,
                   max_response_chars: int | None = MAX_RESPONSE_CHARS) -> list[Item]:
    """The responses ``murgat score`` and ``murgat ground`` read: a response file or run folder exactly
    as :func:`murgat.core.inputs.load_items` reads it, or a dataset spec whose rows carry the answers
    (``worldsense:FILE`` with a ``response``/``prediction`` column; ``jsonl:FILE``), its items keeping
    the dataset's own fields in ``meta`` (what ``--by`` groups on). A row without an answer is refused
    (naming it), never scored as an empty response; a dataset of questions only (Video-MMMU, NExT-GQA,
    HF, CSV) is refused with what to do instead. Responses over ``max_response_chars`` are marked
    (:func:`murgat.core.inputs.response_problem`), as the response reader marks them."""
    if not is_dataset_spec(spec):
        return load_items(spec, limit, max_response_chars=max_response_chars)
    kind, p = _kind_and_path(spec)
    if not p.exists():
        raise _missing(spec, p, "input file")
    if kind == "jsonl":
        return load_items(p, limit, max_response_chars=max_response_chars)
    if kind == "worldsense" or (not kind and p.is_file() and looks_like_worldsense(p)):
        items = load_worldsense(p, require_response=True)
    else:
        what = _question_kind(kind, p)
        raise InputError(f"{spec}: a {what} dataset holds questions without the model's answers; answer them with "
                         f"murgat generate {spec} … --out RUN, then score RUN")
    for it in items:
        it.input_problem = response_problem(it.response, max_response_chars)
    return items if limit is None else items[:limit]
