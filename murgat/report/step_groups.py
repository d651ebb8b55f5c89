"""``faithfulness --by`` and ``reflect --by``: the run's figures per group of an item field.

The grouping is :mod:`murgat.core.breakdown`'s (:func:`~murgat.core.breakdown.grouped`: list-valued fields count
an item once per value, a missing value is its own group); each group's figures are exactly the
command's own summary of its records (:func:`~murgat.core.upr.summarize_faithfulness`,
:func:`~murgat.core.upr.summarize_reflection`), so a group of every item is the run. A
group whose UPR has no perception step to stand on is undefined (null with the reason), never 0.
The fields are each record's item's (``meta.item``, written by the item tasks) and its own outcome
fields, with the input's fields as they are now winning (a folder resumed from an input that gained
fields); a field no item has is refused before any work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from murgat.core.breakdown import (
    check_by,
    drawn,
    field_names,
    fields_available,
    groupable_fields,
    grouped,
    item_fields,
    label_of,
    short_label,
)
from murgat.core.comparison import fmt
from murgat.core.schema import Item
from murgat.core.steps import FaithResult
from murgat.core.upr import summarize_faithfulness, summarize_reflection
from murgat.engine.errors import SettingsError

#: a faithfulness record's own fields ``--by`` can group on
FAITH_OUTCOME_FIELDS = ("case", "correct", "video", "gold", "predicted_option")
#: a reflect row's own fields ``--by`` can group on (the answers graded before and after reflection)
REFLECT_OUTCOME_FIELDS = ("correct_before", "correct_after")
NO_PERCEPTION = "no perception step of this group was decided"
NO_GOLD = "no item of this group has a gold option (or every one is an error)"
NO_ANSWER_READ = "no answer of this group could be read"


def _kept(meta: Any) -> dict[str, Any]:
    return groupable_fields(meta.get("item") if isinstance(meta, dict) else None)


def by_fields(by: Sequence[str], items: Sequence[Item], own: Sequence[str]) -> None:
    """Refuse (exit 2, before any work) a ``by`` that names a field neither the items nor the records
    have, naming it and the fields there are (:class:`~murgat.core.breakdown.UnknownField`)."""
    try:
        check_by(by, fields_available([*(item_fields(it) for it in items), dict.fromkeys(own)]))
    except ValueError as exc:  # UnknownField, or an empty name
        raise SettingsError(str(exc)) from None


def faith_fields(items: Sequence[Item]) -> Callable[[FaithResult], Mapping[str, Any]]:
    now = {it.id: item_fields(it) for it in items}
    return lambda r: {"case": r.case, "correct": r.correct, "video": r.video, "gold": r.gold,
                      "predicted_option": r.predicted_option, **_kept(r.meta), **now.get(r.id, {})}


def faithfulness_breakdown(results: Sequence[FaithResult], by: Sequence[str], items: Sequence[Item],
                           n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The faithfulness summary per group of ``by`` (see the module docstring)."""
    groups, list_valued = grouped(list(results), by, faith_fields(items))
    out = []
    for key, members in groups:
        doc = summarize_faithfulness(members, n_resamples, seed)
        undefined = {k: NO_PERCEPTION for k in ("upr", "upr_per_response_mean") if doc[k]["value"] is None}
        undefined |= _accuracy_undefined(doc, "accuracy", "accuracy_answered")
        out.append({"values": list(key), "label": label_of(key), **doc, "undefined": undefined})
    return _doc(by, len(results), list_valued, out)


