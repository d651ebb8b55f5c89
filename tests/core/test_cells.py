"""Table cells break after spaces and path separators, never inside a word (murgat.core.cells)."""

from __future__ import annotations

import pytest

from murgat.core.cells import Cell, middle_cut, pieces, wrap


def test_pieces_end_after_spaces_and_separators_and_join_back_to_the_text() -> None:
    text = r"runs/sweep/effort-low run C:\data\a.mp4  x"
    assert pieces(text) == ["runs/", "sweep/", "effort-low ", "run ", "C:\\", "data\\", "a.mp4  ", "x"]
    assert "".join(pieces(text)) == text
    assert pieces("") == []
    assert pieces("red\\x1b[31m group\\u202e C:\\x") == ["red\\x1b[31m ", "group\\u202e ", "C:\\", "x"]


@pytest.mark.parametrize("width", range(1, 45))
def test_wrapped_lines_fit_and_keep_every_piece_that_fits_whole(width: int) -> None:
    text = "runs/sweep/effort-high/gemini-2.5-flash/run and a label"
    lines = wrap(text, width)
    assert all(len(line) <= width for line in lines)
    whole = [p.strip() for p in pieces(text) if len(p.strip()) <= width]
    shown = "".join(lines)
    for p in whole:  # a piece that fits in the column is on one line, as it is
        assert any(p in line for line in lines), (p, lines)
    if "…" not in shown:  # nothing cut: every letter is there, in order
        assert shown.replace(" ", "") == text.replace(" ", "")


def test_a_piece_wider_than_its_column_breaks_after_a_hyphen_or_dot_before_it_is_cut() -> None:
    assert wrap("runs/gemini-2.5-flash-preview/run", 12) == ["runs/", "gemini-2.5-", "flash-", "preview/", "run"]
    assert wrap("abcdefghijklmnopqrstuvwxyz", 9) == ["abcd…wxyz"]


def test_middle_cut_keeps_the_start_and_the_end() -> None:
    assert middle_cut("item-000123", 20) == "item-000123"
    assert middle_cut("abcdefghij", 5) == "ab…ij"
    assert middle_cut("abcdefghij", 6) == "ab…hij"  # the end gets the odd cell
    assert middle_cut("abc", 1) == "…" and middle_cut("abc", 0) == ""


def test_wide_characters_are_measured_in_terminal_cells() -> None:
    from rich.cells import cell_len

    assert wrap("视频/声音", 5) == ["视频/", "声音"]
    assert middle_cut("视频/", 4) == "…频/"
    for width in range(1, 12):
        assert all(cell_len(line) <= width for line in wrap("视频视频视频/声音 声音", width))


def test_a_cell_shows_control_characters_as_escapes() -> None:
    assert str(Cell("a\x1b[2Jb")) == "a\\x1b[2Jb"
