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
- **Missing values** form their own group (value ``None``), so no item silently leaves the table.
- **Each group's figures** are exactly a run summary over its records
  (:func:`murgat.metric.summarize_results`: means with bootstrap CIs and ``n``, accuracy, strict
  attributed accuracy, cases), so a group of every item reproduces the run's own figures.
- **Paired group differences** (:func:`group_differences`, for ``summarize A B --by …``): within
  each group, the items scored in both runs, paired by id, with the paired bootstrap CI of B − A
  (:func:`murgat.metric.paired_bootstrap_diff`), for each metric and for accuracy.

Several fields at once (``by=["task_type", "duration"]``) group by the combination of their values.

- **Undefined, never 0.** A group none of whose items was judged has no mean: its figures are null
  and :meth:`Breakdown.as_dict` says why (``undefined``: figure → reason), with the group's ``n``.
- **A field no item has** is refused (:func:`check_by`, :class:`UnknownField`) naming it and the
  fields the items do have, before any work: a typo must not give a table of one "(missing)" group.

:func:`grouped` is the grouping alone (any record type): ``ground --by`` groups its own records
with it and computes each group's figures with its own summary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from murgat.metric import METRICS, paired_bootstrap_diff, summarize_results
from murgat.schema import Interval, Item, ResponseResult, RunSummary

#: extras other commands add to the records they write (generate's usage, cache flag, post-hoc
#: verdict, failure) or that are the work itself: never a category
BOOKKEEPING = frozenset({"usage", "cached", "posthoc", "generation_error", "response", "input_digest"})

GroupKey = tuple[Any, ...]
T = TypeVar("T")

#: a score record's own outcome fields (:func:`record_fields`), groupable in every run
OUTCOME_FIELDS = ("case", "correct", "video", "predicted_option", "gold")
#: at most this many field names are listed in an :class:`UnknownField` message
LISTED_FIELDS = 60


def _groupable(value: Any) -> bool:
    if isinstance(value, str | int | float | bool) or value is None:
        return True
    return isinstance(value, list) and all(isinstance(v, str | int | float | bool) or v is None for v in value)


def item_fields(item: Item) -> dict[str, Any]:
    """The fields of ``item`` that figures can be grouped by (see the module docstring)."""
    out: dict[str, Any] = {}
    if item.question_type is not None:
        out["question_type"] = item.question_type
    for k, v in (item.model_extra or {}).items():
        if k not in BOOKKEEPING and _groupable(v):
            out[k] = v
    for k, v in item.meta.items():
        if _groupable(v):
            out[k] = v
    return out


def record_fields(record: ResponseResult) -> dict[str, Any]:
    """A score record's groupable fields: its item's (``meta["item"]``) and its own outcome fields
    (:data:`OUTCOME_FIELDS`)."""
    own = {"case": "error" if record.error is not None else record.case, "correct": record.correct,
           "video": record.video, "predicted_option": record.predicted_option, "gold": record.gold}
    kept = record.meta.get("item")
    return {**own, **(kept if isinstance(kept, dict) else {})}


def _values(value: Any) -> list[Any]:
    """The group values of one field value: each distinct element of a list, once; ``[None]`` when
    missing or an empty list (the item is in the missing group rather than in none)."""
    if isinstance(value, list):
        seen: list[Any] = []
        for v in value:
            if v not in seen:
                seen.append(v)
        return seen or [None]
    return [value]


def group_keys(fields: Mapping[str, Any], by: Sequence[str]) -> list[GroupKey]:
    """Every group an item with ``fields`` belongs to under ``by`` (one per combination of values)."""
    keys: list[GroupKey] = [()]
    for name in by:
        keys = [(*k, v) for k in keys for v in _values(fields.get(name))]
    return keys


