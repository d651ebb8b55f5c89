"""Settings that carry their fingerprint: what decides a run's work is marked once, on the field.

A run folder records the fingerprint of the settings that made it (``config.json``) and refuses a
rerun whose settings would do other work (:meth:`~murgat.engine.folder.RunFolder.check_config`).
Which settings those are is said where the setting is declared::

    pad: float = Field(0.0, ge=0, description="…", json_schema_extra=decides())

and :func:`fingerprint` builds the document from the marked fields alone, so a new setting is in
the fingerprint or not by its declaration, never by a list kept elsewhere. Two things keep the
folders of earlier versions resuming unchanged:

- **one table of legacy names per command** (``names``): where a setting sits in the documents
  earlier versions wrote (``decompose_context`` was ``decompose_context_sentences``, ``pad`` is
  ``evidence.pad_s``; a setting may sit at two places; ``None``: it enters only through what the
  run derives from it, e.g. a judge spec after its defaults). The same table derives the runtime
  configuration from the settings (:func:`derive`), so settings are never renamed by hand;
- **late settings** (``Late(where)`` in the table): a setting that a command's folders did not
  record until now (added later, or deciding work without being recorded) enters only when it is
  not at its default — folders made before it resume, and a run that sets it otherwise is refused.

What a run computes from its settings (judge specs with their defaults, prompt hashes, the
evidence recipe of the providers' needs) is passed as ``derived`` and merged in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, Field
from pydantic_core import PydanticUndefined

from murgat.judges import TRANSPORT_OPTIONS

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Late:
    """A setting recorded only when it is not at its default (see the module docstring)."""

    where: str | tuple[str, ...] | None


#: where a setting sits: a dotted path, several paths, ``None`` (only through what the run derives),
#: or :class:`Late`
Where = str | tuple[str, ...] | Late | None


def decides(**extra: Any) -> dict[str, Any]:
    """The ``json_schema_extra`` of a field whose value decides the work (with any other spelling
    keys of :mod:`murgat.engine.options`, e.g. ``flag``)."""
    return {**extra, "decides": True}


def Deciding(default: Any = PydanticUndefined, *, description: str, spelled: dict[str, Any] | None = None,
             **kw: Any) -> Any:
    """A settings field whose value decides the work: pydantic's ``Field`` with the :func:`decides`
    mark (``spelled``: the command-line spelling keys, e.g. ``{"flag": "--from"}``)."""
    return Field(default, description=description, json_schema_extra=decides(**(spelled or {})), **kw)


def _extra(model: type[BaseModel], name: str) -> dict[str, Any]:
    extra = model.model_fields[name].json_schema_extra
    return extra if isinstance(extra, dict) else {}


def deciding_fields(model: type[BaseModel]) -> list[str]:
    """The fields of ``model`` marked with :func:`decides`, in declaration order."""
    return [n for n in model.model_fields if _extra(model, n).get("decides")]


def _paths(name: str, names: Mapping[str, Where]) -> tuple[str, ...]:
    where = names.get(name, name)
    if isinstance(where, Late):
        where = where.where
    if where is None:
        return ()
    return (where,) if isinstance(where, str) else where


def _put(doc: dict[str, Any], path: str, value: Any) -> None:
    *heads, last = path.split(".")
    for h in heads:
        doc = doc.setdefault(h, {})
    doc[last] = value


def merge(base: dict[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``more`` merged in, nested objects merged key by key."""
    for k, v in more.items():
        if isinstance(v, Mapping) and isinstance(base.get(k), dict):
            merge(base[k], v)
        else:
            base[k] = dict(v) if isinstance(v, Mapping) else v
    return base


def placed(s: BaseModel, names: Mapping[str, Where], fields: list[str] | None = None) -> dict[str, Any]:
    """The values of ``fields`` (default: every field) of ``s``, each at its place(s) in ``names``."""
    doc: dict[str, Any] = {}
    for name in fields if fields is not None else list(type(s).model_fields):
        value = getattr(s, name)
        for path in _paths(name, names):
            _put(doc, path, value)
    return doc


def fingerprint(s: BaseModel, names: Mapping[str, Where] | None = None,
                derived: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The fingerprint of ``s``: its :func:`decides` fields at their places in ``names`` (:class:`Late`
    ones only when not at their default), merged with what the run ``derived`` from them."""
    model, names = type(s), names or {}
    keep = [n for n in deciding_fields(model)
            if not (isinstance(names.get(n), Late)
                    and getattr(s, n) == model.model_fields[n].get_default(call_default_factory=True))]
    return merge(placed(s, names, keep), derived or {})


def _answer_option(pair: Any) -> bool:
    """Whether a raw ``KEY=VALUE`` option (``-J``, ``-M``, ``-P``, ``-E``) may change answers."""
    return not (isinstance(pair, str) and pair.split("=", 1)[0].strip() in TRANSPORT_OPTIONS)


def without_transport(doc: Any) -> Any:
    """``doc`` (a fingerprint document) without the judge options that never change answers
    (:data:`murgat.judges.TRANSPORT_OPTIONS`: the HTTP client, pacing, credentials, prices, …).

    Commands record their judges' options in two shapes: parsed, as a mapping under a key named
    ``options`` or ``…_options`` (``judge_entail.options``, ``model_options``), and raw, as the list of
    ``KEY=VALUE`` strings of a setting named ``…_option`` (``planner_option``). Both are cleaned here,
    where every folder's fingerprint is compared (:meth:`murgat.engine.folder.RunFolder.check_config`), on
    the folder's side too: a folder that recorded ``-J client=httpx`` resumes with the lean client, and
    no command keeps its own list."""
    if isinstance(doc, list):
        return [without_transport(v) for v in doc]
    if not isinstance(doc, dict):
        return doc
    out: dict[str, Any] = {}
    for k, v in doc.items():
        name = k if isinstance(k, str) else ""
        if (name == "options" or name.endswith("_options")) and isinstance(v, dict):
            out[k] = {o: without_transport(x) for o, x in v.items() if o not in TRANSPORT_OPTIONS}
        elif name.endswith("_option") and isinstance(v, list):
            out[k] = [x for x in v if _answer_option(x)]
        else:
            out[k] = without_transport(v)
    return out


def derive(model: type[M], s: BaseModel, names: Mapping[str, Where] | None = None, *,
           fields: list[str] | None = None, extra: Mapping[str, Any] | None = None) -> M:
    """The runtime configuration ``model`` made from the settings ``s``: each setting (of ``fields``,
    default all) at its place in ``names`` (those the model has no field for are left out), then
    ``extra`` (what the run adds: judge specs, prompt hashes, …)."""
    doc = _known(model, placed(s, names or {}, fields))
    return model.model_validate(merge(doc, extra or {}))


def _known(model: type[BaseModel], doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without the keys ``model`` has no field for (recursively into nested models)."""
    out: dict[str, Any] = {}
    for k, v in doc.items():
        info = model.model_fields.get(k)
        if info is None:
            continue
        sub = info.annotation
        out[k] = _known(sub, v) if isinstance(v, dict) and isinstance(sub, type) and issubclass(sub, BaseModel) else v
    return out
