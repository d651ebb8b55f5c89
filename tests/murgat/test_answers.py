"""The one rule for "correct" (#21: score mapped an option's text to its letter, generate and
program needed a one-letter gold and silently left such items out of accuracy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.answers import gold_option, gold_problem, is_correct

OPTS = ["red", "Blue", "1"]


@pytest.mark.parametrize(("gold", "want"), [
    ("B", "B"), ("b", "B"), ("(B)", "B"), ("B.", "B"), ("blue", "B"), ("  BLUE ", "B"),
    ("1", "C"),  # an option whose text is "1" wins over index 1
    ("#1", "B"), (0, "A"), (2, "C"),
    ("D", None), ("green", None), (7, None), ("", None), (None, None), (True, None),
])
def test_gold_option(gold, want) -> None:
    assert gold_option(gold, OPTS) == want


def test_index_when_no_option_reads_as_it() -> None:
    assert gold_option("2", ["x", "y", "z"]) == "C"


def test_is_correct_and_problem() -> None:
    assert is_correct("B", "blue", OPTS) is True
    assert is_correct("A", "blue", OPTS) is False
    assert is_correct(None, "blue", OPTS) is False  # no answer given: wrong, not left out
    assert is_correct("A", "green", OPTS) is None
    assert gold_problem("green", OPTS) is not None and "neither" in gold_problem("green", OPTS)
    assert gold_problem("blue", OPTS) is None and gold_problem(None, OPTS) is None


def test_generate_counts_an_option_text_gold(tmp_path: Path, example_media: Path) -> None:
    """Before #21, generate required a one-letter gold: gold "b" (an option's text) gave no 'correct'."""
    from murgat.cli import main

    cas = tmp_path / "c.jsonl"
    cas.write_text(json.dumps({"match": {"task": "generate"}, "output": {"text": "It is b.\nAnswer: B"}}) + "\n")
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"id": "x", "media": "friday.mp4", "question": "?", "options": ["a", "b"], "gold": "b"}) + "\n")
    out = tmp_path / "gen"
    assert main(["generate", str(q), "--model", f"replay:{cas}", "--mode", "base", "--out", str(out),
                 "--media-root", str(example_media), "--json"]) == 0
    rec = json.loads((out / "responses.jsonl").read_text())
    assert rec["correct"] is True
    assert json.loads((out / "summary.json").read_text())["accuracy"]["value"] == 1.0