class UnknownField(ValueError):
    """``--by`` names a field no item has; the message names it and the fields the items have."""

    def __init__(self, unknown: Sequence[str], available: Iterable[str]) -> None:
        names = sorted(set(available))
        shown = ", ".join(names[:LISTED_FIELDS]) + (f", … ({len(names) - LISTED_FIELDS} more)"
                                                    if len(names) > LISTED_FIELDS else "")
        which = ", ".join(repr(n) for n in unknown)
        super().__init__(f"--by {which}: no item has {'this field' if len(unknown) == 1 else 'these fields'}; "
                         f"fields the items have: {shown or '(none)'}")
        self.unknown, self.available = list(unknown), names


def fields_available(fields: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every field name some item has (the union over ``fields``, one mapping per item)."""
    out: set[str] = set()
    for f in fields:
        out.update(f)
    return out


def check_by(by: str | Sequence[str], available: Iterable[str]) -> tuple[str, ...]:
    """``by`` as a tuple of field names, or :class:`UnknownField` when one of them (an empty one too)
    is not in ``available`` (``ValueError`` for no name at all)."""
    names = (by,) if isinstance(by, str) else tuple(by)
    if not names:
        raise ValueError("group by at least one field name")
    have = set(available)
    unknown = [n for n in dict.fromkeys(names) if not n or n not in have]
    if unknown:
        raise UnknownField(unknown, have)
    return names


def grouped(records: Sequence[T], by: str | Sequence[str],
            fields_of: Callable[[T], Mapping[str, Any]]) -> tuple[list[tuple[GroupKey, list[T]]], list[str]]:
    """``records`` by group of ``by`` (largest group first, then by value; each record once per
    group it belongs to, in input order), and the ``by`` fields that were list-valued somewhere."""
    names = _by(by)
    members: dict[GroupKey, list[T]] = {}
    list_valued: set[str] = set()
    for r in records:
        f = fields_of(r)
        list_valued.update(n for n in names if isinstance(f.get(n), list))
        for key in group_keys(f, names):
            members.setdefault(key, []).append(r)
    return sorted(members.items(), key=_sort_key), sorted(list_valued)


def label_of(values: GroupKey) -> str:
    """A group's values as people read them (``count · speech``; a missing value is ``(missing)``)."""
    return " · ".join("(missing)" if v is None else str(v) for v in values)


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
    """The :func:`murgat.metric.summarize_results` options a run's summary was made with (precision
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


def _sort_key(item: tuple[GroupKey, list[Any]]) -> tuple[int, str]:
    key, members = item
    return (-len(members), repr(tuple("" if v is None else v for v in key)))


def _by(by: str | Sequence[str]) -> tuple[str, ...]:
    names = (by,) if isinstance(by, str) else tuple(by)
    if not names or any(not n for n in names):
        raise ValueError("group by at least one field name")
    return names


def breakdown(results: Sequence[ResponseResult], by: str | Sequence[str], *,
              fields_of: Callable[[ResponseResult], Mapping[str, Any]] = record_fields,
              **summary_options: Any) -> Breakdown:
    """The figures of ``results`` per group of ``by`` (``summary_options``: those of
    :func:`murgat.metric.summarize_results` — precision mode, empty policy, clustering, bootstrap)."""
    names = _by(by)
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
    for each of :data:`murgat.metric.METRICS` the pairs where both values are defined, and for
    ``accuracy`` the pairs where both are judged correct or not. Error records pair with nothing;
    a group with no pair is listed with ``n_common`` 0 and a note."""
    names = _by(by)
    ra = {r.id: r for r in a if r.error is None}
    rb = {r.id: r for r in b if r.error is None}
    keyed: dict[GroupKey, list[str]] = {}
    for rid in sorted(set(ra) | set(rb)):
        r = ra[rid] if rid in ra and (ra[rid].meta.get("item") or rid not in rb) else rb[rid]
        for key in group_keys(fields_of(r), names):
            keyed.setdefault(key, []).append(rid)
    out: list[GroupDifference] = []
    for key, all_ids in sorted(keyed.items(), key=_sort_key):
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
