"""The tables of ``--by`` for people: a run's figures per group (``score --by``, ``summarize RUN --by``)
and the paired group differences of two runs (``summarize A B --by``). The figures themselves are
:mod:`murgat.core.breakdown`'s; these only draw its JSON documents (``summary.json``'s ``breakdown``), so
what is printed is exactly what is written (at most :data:`murgat.core.breakdown.TABLE_GROUPS` groups, the
largest, each label cut: :func:`murgat.core.breakdown.drawn`). rich is imported when a table is drawn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from murgat.core.breakdown import drawn, short_label
from murgat.core.cells import Cell
from murgat.core.comparison import fmt
from murgat.core.metric import METRICS
from murgat.core.terminal import for_terminal

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

#: a figure without a value (no judged item in the group): said, never a 0 or a dash that reads as missing
UNDEFINED = "undefined"
#: the metrics shown as value only (their CIs are in the JSON document); MURGAT-S and accuracy get theirs
PLAIN = ("coverage", "precision", "recall", "f1")


def _cell(iv: dict[str, Any] | None, spec: str = ".3f", with_ci: bool = True) -> str:
    if not isinstance(iv, dict) or iv.get("value") is None:
        return UNDEFINED
    if not with_ci:
        return format(iv["value"], spec)
    return fmt(iv, spec)


def breakdown_table(doc: dict[str, Any], title: str = "") -> Table:
    """One row per group of a breakdown document (:meth:`murgat.core.breakdown.Breakdown.as_dict`):
    its items, how many were judged, the means (MURGAT-S and accuracy with their 95% CIs) and errors. The
    labels are the records' values: plain text (no markup), control characters shown as escapes."""
    from rich.table import Table
    from rich.text import Text

    by = for_terminal(" × ".join(doc["by"]))
    t = Table(title=Text(for_terminal(title) if title else
                         f"by {by} (means; MURGAT-S and accuracy [95% CI]; every CI in the JSON)"))
    t.add_column(Text(by))  # the whole (cut) label, wrapped at spaces and "/" (murgat.core.cells)
    for col in ("items", "judged", *PLAIN, "MURGAT-S", "accuracy", "SAA", "errors"):
        t.add_column(col, justify="right", no_wrap=col in ("MURGAT-S", "accuracy"))
    for g in drawn(doc["groups"])[0]:
        t.add_row(Cell(short_label(g["label"])), str(g["n_items"]), str(g["murgat_s"]["n"]),
                  *(_cell(g[m], with_ci=False) for m in PLAIN), _cell(g["murgat_s"]),
                  _cell(g.get("accuracy")), _cell(g.get("attributed_accuracy"), with_ci=False), str(g["n_errors"]))
    return t


def undefined_lines(doc: dict[str, Any]) -> list[str]:
    """Why a group's MURGAT-S is undefined, one line per such group (printed under the table)."""
    return [f"{short_label(g['label'])}: MURGAT-S undefined: {g['undefined']['murgat_s']}"
            for g in drawn(doc["groups"])[0] if "murgat_s" in (g.get("undefined") or {})]


def print_breakdown(doc: dict[str, Any], con: Console, title: str = "") -> None:
    """The table, the groups not drawn, the list-valued note and why any drawn group's figures are undefined
    (lines that name the records' values: plain text, control characters shown as escapes)."""
    from rich.text import Text

    con.print(breakdown_table(doc, title))
    left_out = drawn(doc["groups"])[1]
    for line in [*([left_out] if left_out else []), *([doc["note"]] if doc.get("note") else []), *undefined_lines(doc)]:
        con.print(Text(for_terminal(line)), soft_wrap=True)


def differences_table(doc: dict[str, Any]) -> Table:
    """Paired group differences B − A (``summarize A B --by``): one row per group, its pairs and the
    difference of each mean with its paired bootstrap 95% CI."""
    from rich.table import Table
    from rich.text import Text

    by = for_terminal(" × ".join(doc["by"]))
    t = Table(title=Text(f"{for_terminal(doc['run'])} − {for_terminal(doc['against'])} by {by} (items of each group "
                         "scored in both runs, paired by id; paired bootstrap 95% CI)"))
    t.add_column(Text(by))
    t.add_column("pairs", justify="right")
    for m in (*METRICS, "accuracy"):
        t.add_column(f"Δ {m}", justify="right")
    shown, left_out = drawn(doc["groups"])
    if left_out:
        t.caption = Text(for_terminal(left_out))
    for g in shown:
        t.add_row(Cell(short_label(g["label"])), str(g["n_common"]),
                  *(_cell(g.get(m), "+.3f") for m in (*METRICS, "accuracy")))
    return t
