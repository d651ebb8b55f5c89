"""The one rule for "correct" (#21: score mapped an option's text to its letter, generate and
program needed a one-letter gold and silently left such items out of accuracy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.core.answers import gold_option, gold_problem, is_correct

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
    assert is_correct(None, "blue", OPTS) is None  # an unread answer is unknown, never wrong (as grade() says)
    assert is_correct("A", "green", OPTS) is None
    assert "neither" in (gold_problem("green", OPTS) or "")
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


# ---------------------------------------------------------------- the one answer reader (#30)

from murgat.core.answers import AnswerReading, grade, read_answer  # noqa: E402

OPTIONS = ["share with the girl", "approach lady sitting there", "unwrap it", "playing with toy train", "gesture something"]


@pytest.mark.parametrize(("response", "letter"), [
    ("The boy sits (visual, 0:13-0:20).\nAnswer: C", "C"),
    ("The boy sits (visual, 0:13-0:20). Answer: C", "C"),  # the end of a line: was None, counted wrong
    ("The boy sits (visual, 0:13-0:20). **Answer:** (C)", "C"),
    ("The boy sits. Answer: C) unwrap it", "C"),
    ("The boy sits.\n**Final Answer:** C", "C"),
    ("The boy sits. ANSWER：c", "C"),
    ("The boy sits.\n\\boxed{C}", "C"),
    ("The boy sits, so \\boxed{(C) unwrap it}.", "C"),
    ("<think>maybe A</think>The boy sits. The answer is C.", "C"),
    ("<answer>C</answer>", "C"),
    ("The boy sits. Answer: unwrap it", "C"),  # one option named by its full text
    ("The boy sits. The answer is unwrap it.", "C"),
    ("C", "C"), ("(C).", "C"), ("unwrap it", "C"),
    ("Answer: A. Wait, no.\nAnswer: C", "C"),  # the last one wins
    ("Answer: B\n\\boxed{C}", "C"),
    ("The boy sits (visual, 0:13). Answer: B. The answer is C.", "B"),  # a phrase does not override a read Answer:
    ("Answer: A man is waving, so option B", "B"),
])
def test_read_answer(response: str, letter: str) -> None:
    got = read_answer(response, OPTIONS)
    assert got.letter == letter and got.reason is None


@pytest.mark.parametrize(("response", "why"), [
    ("The boy sits (visual, 0:13).", "no final answer found"),
    ("The boy sits. Answer: I cannot tell", "names no option"),
    ("The boy sits. Answer: F", "not one of the 5 options"),
    ("The boy sits. Answer: unwrap it or share with the girl", "several options (A, C)"),
    ("", "empty"),
    ("<think>the boy unwraps it, so C", "only thinking"),
    ("The boy sits. Answer: C\nOn reflection, Answer: none of them", "names no option"),  # the last Answer: decides
])
def test_an_answer_that_cannot_be_read_says_why(response: str, why: str) -> None:
    got = read_answer(response, OPTIONS)
    assert got.letter is None and why in (got.reason or "")


def test_grade_never_says_false_for_an_unread_answer() -> None:
    unread = read_answer("He waves. Answer: I cannot tell", OPTIONS)
    g = grade(unread, "unwrap it", OPTIONS)
    assert g.correct is None and "names no option" in (g.answer_problem or "")
    assert grade(read_answer("Answer: C", OPTIONS), "unwrap it", OPTIONS) == grade("C", "C", OPTIONS)
    assert grade("C", "unwrap it", OPTIONS).correct is True and grade("B", "C", OPTIONS).correct is False
    # no gold option: nothing to grade, nothing to explain
    assert grade(unread, None, OPTIONS).answer_problem is None and grade(unread, "green", OPTIONS).correct is None
    assert grade(None, "C", OPTIONS).answer_problem == "no answer could be read"


def test_spans_index_the_visible_text() -> None:
    got = read_answer("<think>x</think>He waves (visual, 0:01). Answer: B", n_options=4)
    assert isinstance(got, AnswerReading) and got.rule == "answer_marker" and got.span is not None
    assert "He waves (visual, 0:01). Answer: B"[got.span[0]:got.span[1]] == "Answer: B"


def _official_letter(response: str) -> str | None:
    """The NExT-GQA authors' rule: the letter after the last ``Answer:`` wherever it stands."""
    k = response.rfind("Answer:")
    if k < 0:
        return None
    rest = response[k + len("Answer:"):].lstrip(" *(")
    return rest[:1] if rest[:1] and rest[:1] in "ABCDE" else None


def test_answers_ending_a_line_give_the_official_acc_at_gqa() -> None:
    """NExT-GQA val (tests/data/nextgqa_val_excerpt): responses whose answer ends the line of their last
    cited sentence. Before, none of those answers was read (Acc@GQA 0.0 where the official scorer gives
    more); now murgat's Acc@GQA equals the official figure, item by item."""
    from murgat.commands.ground import metric as gm
    from murgat.core.citations import format_time, parse_citations
    from murgat.core.text import preprocess, split_sentences

    questions = json.loads((Path(__file__).resolve().parents[1] / "data" / "nextgqa_val_excerpt" / "questions.json")
                           .read_text())
    formats = ["Answer: {L}", "**Answer:** ({L})", "Answer: {L}) {text}", "Final Answer: {L}", "Answer: ({L})."]
    official, ours = [], []
    for i, q in enumerate(questions):
        gold = q["options"].index(q["answer"])
        letter = "ABCDE"[gold if i % 3 else (gold + 1) % 5]
        s, e = q["location"][0] if i % 4 != 1 else (max(0.0, q["duration"] - 2.0), float(q["duration"]))
        line = formats[i % len(formats)].format(L=letter, text=q["options"]["ABCDE".index(letter)])
        response = f"The person in the video acts (visual, {format_time(s)}-{format_time(e)}). {line}"
        pre = preprocess(response, 5, q["options"])
        cites = [c for x in split_sentences(pre.reasoning) for c in x.citations] + parse_citations(pre.answer)
        visual = [(float(c.start or 0), float(c.end or 0)) for c in cites if c.valid and c.modality == "visual"]
        span = gm.hull(visual)
        assert span is not None
        _, iop = gm.nextgqa_best([(float(a), float(b)) for a, b in q["location"]], span)
        assert _official_letter(response) == letter == pre.option
        official.append(iop >= 0.5 and _official_letter(response) == "ABCDE"[gold])
        ours.append(iop >= 0.5 and grade(pre.reading, q["answer"], q["options"]).correct is True)
    assert ours == official
    acc = 100 * sum(ours) / len(ours)
    assert acc == 100 * sum(official) / len(official) and acc > 30
