"""Prompt templates: variables are checked at render time; rendered prompts match golden
snapshots (regenerate with MURGAT_UPDATE_GOLDEN=1 after an intended change)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from murgat import prompts

GOLDEN = Path(__file__).parent / "golden"
VALUES = {
    "question": "What mood is the man in?",
    "sentence": "An operator says he is in a bad humor (audio, 0:03-0:05).",
    "context": "She asks whether the lord of the universe is in (audio, 0:01-0:03).",
    "sentences": "0. She asks a question (audio, 0:01-0:03).\n1. He answers (audio, 0:03-0:05).",
    "text": "He waves (visual, 0:01). Then he leaves (visual, 0:04).",
    "fact": "An operator says he is in a bad humor.",
    "options": "Options:\n(A) happy\n(B) bad humor",
    "response": "He waves.\nAnswer: B",
    "duration": "0:06 (6.2 s)",
    "modalities": "visual, audio",
    "feedback": "",
    "query": "a woman picks up a telephone",
    "modality": "visual",
    "instruction": "What does the woman pick up?",
    "previous": "A man wears a crown.",
    "reason": "no, nobody wears a crown",
    "chain": "A man waves (visual, 0:01). So he is friendly.",
    "step": "A man waves (visual, 0:01).",
    "grounding": "",
    "answer_format": "Answer with JSON only.",
    "steps": "0. A man waves (visual, 0:01).\n1. So he is friendly.",
    "rejected": "A man waves (visual, 0:01).",
    "cite_rule": "",
    "prefix": "A man nods (visual, 0:01).",
    "descriptions": "[1] (audio) A man says he is in a bad humor.\n[2] (visual) A woman talks on a telephone.",
    "attempt": 3,
    "original": "A man wears a crown (visual, 0:01).",
    "original_reason": "nobody wears a crown",
    "latest_attempt": 2,
    "latest": "A man wears a hat (visual, 0:01).",
}


@pytest.mark.parametrize("name", prompts.available())
def test_golden_snapshot(name: str) -> None:
    rendered = prompts.render(name, **{k: VALUES[k] for k in prompts.variables(name)})
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("MURGAT_UPDATE_GOLDEN"):
        path.write_text(rendered + "\n", encoding="utf-8")
    assert rendered + "\n" == path.read_text(encoding="utf-8")
    assert "{{" not in rendered


def test_every_template_has_a_snapshot() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.txt")) == prompts.available()


def test_missing_and_extra_variables_fail() -> None:
    with pytest.raises(prompts.PromptError, match="missing \\['sentence'\\]"):
        prompts.render("verify_simple", question="q")
    with pytest.raises(prompts.PromptError, match="unexpected \\['bogus'\\]"):
        prompts.render("verify_simple", question="q", sentence="s", bogus=1)
    with pytest.raises(prompts.PromptError, match="no prompt template"):
        prompts.render("nope")


def test_hash_changes_with_content() -> None:
    assert prompts.template_hash("verify_simple") != prompts.template_hash("verify_cot")
