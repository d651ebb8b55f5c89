"""The one progress bar of a run over items (``murgat.engine.progress``)."""

from __future__ import annotations

from murgat.engine.progress import NullProgress, item_progress


def test_a_disabled_bar_is_the_null_one() -> None:
    assert isinstance(item_progress("score", disable=True), NullProgress)


def test_label_none_shows_each_bars_description(capsys) -> None:
    """``program`` draws one bar per variant, each named by its description."""
    with item_progress(None, disable=False) as progress:
        progress.add_task("logic-declarative", total=1)
        progress.add_task("narrative-imperative", total=1)
    err = capsys.readouterr().err
    assert "logic-declarative" in err and "narrative-imperative" in err


def test_a_label_names_every_bar(capsys) -> None:
    with item_progress("faithfulness", disable=False) as progress:
        progress.add_task("items", total=2)
    err = capsys.readouterr().err
    assert "faithfulness" in err and "items" not in err
