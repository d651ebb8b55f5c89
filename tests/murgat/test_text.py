"""Sentence splitting that knows citations, and response preprocessing."""

from __future__ import annotations

import pytest

from murgat.text import extract_option, preprocess, split_answer, split_sentences, strip_thinking


def texts(s: str) -> list[str]:
    return [x.text for x in split_sentences(s)]


def test_citation_after_full_stop_belongs_to_previous_sentence() -> None:
    out = split_sentences("The man waves. (visual, 0:12) He leaves the room. (audio, 0:20; visual, 0:21)")
    assert [s.text for s in out] == [
        "The man waves. (visual, 0:12)",
        "He leaves the room. (audio, 0:20; visual, 0:21)",
    ]
    assert [len(s.citations) for s in out] == [1, 2]


def test_citation_before_full_stop() -> None:
    out = split_sentences("The man waves (visual, 0:12). He leaves (audio, 0:20).")
    assert [s.text for s in out] == ["The man waves (visual, 0:12).", "He leaves (audio, 0:20)."]


def test_fractional_time_inside_citation_is_not_a_stop() -> None:
    assert texts("A bell rings (audio, 1:05.5). Then silence.") == ["A bell rings (audio, 1:05.5).", "Then silence."]


def test_decimals() -> None:
    assert texts("The car moves at 3.5 m/s. It stops.") == ["The car moves at 3.5 m/s.", "It stops."]


@pytest.mark.parametrize(
    "text",
    [
        "Several tools (e.g. a hammer) lie there. They are old.",
        "Dr. Smith enters the room. He sits.",
        "It lasts approx. 5 seconds. Then it ends.",
        "Mr. and Mrs. Jones wave. They smile.",
        "Items i.e. the boxes are red. Nothing else.",
        "J. R. Smith speaks. The crowd cheers.",
    ],
)
def test_abbreviations(text: str) -> None:
    assert len(texts(text)) == 2


def test_ellipsis() -> None:
    assert texts("He waits... and waits. Nothing happens.") == ["He waits... and waits.", "Nothing happens."]
    assert texts("He waits… Then he leaves.") == ["He waits…", "Then he leaves."]


def test_quotes() -> None:
    assert texts('He says "Stop." Then he leaves.') == ['He says "Stop."', "Then he leaves."]
    assert texts('"Stop!" she yells. He stops.') == ['"Stop!" she yells.', "He stops."]


def test_markdown_bullets_and_numbered_steps() -> None:
    text = "Steps:\n- The man enters (visual, 0:01).\n* He sits (visual, 0:03).\n1. A phone rings (audio, 0:05).\n2) He answers."
    assert texts(text) == [
        "Steps:",
        "The man enters (visual, 0:01).",
        "He sits (visual, 0:03).",
        "A phone rings (audio, 0:05).",
        "He answers.",
    ]


def test_line_breaks() -> None:
    assert texts("First line without stop\nSecond line starts here") == [
        "First line without stop",
        "Second line starts here",
    ]
    assert texts("A sentence that wraps\nonto the next line. Done.") == [
        "A sentence that wraps\nonto the next line.",
        "Done.",
    ]
    assert texts("Para one.\n\nPara two.") == ["Para one.", "Para two."]


def test_identical_sentences_stay_two() -> None:
    out = split_sentences("He waves (visual, 0:01). He waves (visual, 0:01).")
    assert [s.index for s in out] == [0, 1]
    assert out[0].text == out[1].text and out[0].span != out[1].span


def test_spans_index_the_text() -> None:
    text = "- A dog barks (audio, 0:02).\n- It runs. (visual, 0:03)"
    for s in split_sentences(text):
        assert text[s.span[0] : s.span[1]] == s.text


def test_citation_only_line_joins_previous() -> None:
    out = split_sentences("The man waves.\n(visual, 0:12)\nHe leaves.")
    assert [s.text for s in out] == ["The man waves.\n(visual, 0:12)", "He leaves."]
    assert len(out[0].citations) == 1


def test_empty_and_whitespace() -> None:
    assert split_sentences("") == []
    assert split_sentences("   \n\n ") == []


def test_question_and_exclamation() -> None:
    assert texts("Is he waving? Yes! He is.") == ["Is he waving?", "Yes!", "He is."]


def test_huge_response_is_linear_enough() -> None:
    text = " ".join(f"Claim number {i} holds (visual, 0:{i % 60:02d})." for i in range(2000))
    out = split_sentences(text)
    assert len(out) == 2000 and all(len(s.citations) == 1 for s in out)


# ----- preprocessing -----


def test_strip_think_block() -> None:
    vis, th = strip_thinking("<think>secret plan</think>The answer is B.")
    assert vis == "The answer is B." and "secret" in th


def test_strip_unclosed_think() -> None:
    vis, th = strip_thinking("Visible part. <think>never closed")
    assert vis == "Visible part." and "never closed" in th


def test_strip_orphan_close() -> None:
    vis, _ = strip_thinking("reasoning in prompt template</think>\nFinal text.")
    assert vis == "Final text."


def test_split_answer_line() -> None:
    r, a = split_answer("The man waves (visual, 0:01).\nAnswer: B")
    assert r == "The man waves (visual, 0:01)." and a == "Answer: B"
    r, a = split_answer("Reasoning here.\n**Final Answer:** (C) a dog")
    assert a.startswith("**Final Answer:**") and r == "Reasoning here."


def test_split_boxed() -> None:
    r, a = split_answer("He waves (visual, 0:01).\n\\boxed{D}")
    assert r == "He waves (visual, 0:01)." and a == "\\boxed{D}"


@pytest.mark.parametrize(
    ("answer", "n", "letter"),
    [
        ("Answer: B", 5, "B"),
        ("Answer: (C) the dog", 5, "C"),
        ("\\boxed{D}", 5, "D"),
        ("\\boxed{(E) none}", 5, "E"),
        ("Final answer: the answer is J.", 10, "J"),
        ("Answer: A", 4, "A"),
        ("Answer: A man is waving, so option B", 4, "B"),
        ("Answer: option d", 4, "D"),
        ("Answer: I cannot tell", 4, None),
        ("", 4, None),
    ],
)
def test_extract_option(answer: str, n: int, letter: str | None) -> None:
    assert extract_option(answer, n) == letter


def test_preprocess_end_to_end() -> None:
    pre = preprocess("<think>hmm</think>The woman talks (audio, 0:01).\nAnswer: (B)", n_options=4)
    assert pre.reasoning == "The woman talks (audio, 0:01)."
    assert pre.option == "B"
    assert "hmm" in pre.thinking
