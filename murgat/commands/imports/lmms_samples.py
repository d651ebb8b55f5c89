"""The one mapping between a sample of murgat's lmms-eval task and murgat items, for the task and the importer.

lmms-eval's samples log (``--log_samples``) does not keep a sample's document, only what the task's
``process_results`` returned for each metric. So murgat's task returns, for each of its metrics, the
same *payload*: everything ``murgat score`` needs to score that sample again, under ``"murgat"``::

    {"murgat": {"item": {id, media, question, options, gold, …}, "media_root": "/abs/root",
                "mode": "cite", "judge": "embedded", "judge_option": [], "task": "murgat_cited_video",
                "responses": ["<the model's answer>", …]}}

``responses`` are what lmms-eval handed ``process_results`` (its ``filtered_resps``: after
``--reasoning_tags`` stripping, when asked); one per repeat. Repeat 1 is item ``ID``, repeat N > 1
is ``ID#N`` (:func:`murgat.commands.imports.samples.item_id`). A response that is lmms-eval's own
failure marker (a request that failed after its retries, a spent budget) is not an answer: it is left
out and named, never scored as if the model had said it.

The documents the task reads (:func:`doc_of`) hold the same fields as one JSON string, so that any
murgat item, whatever its fields' types, loads through ``datasets``' JSON reader.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from murgat.commands.imports.samples import KEY, input_text, item_id, sample_metadata
from murgat.core.inputs import InputError, normalise_record
from murgat.core.schema import Item
from murgat.engine.folder import write_atomic

#: the file beside a ``responses.jsonl`` written from an lmms-eval samples log (never written over otherwise)
MARKER = "lmms_eval.json"
#: the texts lmms-eval's API backends put in place of an answer they could not get
FAILURE_MARKERS = ("[LMMS_EVAL_REQUEST_FAILED", "[LMMS_EVAL_BUDGET_EXCEEDED]")


def doc_of(item: Item, media_root: str | Path, media_path: str | Path, mode: str, judge: str,
           judge_option: Sequence[str] = (), task: str = "murgat_cited_video") -> dict[str, str]:
    """One document of the task's dataset: the item's id, question and resolved media file in the clear
    (lmms-eval shows them), and murgat's fields as one JSON string (``murgat``)."""
    info = sample_metadata(item, media_root, mode)[KEY]
    info.update(judge=judge, judge_option=list(judge_option), task=task)
    return {"id": item.id, "question": item.question or "", "media_path": str(media_path),
            KEY: json.dumps(info, ensure_ascii=False, sort_keys=True)}


def info_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    """murgat's fields of a document (:func:`doc_of`)."""
    raw = doc.get(KEY)
    info = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(info, dict) or not isinstance(info.get("item"), dict):
        raise InputError(f"document {doc.get('id')!r}: no murgat fields (a dataset written by "
                         "python -m murgat.integrations.lmms_eval task)")
    return info


def payload(doc: Mapping[str, Any], responses: Iterable[Any]) -> dict[str, Any]:
    """What ``process_results`` returns for each metric: the document's murgat fields and the answers."""
    return {KEY: {**info_of(doc), "responses": ["" if r is None else str(r) for r in responses]}}


def failure_of(text: str) -> str | None:
    """lmms-eval's failure marker when ``text`` is one (the request got no answer), else ``None``."""
    head = text.lstrip()
    return head[:300] if head.startswith(FAILURE_MARKERS) else None


def items_of(value: Any, where: str) -> tuple[list[Item], list[dict[str, Any]]]:
    """The items of one payload and the answers left out (each with its reason); :class:`InputError`
    when ``value`` is not a payload of murgat's task."""
    info = value.get(KEY) if isinstance(value, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("item"), dict) or "responses" not in info:
        raise InputError(f"{where}: no murgat payload (a sample of murgat's lmms-eval task holds one)")
    items: list[Item] = []
    skipped: list[dict[str, Any]] = []
    base = str(info["item"].get("id"))
    for n, text in enumerate(info["responses"], start=1):
        rid = item_id(base, n)
        if (failed := failure_of(str(text))) is not None:
            skipped.append({"sample": rid, "reason": f"lmms-eval got no answer: {failed}"})
            continue
        rec = {**info["item"], "id": rid, "response": str(text)}
        if n > 1:
            rec["repeat"] = n
        items.append(normalise_record(rec, f"{where} ({rid})"))
    return items, skipped


def settings_of(value: Any) -> dict[str, Any]:
    """The media root, judge and task a payload names (for the message that says how to score it)."""
    info = value.get(KEY) if isinstance(value, dict) else None
    if not isinstance(info, dict):
        return {}
    return {k: info.get(k) for k in ("media_root", "judge", "judge_option", "task", "mode")}


def write_input(folder: Path, items: Iterable[Item], made_by: dict[str, Any]) -> Path:
    """``folder/responses.jsonl`` (atomically) and :data:`MARKER`; a ``responses.jsonl`` that this module
    did not write (no marker beside it) is refused, never replaced."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "responses.jsonl"
    if target.exists() and not (folder / MARKER).exists():
        raise InputError(f"{target} exists and was not written from an lmms-eval log: not written over")
    write_atomic(folder / MARKER, json.dumps(made_by, indent=2, ensure_ascii=False) + "\n")
    write_atomic(target, input_text(items))
    return target
