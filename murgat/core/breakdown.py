"""Run figures by item field (``--by task_type``): the pure grouping behind score, summarize, ground
and the viewer's breakdowns.

Benchmarks are read per category (WorldSense per task type, domain, duration and audio class), so
a run's figures are grouped by any field of its items:

- **Where a field is found.** An item's groupable fields (:func:`item_fields`) are its
  ``question_type``, the input's own fields murgat keeps as extras (JSON values; bookkeeping of
  other commands such as ``usage`` left out) and its ``meta`` (which wins). ``score`` writes them
  into each record as ``meta["item"]``; :func:`record_fields` reads them back and adds the record's
  own outcome fields (``case``, ``correct``, ``video``, ``predicted_option``), so a breakdown
  needs no input file.
- **List-valued fields** (``audio_class: ["speech", "music"]``) put the item once in the group of
  each distinct value, as WorldSense's scorer counts them; the groups then add up to more items
  than the run has, and :attr:`Breakdown.list_valued` says so.
- **Missing values** form their own group (value ``None``), so no item silently leaves the table. A
  number JSON cannot hold (NaN, ±Infinity) is missing too: the records keep it as ``null``, so a
  breakdown of the input and one of the records (``summarize``) agree.
- **Values are JSON values**: ``true`` and ``1`` are two groups (Python's ``True == 1`` would merge
  them), ``1`` and ``1.0`` one; a text that reads as another value's label (``"1"``, ``"True"``) is
  labelled in quotes, so two groups never share a label.
- **Each group's figures** are exactly a run summary over its records
  (:func:`murgat.core.metric.summarize_results`: means with bootstrap CIs and ``n``, accuracy, strict
  attributed accuracy, cases), so a group of every item reproduces the run's own figures.
- **Paired group differences** (:func:`group_differences`, for ``summarize A B --by …``): within
  each group, the items scored in both runs, paired by id, with the paired bootstrap CI of B − A
  (:func:`murgat.core.metric.paired_bootstrap_diff`), for each metric and for accuracy.

Several fields at once (``by=["task_type", "duration"]``) group by the combination of their values; a
field named twice counts once (:func:`field_names`).

- **Undefined, never 0.** A group none of whose items was judged has no mean: its figures are null
  and :meth:`Breakdown.as_dict` says why (``undefined``: figure → reason), with the group's ``n``.
- **A field no item has** is refused (:func:`check_by`, :class:`UnknownField`) naming it and the
  fields the items do have, before any work: a typo must not give a table of one "(missing)" group.
- **Tables are bounded**: at most :data:`TABLE_GROUPS` groups are drawn (the largest), each label cut
  to :data:`LABEL_CHARS` (:func:`drawn`, :func:`short_label`); every group stays in the JSON document.

:func:`grouped` is the grouping alone (any record type): ``ground --by`` groups its own records
with it and computes each group's figures with its own summary.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from murgat.core.metric import METRICS, paired_bootstrap_diff, summarize_results
from murgat.core.schema import Interval, Item, ResponseResult, RunSummary

#: extras other commands add to the records they write (generate's usage, cache flag, post-hoc
#: verdict, failure) or that are the work itself: never a category
BOOKKEEPING = frozenset({"usage", "cached", "posthoc", "generation_error", "response", "input_digest"})

GroupKey = tuple[Any, ...]
T = TypeVar("T")

#: a score record's own outcome fields (:func:`record_fields`), groupable in every run
OUTCOME_FIELDS = ("case", "correct", "video", "predicted_option", "gold")
#: at most this many field names are listed in an :class:`UnknownField` message
LISTED_FIELDS = 60
#: at most this many groups are drawn in a table (the largest; every group is in the JSON document)
TABLE_GROUPS = 40
#: a group's label is cut to this many characters where it is printed (the JSON keeps it whole)
LABEL_CHARS = 80
#: what a value must be to be grouped on (:func:`groupable_fields`)
GROUPABLE = "text, a number, true/false, or a list of those"


def _groupable(value: Any) -> bool:
    if isinstance(value, str | int | float | bool) or value is None:
        return True
    return isinstance(value, list) and all(isinstance(v, str | int | float | bool) or v is None for v in value)


def groupable_fields(fields: Any) -> dict[str, Any]:
    """The entries of ``fields`` (a mapping, else nothing) whose values can be grouped on
    (:data:`GROUPABLE`): a nested object or a list of lists is left out, wherever it was read from
    (an input, or a record's kept ``meta.item`` that may have been edited by hand)."""
    return {k: v for k, v in fields.items() if _groupable(v)} if isinstance(fields, Mapping) else {}


def item_fields(item: Item) -> dict[str, Any]:
    """The fields of ``item`` that figures can be grouped by (see the module docstring)."""
    out: dict[str, Any] = {}
    if item.question_type is not None:
        out["question_type"] = item.question_type
    out.update(groupable_fields({k: v for k, v in (item.model_extra or {}).items() if k not in BOOKKEEPING}))
    out.update(groupable_fields(item.meta))
    return out


def record_fields(record: ResponseResult) -> dict[str, Any]:
    """A score record's groupable fields: its item's (``meta["item"]``) and its own outcome fields
    (:data:`OUTCOME_FIELDS`)."""
    own = {"case": "error" if record.error is not None else record.case, "correct": record.correct,
           "video": record.video, "predicted_option": record.predicted_option, "gold": record.gold}
    return {**own, **groupable_fields(record.meta.get("item"))}


def _value(v: Any) -> Any:
    """One group value: a number JSON cannot hold (NaN, ±Infinity) is missing, as the records keep it."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _ident(values: GroupKey) -> tuple[Any, ...]:
    """What tells groups apart: the values with their JSON kind, so ``true`` and ``1`` differ (Python
    holds ``True == 1``) while ``1`` and ``1.0`` (one JSON number) do not."""
    return tuple((isinstance(v, bool), v) for v in values)


def _values(value: Any) -> list[Any]:
    """The group values of one field value: each distinct element of a list, once (in linear time);
    ``[None]`` when missing or an empty list (the item is in the missing group rather than in none)."""
    if isinstance(value, list):
        seen: dict[tuple[Any, ...], Any] = {}
        for v in map(_value, value):
            seen.setdefault(_ident((v,)), v)
        return list(seen.values()) or [None]
    return [_value(value)]


def group_keys(fields: Mapping[str, Any], by: Sequence[str]) -> list[GroupKey]:
    """Every group an item with ``fields`` belongs to under ``by`` (one per combination of values)."""
    keys: list[GroupKey] = [()]
    for name in field_names(by):
        keys = [(*k, v) for k in keys for v in _values(fields.get(name))]
    return keys


class UnknownField(ValueError):
    """``--by`` names a field no item has; the message names it and the fields the items have."""

    def __init__(self, unknown: Sequence[str], available: Iterable[str]) -> None:
        names = sorted(set(available))
        shown = ", ".join(names[:LISTED_FIELDS]) + (f", … ({len(names) - LISTED_FIELDS} more)"
                                                    if len(names) > LISTED_FIELDS else "")
        which = ", ".join(repr(n) for n in unknown)
        super().__init__(f"--by {which}: no item has {'this field' if len(unknown) == 1 else 'these fields'} "
                         f"(as {GROUPABLE}); fields the items have: {shown or '(none)'}")
        self.unknown, self.available = list(unknown), names


def fields_available(fields: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every field name some item has (the union over ``fields``, one mapping per item)."""
    out: set[str] = set()
    for f in fields:
        out.update(f)
    return out


def field_names(by: str | Sequence[str]) -> tuple[str, ...]:
    """``by`` as a tuple of field names, each once (``--by x --by x`` groups by ``x``, not by the pair
    of its value with itself); ``ValueError`` for no name or an empty one."""
    names = tuple(dict.fromkeys((by,) if isinstance(by, str) else by))
    if not names or any(not n for n in names):
        raise ValueError("group by at least one field name")
    return names


def check_by(by: str | Sequence[str], available: Iterable[str]) -> tuple[str, ...]:
    """:func:`field_names` of ``by``, or :class:`UnknownField` when one of them (an empty one too) is
    not in ``available`` (``ValueError`` for no name at all)."""
    names = tuple(dict.fromkeys((by,) if isinstance(by, str) else by))
    if not names:
        raise ValueError("group by at least one field name")
    have = set(available)
    unknown = [n for n in names if not n or n not in have]
    if unknown:
        raise UnknownField(unknown, have)
    return names


def grouped(records: Sequence[T], by: str | Sequence[str],
            fields_of: Callable[[T], Mapping[str, Any]]) -> tuple[list[tuple[GroupKey, list[T]]], list[str]]:
    """``records`` by group of ``by`` (largest group first, then by value; each record once per
    group it belongs to, in input order), and the ``by`` fields that were list-valued somewhere."""
    names = field_names(by)
    members: dict[tuple[Any, ...], tuple[GroupKey, list[T]]] = {}
    list_valued: set[str] = set()
    for r in records:
        f = fields_of(r)
        list_valued.update(n for n in names if isinstance(f.get(n), list))
        for key in group_keys(f, names):
            members.setdefault(_ident(key), (key, []))[1].append(r)
    return sorted(members.values(), key=_sort_key), sorted(list_valued)


#: the labels of values that are not text (:func:`label_of`): a text that reads as one is quoted
_OTHER_LABELS = frozenset({"(missing)", "True", "False"})


def _label(v: Any) -> str:
    if v is None:
        return "(missing)"
    if not isinstance(v, str):
        return str(v)
    try:
        number = not math.isnan(float(v))  # "1", "1.5", "inf": the label of a number
    except ValueError:
        number = False
    return f'"{v}"' if number or v in _OTHER_LABELS or v.startswith('"') else v


def label_of(values: GroupKey) -> str:
    """A group's values as people read them (``count · speech``; a missing value is ``(missing)``; a
    text that would read as a number, true/false or missing is quoted: ``"1"`` is not ``1``)."""
    return " · ".join(map(_label, values))


def short_label(label: str) -> str:
    """``label`` cut to :data:`LABEL_CHARS` for a table or a line (the JSON keeps it whole)."""
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


def drawn(groups: Sequence[T], limit: int = TABLE_GROUPS) -> tuple[list[T], str | None]:
    """The groups a table draws (the first ``limit``: the largest) and, when some are left out, the
    line that says how many (every group is in the JSON document)."""
    if len(groups) <= limit:
        return list(groups), None
    return list(groups[:limit]), (f"{len(groups) - limit} smaller group(s) not drawn (of {len(groups)}): every group "
                                  "is in the JSON document (--json, or the run's summary.json)")


def undefined_reasons(summary: RunSummary) -> dict[str, str]:
    """Why each figure of a group's summary that has no value has none (figure → reason)."""
    out: dict[str, str] = {}
    cases = ", ".join(f"{k} {v}" for k, v in sorted(summary.cases.items())) or "no items"
    for m in METRICS:
        if getattr(summary, m).value is None:
            out[m] = f"no item of this group was judged ({cases})"
    if summary.accuracy is None:
        out["accuracy"] = "no item of this group has a gold option (or every one is an error)"
        out["attributed_accuracy"] = out["accuracy"]
    elif summary.accuracy_answered is not None and summary.accuracy_answered.value is None:
        out["accuracy_answered"] = "no answer of this group could be read"
    return out


def summary_options(summary: RunSummary) -> dict[str, Any]:
    """The :func:`murgat.core.metric.summarize_results` options a run's summary was made with (precision
    mode, empty policy, clustering, bootstrap, threshold), so its groups are summarised the same way."""
    b = summary.bootstrap or {}
    return {"precision_mode": summary.precision_mode, "empty_policy": summary.empty_policy,
            "cluster_by_video": b.get("clustered_by") == "video", "n_resamples": int(b.get("n_resamples", 2000)),
            "seed": int(b.get("seed", 0)), "attributed_threshold": summary.attributed_threshold}


@dataclass
class Group:
    """One group: its values (one per ``by`` field), its record ids and its figures."""

    values: GroupKey
    ids: list[str]
    summary: RunSummary

    @property
    def label(self) -> str:
        return label_of(self.values)


@dataclass
class Breakdown:
    """A run's figures by ``by``: groups in order of size (largest first), then of their values."""

    by: tuple[str, ...]
    groups: list[Group]
    n_items: int
    list_valued: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"by": list(self.by), "n_items": self.n_items, "list_valued": self.list_valued,
                "note": (f"list-valued field(s) {', '.join(self.list_valued)}: an item counts once in each of its "
                         "values, so the groups' n add up to more than the run's") if self.list_valued else None,
                "groups": [{"values": list(g.values), "label": g.label, "n_items": len(g.ids),
                            **g.summary.model_dump(mode="json"), "undefined": undefined_reasons(g.summary)}
                           for g in self.groups]}


