"""Reading response files: murgat's JSONL and the authors' JSON list format.

murgat JSONL, one object per line::

    {"id": "q1", "media": "friday.mp4", "question": "...", "options": ["...", ...],
     "gold": "B", "response": "The woman ... (visual, 0:01)."}

The authors' public scripts use a JSON list with ``id``, ``video``,
``model_generation`` (or ``original_full_generation``), ``question``, ``options`` and
``answer``. Both load into :class:`~murgat.core.schema.Item`. Errors name the file, the line
or item and the field, so a user can fix the input instead of guessing.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from murgat.core.jsonl import loads_line, split_lines
from murgat.core.schema import Item

MEDIA_EXTENSIONS: tuple[str, ...] = (
    ".mp4", ".webm", ".mkv", ".mov", ".avi", ".m4v", ".mp3", ".wav", ".flac", ".m4a", ".ogg", ".opus",
)
_RESPONSE_FIELDS = ("response", "model_generation", "original_full_generation", "generation", "output")
_MEDIA_FIELDS = ("media", "video", "video_path", "audio", "video_id")
_GOLD_FIELDS = ("gold", "answer")


#: the longest response a command reads, in characters (``score --max-response-chars`` changes it
#: for score): a longer one gets its own clear error record, never a parse of unbounded cost
MAX_RESPONSE_CHARS = 200_000


class InputError(ValueError):
    """A response file that cannot be loaded; the message names the place and field."""


def response_problem(text: str, max_chars: int | None = MAX_RESPONSE_CHARS) -> str | None:
    """The error of a response over the size cap (``None`` when it is within it, or there is no cap).

    The one size rule of every command: the loader stamps it on each item
    (:attr:`~murgat.core.schema.Item.input_problem`), and text that does not come from a file (``murgat
    citations TEXT``) is checked with it directly.
    """
    if max_chars is None or len(text) <= max_chars:
        return None
    return f"response_too_long: {len(text):,} characters, over --max-response-chars {max_chars:,}"


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}: line {line}: not valid UTF-8 (byte {exc.start}: {exc.reason})") from exc


def _options(value: Any, where: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return [str(value[k]) for k in sorted(value)]
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        return [line for line in value.split("\n") if line.strip()]
    raise InputError(f"{where}: field 'options' must be a list, a dict or a string, not {type(value).__name__}")


def normalise_record(raw: dict[str, Any], where: str, require_response: bool = True) -> Item:
    """Map one record of either format onto an :class:`Item`."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    rec = dict(raw)
    if "id" not in rec or rec["id"] in (None, ""):
        raise InputError(f"{where}: missing field 'id'")
    rec["id"] = str(rec["id"])
    where = f"{where} (id {rec['id']})"
    for f in _RESPONSE_FIELDS:
        if f in rec:
            val = rec.pop(f)
            if "response" not in rec:
                if val is None:
                    val = ""
                if not isinstance(val, str):
                    raise InputError(f"{where}: field '{f}' must be a string, not {type(val).__name__}")
                rec["response"] = val
    if "response" not in rec:
        if require_response:
            raise InputError(f"{where}: no response field (one of {', '.join(_RESPONSE_FIELDS)})")
        rec["response"] = ""
    if "media" not in rec:
        for f in _MEDIA_FIELDS[1:]:
            if rec.get(f):
                rec["media"] = str(rec.pop(f))
                break
    if "gold" not in rec and "answer" in rec:
        rec["gold"] = None if rec["answer"] is None else str(rec.pop("answer"))
    rec["options"] = _options(rec.get("options"), where)
    try:
        return Item.model_validate(rec)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"])
        raise InputError(f"{where}: field '{field}': {err['msg']}") from exc


def iter_items(path: str | Path, require_response: bool = True,
               max_response_chars: int | None = MAX_RESPONSE_CHARS) -> Iterator[Item]:
    """Items of a JSONL file or a JSON list file, in file order; an id given twice is refused
    (:class:`InputError` naming the line or item), in both formats.

    An item whose response is longer than ``max_response_chars`` is still yielded (one hostile
    item must not cost the others theirs), with :attr:`~murgat.core.schema.Item.input_problem` saying
    so: commands give it an error record instead of reading it (:func:`response_problem`).
    """
    for item in _iter_items(path, require_response):
        item.input_problem = response_problem(item.response, max_response_chars)
        yield item


def _wraps_items(rec: Any) -> bool:
    """A JSON object that is not an item but holds a list of objects (``{"items": [...]}``)."""
    return (isinstance(rec, dict) and "response" not in rec and "id" not in rec
            and any(isinstance(v, list) and v and all(isinstance(x, dict) for x in v) for v in rec.values()))


