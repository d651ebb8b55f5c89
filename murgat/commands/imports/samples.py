"""The one mapping between an inspect_ai sample and a murgat item, for the scorer and the importer.

What the task puts in each sample's metadata, under ``"murgat"``::

    {"item": {id, media, question, options, gold, question_type, meta, …}, "media_root": "/abs/root",
     "mode": "cite"}

A sample of any other task "carries murgat's item fields" when its metadata names its media
(``media``, ``video``, ``video_path``, ``audio`` or ``video_id``, read by murgat's one record reader,
:func:`murgat.core.inputs.normalise_record`); its question, options and gold answer come from the
metadata too, else from the sample's ``choices`` and ``target``.

Item ids: the sample id for epoch 1, ``ID#N`` for epoch N > 1 (each epoch's answer is its own
response, and murgat's ids are unique within a run). The answer scored is the sample's final
output (``output.completion``); the model's name and the epoch are kept as item fields (``model``,
``epoch``), so runs can be grouped or compared by them.

Written as the input of a murgat run (``responses.jsonl``) by :func:`input_line`, the same way by
the scorer and by ``murgat import inspect``, so scoring the imported file reproduces the scorer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from murgat.core.inputs import InputError, normalise_record
from murgat.core.jsonl import dumps
from murgat.core.schema import Item
from murgat.engine.folder import write_atomic

KEY = "murgat"
#: the file beside an input this package wrote, naming who wrote it (it is never written over otherwise)
MARKER = "inspect.json"
INPUT = "responses.jsonl"


def item_id(sample_id: str | int | None, epoch: int) -> str:
    """``ID`` for epoch 1, ``ID#N`` for later epochs."""
    sid = str(sample_id)
    return sid if epoch <= 1 else f"{sid}#{epoch}"


def sample_metadata(item: Item, media_root: str | Path, mode: str) -> dict[str, Any]:
    """What :func:`~murgat.integrations.inspect_ai.murgat_cited_qa` stores in a sample's metadata."""
    fields = item.model_dump(mode="json", exclude={"response"})
    return {KEY: {"item": fields, "media_root": str(Path(media_root).resolve()), "mode": mode}}


def media_root_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The media folder the task resolved the sample's media in (``None`` for other tasks)."""
    info = (metadata or {}).get(KEY)
    return str(info["media_root"]) if isinstance(info, dict) and info.get("media_root") else None


def item_of_sample(sample_id: str | int | None, epoch: int, metadata: Mapping[str, Any] | None, target: Any,
                   choices: Iterable[str] | None, completion: str, model: str | None = None) -> Item:
    """The murgat item of one answered sample; :class:`~murgat.core.inputs.InputError` when the sample
    carries no murgat item fields (the message says which)."""
    rid = item_id(sample_id, epoch)
    md = dict(metadata or {})
    info = md.get(KEY)
    if isinstance(info, dict) and isinstance(info.get("item"), dict):
        rec: dict[str, Any] = dict(info["item"])
    else:
        rec = {k: v for k, v in md.items() if k != KEY}
        if not any(rec.get(k) for k in ("media", "video", "video_path", "audio", "video_id")):
            raise InputError(f"sample {rid}: its metadata names no media (murgat's item fields: media, question, "
                             "options, gold)")
        if rec.get("options") is None and choices:
            rec["options"] = list(choices)
        if rec.get("gold") is None and rec.get("answer") is None and target not in (None, "", []):
            rec["gold"] = target if isinstance(target, str) else ",".join(map(str, target))
    for k in ("response", "model_generation", "original_full_generation", "generation", "output"):
        rec.pop(k, None)  # the answer scored is the sample's output, nothing the dataset carried
    rec["id"] = rid
    rec["response"] = completion
    if model:
        rec["model"] = model
    rec["epoch"] = epoch
    return normalise_record(rec, f"sample {rid}")


def input_line(item: Item) -> str:
    """``item`` as one line of a murgat input (read back by :func:`murgat.core.inputs.iter_items` as the same item)."""
    doc = item.model_dump(mode="json")
    if not doc.get("meta"):
        doc.pop("meta", None)
    return dumps(doc)


def write_input(folder: Path, items: Iterable[Item], made_by: dict[str, Any]) -> Path:
    """Write ``folder/responses.jsonl`` (atomically) and its marker; refuses a folder whose
    ``responses.jsonl`` this package did not write (a generate run's, a user's file)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / INPUT
    if path.exists() and not (folder / MARKER).exists():
        raise InputError(f"{path} exists and was not written from an inspect log: not written over (choose another "
                         "folder)")
    write_atomic(folder / MARKER, json.dumps(made_by, indent=2, ensure_ascii=False) + "\n")
    write_atomic(path, input_text(items))
    return path


def input_text(items: Iterable[Item]) -> str:
    """The items as a murgat input, in id order: the scorer (samples in the order they finished) and
    the importer (samples in the log's order) write the same file for the same samples."""
    return "".join(input_line(it) + "\n" for it in sorted(items, key=lambda it: it.id))
