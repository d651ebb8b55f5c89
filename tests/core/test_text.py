"""Sentence splitting that knows citations, and response preprocessing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from murgat.core.text import preprocess, split_answer, split_sentences, strip_thinking


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


def test_preprocess_end_to_end() -> None:
    pre = preprocess("<think>hmm</think>The woman talks (audio, 0:01).\nAnswer: (B)", n_options=4)
    assert pre.reasoning == "The woman talks (audio, 0:01)."
    assert pre.option == "B"
    assert "hmm" in pre.thinking


# ----- linear time (#31): what was quadratic fails by its timeout on the old code


@pytest.mark.timeout(60)
def test_a_long_run_of_dots_splits_at_once() -> None:
    """The abbreviation check looked back over the whole run of letters and dots at every dot."""
    import time

    t0 = time.process_time()
    out = split_sentences("a." * 100_000 + " Then it ends.")
    assert out[-1].text == "Then it ends." and time.process_time() - t0 < 20


def test_sentences_find_their_groups_with_bounded_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each sentence copied the list of all groups after it (``groups[lo:]``): N² group visits. Counted
    here by the groups list itself: a bounded number of visits per group."""
    import murgat.core.text as text_mod
    from murgat.core.citations import Scan

    visits = 0

    class Counting(list):
        def __getitem__(self, k):  # type: ignore[no-untyped-def]
            nonlocal visits
            got = super().__getitem__(k)
            visits += len(got) if isinstance(k, slice) else 1
            return got

    real = text_mod.scan
    monkeypatch.setattr(text_mod, "scan", lambda t: (lambda s: Scan(Counting(s.groups), s.prose, s.prose_reasons))(real(t)))
    n = 3000
    out = split_sentences(" ".join(f"Claim number {i} holds (visual, 0:{i % 60:02d})." for i in range(n)))
    assert len(out) == n and all(len(s.citations) == 1 for s in out)
    assert visits <= 4 * n


@pytest.mark.timeout(60)
@pytest.mark.parametrize("word", ["option", "answer is", "Answer", "choice", "Answer:", "the answer is", "A"])
def test_answer_reading_is_linear_in_a_long_run_of_spaces(word: str) -> None:
    """A program returned a word and ~50,000 spaces: ``option\\s*[:：]?\\s*`` took 46-72 s per variant."""
    import time

    text = word + " " * 50_000 + "x"
    t0 = time.process_time()
    preprocess(text, 5)
    preprocess(text + "\nAnswer: B", 5)
    assert time.process_time() - t0 < 10


# ----- the answer ends a line, the sentence text does not keep it (#30)


@pytest.mark.parametrize(("response", "reasoning", "answer", "letter"), [
    ("The woman talks (audio, 0:00-0:02). Answer: B", "The woman talks (audio, 0:00-0:02).", "Answer: B", "B"),
    ("The woman talks (audio, 0:00-0:02). **Answer:** (B)", "The woman talks (audio, 0:00-0:02).", "**Answer:** (B)", "B"),
    ("He waves (visual, 0:01). Final answer: C) a dog", "He waves (visual, 0:01).", "Final answer: C) a dog", "C"),
    ("He waves (visual, 0:01).\nAnswer: B", "He waves (visual, 0:01).", "Answer: B", "B"),
    ("He waves (visual, 0:01). Answer: I cannot tell", "He waves (visual, 0:01).", "Answer: I cannot tell", None),
    # an "answer:" inside a sentence is not the answer statement: the sentence stays whole
    ("The man says the answer: yes (audio, 0:01).", "The man says the answer: yes (audio, 0:01).", "", None),
    # an answer followed by more reasoning is read, but the text stays reasoning (as it did)
    ("He waves (visual, 0:01). Answer: B. He smiles (visual, 0:02).",
     "He waves (visual, 0:01). Answer: B. He smiles (visual, 0:02).", "", "B"),
])
def test_an_answer_ending_the_last_line_is_split_off(response: str, reasoning: str, answer: str,
                                                     letter: str | None) -> None:
    pre = preprocess(response, 4)
    assert (pre.reasoning, pre.answer, pre.option) == (reasoning, answer, letter)
    assert all("Answer" not in s.text for s in split_sentences(pre.reasoning)) or "smiles" in response


_SENTENCE = st.sampled_from(["The man waves (visual, 0:01).", "A dog barks (audio, 0:02-0:03).", "It is night.",
                             "She says hello (audio, 0:04; visual, 0:04).", "He leaves. (visual, 0:05)"])


@settings(deadline=None, max_examples=100)
@given(st.lists(_SENTENCE, min_size=1, max_size=5), st.sampled_from(["\n", "\n\n", " \n"]),
       st.sampled_from(["Answer: {x}", "Answer: ({x})", "**Answer:** {x}", "Final Answer: {x}) the dog",
                        "The answer is: {x}", "ANSWER：{x}", "> Answer: {x}"]),
       st.sampled_from("ABCD"))
def test_an_answer_on_its_own_line_splits_as_before(sentences: list[str], gap: str, line: str, x: str) -> None:
    """MURGAT-S of existing runs is unchanged for responses whose answer stood on its own line: the
    reasoning (what is split into scored sentences) is exactly the text before that line."""
    reasoning = " ".join(sentences)
    pre = preprocess(reasoning + gap + line.format(x=x), 4)
    assert pre.reasoning == reasoning and pre.option == x


def test_time_like_text_lands_on_its_sentence() -> None:
    out = split_sentences("He says it <t>3.0</t>. Then he waves (visual, 0:05). He leaves at 1:05.")
    assert [[t.text for t in s.time_like] for s in out] == [["<t>3.0</t>"], [], ["1:05"]]
    assert out[0].time_like[0].nearest == "(visual, 0:03)"
    # records of sentences without time-like text are written as before
    assert "time_like" not in out[1].model_dump()
    assert out[0].model_dump()["time_like"][0]["text"] == "<t>3.0</t>"