def _sort_key(item: tuple[GroupKey, Sequence[Any]]) -> tuple[int, str]:
    key, members = item
    return (-len(members), repr(tuple("" if v is None else v for v in key)))


def breakdown(results: Sequence[ResponseResult], by: str | Sequence[str], *,
              fields_of: Callable[[ResponseResult], Mapping[str, Any]] = record_fields,
              **summary_options: Any) -> Breakdown:
    """The figures of ``results`` per group of ``by`` (``summary_options``: those of
    :func:`murgat.core.metric.summarize_results` — precision mode, empty policy, clustering, bootstrap)."""
    names = field_names(by)
    members, list_valued = grouped(results, names, fields_of)
    groups = [Group(values=key, ids=[r.id for r in rs], summary=summarize_results(rs, **summary_options))
              for key, rs in members]
    return Breakdown(by=names, groups=groups, n_items=len(results), list_valued=list_valued)


@dataclass
class GroupDifference:
    """Within one group, run B minus run A over the items both scored (paired by id)."""

    values: GroupKey
    n_common: int
    differences: dict[str, Interval]
    note: str | None = None

    @property
    def label(self) -> str:
        return label_of(self.values)

    def as_dict(self) -> dict[str, Any]:
        """The group's differences as JSON; a difference over no pair is null, said in ``undefined``."""
        return {"values": list(self.values), "label": self.label, "n_common": self.n_common, "note": self.note,
                **{k: iv.model_dump(mode="json") for k, iv in self.differences.items()},
                "undefined": {k: "no item of this group has the figure in both runs" for k, iv in
                              self.differences.items() if iv.value is None}}


