"""Record-derived text shown to people: every control character (C0, DEL, C1, bidirectional overrides)
is written as a visible escape, so an id cannot set the window title, recolour or clear the screen."""

from __future__ import annotations

import pytest

from murgat.core.terminal import for_terminal

#: an OSC sequence that sets the window title, and a CSI colour change
OSC_TITLE = "\x1b]0;pwned\x07"
CSI_RED = "\x1b[31m"


def test_escape_sequences_are_shown_not_sent() -> None:
    shown = for_terminal(f"item{OSC_TITLE}x{CSI_RED}y")
    assert shown == "item\\x1b]0;pwned\\x07x\\x1b[31my"
    assert all(ch.isprintable() for ch in shown)


@pytest.mark.parametrize(("raw", "shown"), [
    ("a\rb", "a\\x0db"), ("a\nb\tc", "a\\x0ab\\x09c"), ("\x00\x7f", "\\x00\\x7f"),
    ("\x9b31m", "\\x9b31m"),  # a C1 CSI: one byte some terminals obey like ESC [
    ("abc\u202edcba", "abc\\u202edcba"), ("x\u2028y", "x\\u2028y"),
])
def test_every_control_character_is_visible(raw: str, shown: str) -> None:
    assert for_terminal(raw) == shown


def test_printable_text_is_unchanged() -> None:
    for text in ("friday-mood", "Zürich 東京 ✓", "C:\\media\\a.mp4", "👩\u200d💻 emoji", "[red]not markup[/red]"):
        assert for_terminal(text) == text
    assert for_terminal(12) == "12"
