"""The one rule for "is this answer correct?", used by every command.

A multiple-choice item's gold answer is written three ways in the datasets murgat reads:

- a **letter** — ``"B"``, ``"(B)"``, ``"b"``, ``"B."``;
- the **text of an option** — ``"blue"`` when the options are ``["red", "blue"]``
  (NExT-GQA's csv, many JSON exports); compared after trimming and case-folding;
- a **0-based index** — the JSON number ``1`` (read as the string ``"1"``), or ``"#1"``.

Order of the tests, so an answer is never read two ways: a single letter within the options
first, then an exact option text (so an option whose text is ``"1"`` wins over index 1), then
an index. A gold answer that is none of these (free-form text, a letter past the options) has
no gold option: the item is left out of accuracy, and :func:`gold_problem` says why, so a
command can report it instead of dropping it silently.

The predicted option comes from :func:`murgat.text.preprocess` (``Answer: X``). An item is
correct when the predicted letter equals the gold letter; ``None`` when either is missing.
"""

from __future__ import annotations

from collections.abc import Sequence

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _letter(text: str, n_options: int) -> str | None:
    t = text.strip().strip("()[]").strip().rstrip(".):").strip()
    if len(t) == 1 and t.upper() in LETTERS:
        idx = LETTERS.index(t.upper())
        if n_options == 0 or idx < n_options:
            return t.upper()
    return None


def gold_option(gold: str | int | None, options: Sequence[str] | None) -> str | None:
    """The gold option letter of an item, or ``None`` when the gold answer names no option."""
    if gold is None or isinstance(gold, bool):
        return None
    opts = list(options or [])
    if isinstance(gold, int):
        return LETTERS[gold] if 0 <= gold < min(len(opts) or len(LETTERS), len(LETTERS)) else None
    g = str(gold).strip()
    if not g:
        return None
    letter = _letter(g, len(opts))
    if letter is not None:
        return letter
    folded = g.casefold()
    for i, opt in enumerate(opts[: len(LETTERS)]):
        if str(opt).strip().casefold() == folded:
            return LETTERS[i]
    digits = g[1:] if g.startswith("#") else g
    if digits.isascii() and digits.isdigit():
        idx = int(digits)
        if 0 <= idx < min(len(opts) or len(LETTERS), len(LETTERS)):
            return LETTERS[idx]
    return None


def gold_problem(gold: str | int | None, options: Sequence[str] | None) -> str | None:
    """Why an item with a gold answer cannot count towards accuracy (``None`` when it can or has none)."""
    if gold is None or (isinstance(gold, str) and not gold.strip()):
        return None
    if gold_option(gold, options) is not None:
        return None
    if not options:
        return f"gold answer {str(gold)[:40]!r} is not an option letter and the item has no options"
    return f"gold answer {str(gold)[:40]!r} is neither a letter, an option's text nor an index of the {len(options)} options"


def is_correct(predicted_option: str | None, gold: str | int | None, options: Sequence[str] | None) -> bool | None:
    """``True``/``False`` when the item has a gold option; ``None`` otherwise (left out of accuracy)."""
    g = gold_option(gold, options)
    if g is None:
        return None
    return predicted_option is not None and predicted_option.strip().upper() == g
