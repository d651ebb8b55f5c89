"""Console tables keep paths and ids whole: a long run folder breaks after a "/", never inside a name
(before, ``runs/sweep/effort-low/gemini-2`` over ``.5-flash/run``: a name that reads as two others)."""

from __future__ import annotations

from rich.console import Console

from murgat.core.schema import ResponseResult
from murgat.report.tables import comparison_table, items_table

FIGURES = ("murgat_s", "coverage", "precision", "recall", "f1", "accuracy", "attributed_accuracy")


def _first_column(table: object, width: int) -> list[str]:
    """The text in the first column of each drawn row, line by line."""
    con = Console(width=width, record=True, color_system=None)
    con.print(table)
    return [line.split("│")[1].strip() for line in con.export_text().splitlines() if line.startswith("│")]


def test_run_folders_in_the_comparison_break_after_a_slash_not_inside_a_name() -> None:
    runs = ["runs/sweep/effort-low/gemini-2.5-flash/run", "runs/sweep/effort-high/gemini-2.5-flash/run"]
    doc = {"runs": [{"run": r, **dict.fromkeys(FIGURES), "n_answer_unknown": 0} for r in runs], "differences": []}
    cells = _first_column(comparison_table(doc), 140)
    assert cells == ["runs/sweep/effort-low/", "gemini-2.5-flash/run", "runs/sweep/effort-high/", "gemini-2.5-flash/run"]


def test_ids_in_the_items_table_are_never_folded_inside_a_word() -> None:
    ids = ["nextgqa/val/4010069381/question-7", "nextgqa/val/4010069381/question-12"]
    results = [ResponseResult(id=i, error="missing_media: no file") for i in ids]
    cells = [c for c in _first_column(items_table(results), 100) if c]
    assert "".join(cells) == "".join(ids)  # nothing cut
    assert all(c.endswith("/") or c.startswith("question-") for c in cells), cells
