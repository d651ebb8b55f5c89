"""Finding the program in a planner's answer: the size is checked first, and the work is
linear in the answer (counted in characters scanned, not timed)."""

from __future__ import annotations

import pytest

import murgat.programs.extract as extract
from murgat.programs.extract import NoProgram, extract_logic, extract_narrative


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Characters handed to the paren scanner, call by call."""
    counts: list[int] = []
    real = extract._balanced_end

    def counting(s: str, open_at: int, *rest):
        counts.append(len(s) - open_at)
        return real(s, open_at, *rest)

    monkeypatch.setattr(extract, "_balanced_end", counting)
    return counts


def test_a_call_spread_over_many_lines_is_scanned_once(scanned: list[int]) -> None:
    """Rescanning the pending call after every line made 8,000 lines take seconds and
    100,000 blank lines hang (quadratic); each character is now scanned once."""
    text = '- describe("00:01", "visual",' + "\n" * 8_000 + '  "Who is there?")\n- synthesize("Decide.")\n'
    out = extract_narrative(text)
    assert out.endswith('"Who is there?")\nsynthesize("Decide.")\n')
    assert sum(scanned) <= 2 * len(text)


def test_one_hundred_thousand_blank_lines_inside_a_call(scanned: list[int]) -> None:
    text = 'describe("00:01", "audio",' + "\n" * 100_000 + ' "x")\n'
    assert extract_narrative(text).count("\n") == 100_001
    assert sum(scanned) <= 2 * len(text)


def test_eight_thousand_bullets(scanned: list[int]) -> None:
    text = "".join(f'{k}. describe("00:{k % 60:02d}", "visual",\n   "Who is there {k}?")  -> note\n' for k in range(4_000))
    out = extract_narrative(text)
    assert out.count("describe(") == 4_000 and "-> note" not in out
    assert sum(scanned) <= 2 * len(text)


def test_quotes_and_escapes_carry_over_line_breaks() -> None:
    text = 'describe("00:01", "audio", "a ) still \\\n quoted",\n "b")\nafter\n'
    assert extract_narrative(text) == 'describe("00:01", "audio", "a ) still \\\n quoted",\n "b")\n'


@pytest.mark.parametrize("fn", [extract_logic, extract_narrative])
def test_the_answer_size_is_checked_before_anything_is_scanned(fn, scanned: list[int]) -> None:
    text = "describe(" + "\n" * 300_000
    with pytest.raises(NoProgram, match="longer than 200000 characters"):
        fn(text, 200_000)
    assert scanned == []