def reflection_breakdown(rows: Sequence[dict[str, Any]], by: Sequence[str], items: Sequence[Item],
                         n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The reflect summary per group of ``by`` over a run's ``results.jsonl`` pair records
    (``{id, record, trace}``); an item that could not be reflected counts in its group's errors."""
    now = {it.id: item_fields(it) for it in items}

    def fields(row: dict[str, Any]) -> dict[str, Any]:
        trace = row.get("trace") or {}
        return {**{k: trace.get(k) for k in REFLECT_OUTCOME_FIELDS}, **_kept(trace.get("meta")),
                **now.get(str(row.get("id")), {})}

    groups, list_valued = grouped(list(rows), by, fields)
    out = []
    for key, members in groups:
        traces = [r["trace"] for r in members if "trace" in r.get("trace", {})]
        doc = summarize_reflection(traces, len(members), n_resamples, seed)
        undefined = {k: NO_PERCEPTION for k in ("upr_before", "upr_after", "upr_difference") if doc[k]["value"] is None}
        for when in ("before", "after"):
            undefined |= _accuracy_undefined(doc, f"accuracy_{when}", f"accuracy_answered_{when}")
        if doc["accuracy_difference"] is None:
            undefined["accuracy_difference"] = NO_GOLD
        out.append({"values": list(key), "label": label_of(key), **doc, "undefined": undefined})
    return _doc(by, len(rows), list_valued, out)


def _accuracy_undefined(doc: dict[str, Any], accuracy: str, answered: str) -> dict[str, str]:
    """Why a group's accuracy figures are null (no gold option; no answer read), never a bare null."""
    def missing(v: Any) -> bool:
        return v is None or (isinstance(v, dict) and v.get("value") is None)

    if missing(doc.get(accuracy)):
        return {accuracy: NO_GOLD, answered: NO_GOLD}
    return {answered: NO_ANSWER_READ} if missing(doc.get(answered)) else {}


def _doc(by: Sequence[str], n: int, list_valued: list[str], groups: list[dict[str, Any]]) -> dict[str, Any]:
    return {"by": list(field_names(by)), "n_items": n, "list_valued": list_valued,
            "note": (f"list-valued field(s) {', '.join(list_valued)}: an item counts once in each of its values, so "
                     "the groups' n add up to more than the run's") if list_valued else None, "groups": groups}


def pct(iv: dict[str, Any] | None) -> str:
    """A share with its CI, in percent (the faithfulness and reflect tables)."""
    return fmt(iv, ".1%")


def _pct(iv: Any) -> str:
    return "undefined" if not isinstance(iv, dict) or iv.get("value") is None else fmt(iv, ".1%")


def print_faithfulness_breakdown(doc: dict[str, Any]) -> None:
    """One row per group: responses, decided perception steps, UPR [95% CI], accuracy, errors."""
    _print_groups(doc, "step faithfulness by {by} (95% CI)",
                  ("responses", "perception steps", "UPR", "mean per-response UPR", "accuracy", "errors"),
                  lambda g: (str(g["n_items"]), str(g["perception_steps"]), _pct(g["upr"]),
                             _pct(g["upr_per_response_mean"]), _pct(g.get("accuracy")), str(g["n_errors"])))


def print_reflection_breakdown(doc: dict[str, Any]) -> None:
    """One row per group: items, reflected, the judge's UPR before and after and its difference [95% CI]."""
    _print_groups(doc, "murgat reflect by {by} (the judge's UPR; 95% CI)",
                  ("items", "reflected", "UPR before", "UPR after", "difference", "errors"),
                  lambda g: (str(g["items"]), str(g["reflected"]), _pct(g["upr_before"]), _pct(g["upr_after"]),
                             _pct(g["upr_difference"]), str(g["errors"])))


def _print_groups(doc: dict[str, Any], title: str, columns: Sequence[str],
                  cells: Callable[[dict[str, Any]], Sequence[str]]) -> None:
    """The group table (the largest groups drawn, labels cut: murgat.core.breakdown's limits), what was
    left out, its note, and each drawn group's undefined figures with their reasons."""
    from rich.table import Table

    from murgat.core.console import console

    con = console()
    by = " × ".join(doc["by"])
    t = Table(title=title.format(by=by))
    t.add_column(by, justify="left")
    for col in columns:
        t.add_column(col, justify="right")
    shown, left_out = drawn(doc["groups"])
    for g in shown:
        t.add_row(short_label(g["label"]), *cells(g))
    con.print(t)
    for line in (left_out, doc.get("note")):
        if line:
            con.print(line, soft_wrap=True)
    for g in shown:
        for reason in dict.fromkeys(g["undefined"].values()):
            names = ", ".join(k for k, v in g["undefined"].items() if v == reason)
            con.print(f"{short_label(g['label'])}: {names} undefined: {reason}", soft_wrap=True)
