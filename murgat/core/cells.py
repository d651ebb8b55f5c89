"""Table cells that wrap where a reader expects: at spaces and after path separators, never inside a word.

rich wraps a cell at spaces only, so a path (one "word" to it) or a label longer than its column is
folded at whatever character the width falls on — ``runs/sweep/effort-low/gemini-2`` then
``.5-flash/run``, which reads as two other names. A :class:`Cell` breaks a line after a space or a
``/`` or ``\\``, tells the table that its narrowest width is its longest unbreakable piece (so the
table keeps whole pieces whenever the console is wide enough), and when even one piece is wider
than the column it is given, breaks it after a hyphen, underscore or dot, and only a part without
any of them that is still too wide is shortened in its middle with ``…`` (its start and end, which
tell ids and paths apart, stay). The text is shown through :func:`murgat.core.terminal.for_terminal`.

rich is imported when a cell is drawn, not with the module (as :mod:`murgat.core.terminal`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from murgat.core.terminal import for_terminal

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.measure import Measurement
    from rich.text import Text

ELLIPSIS = "…"
#: a piece ends after a run of spaces, or after a path separator (the separator stays with the folder); a
#: backslash that starts an escape of :func:`~murgat.core.terminal.for_terminal` (``\x1b``, ``\u202e``) is
#: part of the word, not a Windows path's separator
_PIECE = re.compile(r"(?:\\(?=x[0-9a-f]{2}|u[0-9a-f]{4})|[^\s/\\])*(?:[/\\]+|\s+|$)")
#: where a piece too wide for its column may break as a last resort: after a hyphen, underscore or dot
_JOINT = re.compile(r"(?<=[-_.])")


def pieces(text: str) -> list[str]:
    """``text`` cut where a line may break: after each run of spaces and each path separator.
    Joined again they are ``text``: ``"runs/a b"`` → ``["runs/", "a ", "b"]``."""
    return [p for p in _PIECE.findall(text) if p]


def _width(text: str) -> int:
    from rich.cells import cell_len

    return int(cell_len(text))


def middle_cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` terminal cells: whole when it fits, else its start and its end
    either side of ``…`` (the end gets the odd cell: a path's file name and an id's number are there)."""
    if _width(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    head = ""
    for ch in text:
        if _width(head + ch) > (width - 1) // 2:
            break
        head += ch
    tail = ""
    for ch in reversed(text):  # the end takes every cell the start left (a wide letter may leave one)
        if _width(ch + tail) > width - 1 - _width(head):
            break
        tail = ch + tail
    return f"{head}{ELLIPSIS}{tail}"


def _pack(parts: list[str], width: int, split: bool) -> list[str]:
    lines: list[str] = []
    line = ""
    for part in parts:
        if line and _width((line + part).rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        if not line and _width(part.rstrip()) > width:
            # wider than the column on its own: after its hyphens, underscores and dots, else cut in the middle
            inner = [p for p in _JOINT.split(part) if p] if split else []
            lines.extend(_pack(inner, width, False) if len(inner) > 1 else [middle_cut(part.rstrip(), width)])
            continue
        line += part
    if line or not lines:
        lines.append(line.rstrip())
    return lines


def wrap(text: str, width: int) -> list[str]:
    """The lines of ``text`` in a column ``width`` cells wide: whole pieces (:func:`pieces`) packed
    greedily, spaces at a line's end dropped. A piece wider than the column starts a line and breaks
    after its hyphens, underscores or dots (``gemini-2.5-`` ``flash``); a part of it wider still is cut
    in its middle (:func:`middle_cut`), never folded at an arbitrary letter."""
    return _pack(pieces(text), max(1, width), True)


class Cell:
    """A table cell of text from a record (an id, a run folder, a group's label): shown safely
    (:func:`~murgat.core.terminal.for_terminal`) and wrapped by :func:`wrap` to the column's width."""

    def __init__(self, text: object, style: str = "") -> None:
        self.text = for_terminal(text)
        self.style = style

    def __str__(self) -> str:
        return self.text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        from rich.measure import Measurement

        widest = max((_width(p.rstrip()) for p in pieces(self.text)), default=0)
        return Measurement(min(widest, options.max_width), min(_width(self.text), options.max_width))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        from rich.text import Text

        yield Text("\n".join(wrap(self.text, options.max_width)), style=self.style, no_wrap=True, overflow="crop")


__all__ = ["Cell", "middle_cut", "pieces", "wrap"]