def _refuse_wrong_shape(p: Path, text: str) -> None:
    """When the whole file is one valid JSON object (pretty-printed or not) rather than JSONL or a list,
    say so: "line 1: not valid JSON" would send the user looking for a syntax error that is not there."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return
    if not isinstance(data, dict):
        return
    keys = ", ".join(repr(k) for k in list(data)[:5])
    lists = [k for k, v in data.items() if isinstance(v, list)]
    hint = f" (the items look like they are under {lists[0]!r}: write that list itself, or one item per line)" if lists else ""
    raise InputError(f"{p}: valid JSON, but of the wrong shape: one JSON object with keys {keys}; murgat reads JSONL "
                     f"(one item object per line) or a JSON list of item objects{hint}")


def _iter_items(path: str | Path, require_response: bool) -> Iterator[Item]:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: input file does not exist")
    if p.is_dir():  # a run folder of 'generate', 'program' variant or 'reflect': its responses
        if (p / "responses.jsonl").is_file():
            p = p / "responses.jsonl"
        else:
            raise InputError(f"{p}: is a folder without responses.jsonl (give a responses file or a generate run folder)")
    text = _decode(p)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}: not valid JSON at line {exc.lineno}: {exc.msg}") from exc
        except RecursionError as exc:
            raise InputError(f"{p}: JSON nested too deeply") from exc
        if not isinstance(data, list):
            raise InputError(f"{p}: expected a JSON list of items")
        listed: set[str] = set()
        for i, rec in enumerate(data):
            item = normalise_record(rec, f"{p}: item {i}", require_response)
            if item.id in listed:  # refused as in JSONL: two records of one id would be counted twice
                raise InputError(f"{p}: item {i}: duplicate id {item.id!r}")
            listed.add(item.id)
            yield item
        return
    seen: set[str] = set()
    for lineno, line in enumerate(split_lines(text), 1):
        if not line.strip():
            continue
        try:
            rec = loads_line(line)
        except json.JSONDecodeError as exc:
            _refuse_wrong_shape(p, text)
            raise InputError(f"{p}: line {lineno}: not valid JSON ({exc.msg})") from exc
        except ValueError as exc:
            raise InputError(f"{p}: line {lineno}: not valid JSON ({exc})") from exc
        if lineno == 1 and _wraps_items(rec):
            _refuse_wrong_shape(p, text)
        item = normalise_record(rec, f"{p}: line {lineno}", require_response)
        if item.id in seen:
            raise InputError(f"{p}: line {lineno}: duplicate id {item.id!r}")
        seen.add(item.id)
        yield item


def load_items(path: str | Path, limit: int | None = None, *,
               max_response_chars: int | None = MAX_RESPONSE_CHARS) -> list[Item]:
    """Every item of ``path``, or only the first ``limit`` items — then the file is read no further,
    so ``--limit 5`` on 200,000 lines starts at once. A repeated id is refused and responses over
    ``max_response_chars`` are flagged (:func:`iter_items`; linear: ids are checked with a set)."""
    items: list[Item] = []
    for it in iter_items(path, max_response_chars=max_response_chars):
        if limit is not None and len(items) >= limit:
            break
        items.append(it)
    return items


def responses_by_id(path: str | Path, items: Sequence[Item], *,
                    max_response_chars: int | None = MAX_RESPONSE_CHARS) -> dict[str, str]:
    """The responses of ``path`` by id, for a run that reads them beside its own input (``generate
    --base``, ``reflect --from``). An item of the run whose response there is over the size cap is
    marked (:attr:`~murgat.core.schema.Item.input_problem`: it gets its error record, never a parse) and
    its response left out."""
    problems: dict[str, str] = {}
    out: dict[str, str] = {}
    for it in load_items(path, max_response_chars=max_response_chars):
        if it.input_problem:
            problems[it.id] = it.input_problem
        else:
            out[it.id] = it.response
    for it in items:
        if it.id in problems and not it.input_problem:
            it.input_problem = problems[it.id]
    return out


class MediaOutsideRoot(InputError):
    """The named media resolves (through ``..``, an absolute path or a symlink) outside the media root."""


def media_roots(media_root: str | Path | None, input_path: str | Path | None) -> list[Path]:
    """Folders media may be read from: ``--media-root``, else the input file's folder, else the CWD."""
    if media_root is not None:
        return [Path(media_root)]
    if input_path is not None:
        return [Path(input_path).parent]
    return [Path.cwd()]


@functools.lru_cache(maxsize=4096)
def _realpath(p: str) -> str:
    """Memoised per process: a run resolves the same few files and roots thousands of times."""
    return os.path.realpath(p)


def _inside(path: Path, roots: list[Path]) -> bool:
    real = Path(_realpath(str(path)))
    for r in roots:
        rr = Path(_realpath(str(r)))
        if real == rr or rr in real.parents:
            return True
    return False


def resolve_media(item: Item, media_root: str | Path | None, input_path: str | Path | None = None,
                  *, allow_outside_root: bool = False) -> Path | None:
    """The file an item's ``media`` names, or ``None`` when nothing on disk matches.

    Looks under ``media_root`` (else the input file's folder, else the working folder),
    then with each known extension appended — the authors' files name videos by id.
    The file's real path (symlinks and ``..`` resolved) must lie inside that root:
    otherwise :class:`MediaOutsideRoot` is raised, because a response file must not make
    murgat read (and, with a remote judge, send out) any file on the machine. With
    ``allow_outside_root`` any path is accepted, as the value names it.
    """
    if not item.media:
        return None
    name = item.media
    roots = media_roots(media_root, input_path)
    if allow_outside_root:
        search = [Path(media_root)] if media_root is not None else []
        if input_path is not None:
            search.append(Path(input_path).parent)
        cands = [Path(name)] if Path(name).is_absolute() else [r / name for r in search] + [Path(name)]
    else:
        cands = [r / name for r in roots]  # an absolute name stays absolute under "/"
    found: Path | None = None
    for c in cands:
        if c.is_file():
            found = c
            break
    if found is None:
        for c in cands:
            for ext in MEDIA_EXTENSIONS:
                alt = c.with_name(c.name + ext)
                if alt.is_file():
                    found = alt
                    break
            if found is not None:
                break
    if found is None:
        return None
    if not allow_outside_root and not _inside(found, roots):
        raise MediaOutsideRoot(
            f"media '{name}' resolves to {_realpath(str(found))}, outside the media root "
            f"{', '.join(str(r) for r in roots)} (refused; pass --allow-media-outside-root to permit)"
        )
    return found