def group_differences(a: Sequence[ResponseResult], b: Sequence[ResponseResult], by: str | Sequence[str], *,
                      fields_of: Callable[[ResponseResult], Mapping[str, Any]] = record_fields,
                      n_resamples: int = 2000, seed: int = 0) -> list[GroupDifference]:
    """Paired bootstrap CIs of B − A per group of ``by`` (groups from run A's records, else B's):
    for each of :data:`murgat.core.metric.METRICS` the pairs where both values are defined, and for
    ``accuracy`` the pairs where both are judged correct or not. Error records pair with nothing;
    a group with no pair is listed with ``n_common`` 0 and a note."""
    names = field_names(by)
    ra = {r.id: r for r in a if r.error is None}
    rb = {r.id: r for r in b if r.error is None}
    keyed: dict[tuple[Any, ...], tuple[GroupKey, list[str]]] = {}
    for rid in sorted(set(ra) | set(rb)):
        r = ra[rid] if rid in ra and (ra[rid].meta.get("item") or rid not in rb) else rb[rid]
        for key in group_keys(fields_of(r), names):
            keyed.setdefault(_ident(key), (key, []))[1].append(rid)
    out: list[GroupDifference] = []
    for key, all_ids in sorted(keyed.values(), key=_sort_key):
        ids = [i for i in all_ids if i in ra and i in rb]
        diffs: dict[str, Interval] = {}
        for m in METRICS:
            pairs = [(getattr(ra[i].scores, m), getattr(rb[i].scores, m)) for i in ids]
            kept = [(x, y) for x, y in pairs if x is not None and y is not None]
            diffs[m] = paired_bootstrap_diff([x for x, _ in kept], [y for _, y in kept], n_resamples, seed)
        acc = [(ra[i].correct, rb[i].correct) for i in ids if ra[i].correct is not None and rb[i].correct is not None]
        diffs["accuracy"] = paired_bootstrap_diff([1.0 if x else 0.0 for x, _ in acc], [1.0 if y else 0.0 for _, y in acc],
                                                  n_resamples, seed)
        note = None if ids else "no item of this group was scored in both runs: no paired difference"
        out.append(GroupDifference(values=key, n_common=len(ids), differences=diffs, note=note))
    return out
