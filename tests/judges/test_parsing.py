"""Reading judge answers: decisions, abstentions, and honest 'unparseable'."""

from __future__ import annotations

import pytest

from murgat.judges.parsing import extract_json, parse_json_answer, parse_verdict


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Yes", "yes"), ("yes.", "yes"), ("**Yes**", "yes"), ("No", "no"), ("no, the audio is silent", "no"),
        ("Label: yes", "yes"), ("I think about it...\nThe clip shows a dog.\nLabel: no", "no"),
        ('{"label": "yes", "reason": "seen"}', "yes"), ('```json\n{"label": "no"}\n```', "no"),
        ('{"entailed": true}', "yes"), ("Answer: not entailed", "no"), ("Verdict: Supported", "yes"),
        ("Unknown", "unknown"), ("I cannot tell from these frames", "unparseable"), ("Cannot determine.", "unknown"),
        ("Label: unknown", "unknown"), ("", "unparseable"), ("Maybe, it depends.", "unparseable"),
        ("Yes and no.", "unparseable"), ("The frames show a man.\n\nyes", "yes"),
        ("Label: perhaps", "unparseable"), ("TRUE", "yes"),
    ],
)
def test_parse_verdict(text: str, verdict: str) -> None:
    assert parse_verdict(text)[0] == verdict


def test_none_text_is_an_error_not_a_no() -> None:
    assert parse_verdict(None)[0] == "error"


def test_unparseable_comes_with_a_reason() -> None:
    v, why = parse_verdict("The evidence is interesting.")
    assert v == "unparseable" and why


def test_extract_json_variants() -> None:
    assert extract_json('Here: {"facts": ["a"]} done') == {"facts": ["a"]}
    assert extract_json('```json\n["x", "y"]\n```') == ["x", "y"]
    assert parse_json_answer("no json here")[0] is None


@pytest.mark.parametrize(
    ("text", "allowed"),
    [
        ("No idea.", {"unknown", "unparseable"}),
        ("No way to tell from these frames.", {"unknown", "unparseable"}),
        ("Label:\nno idea", {"unknown", "unparseable"}),
        ("no idea", {"unknown", "unparseable"}),
        ("Yesterday the man spoke.", {"unparseable"}),
        ("Nothing in the frames shows that.", {"unparseable"}),
        ("Not enough evidence here.", {"unknown", "unparseable"}),
        ('{"label":\t\n"no', {"unparseable"}),  # a JSON answer cut off by vLLM at the token cap
        ('{"label": "yes", oops', {"unparseable"}),
    ],
)
def test_only_a_real_label_is_read(text: str, allowed: set[str]) -> None:
    """Abstentions and phrases that merely start with a label word are never a verdict (a real
    transformers-serve / vLLM answer ``No idea.`` was read as ``no``)."""
    assert parse_verdict(text)[0] in allowed


@pytest.mark.parametrize(("text", "verdict"), [
    ("No, the audio is silent.", "no"), ("Yes. The bell rings at 0:02.", "yes"), ("**No** — nothing is heard.", "no"),
    ("Label: no (the man is silent)", "no"), ("Reasoning first.\nLabel: yes", "yes"), ("No idea", "unknown"),
    ("Label: no idea", "unknown"), ("no.", "no"), ("Yes!", "yes"),
])
def test_labels_followed_by_punctuation_are_read(text: str, verdict: str) -> None:
    assert parse_verdict(text)[0] == verdict


def test_a_truncated_answer_is_unparseable_whatever_it_says() -> None:
    from murgat.judges.parsing import read_verdict
    from murgat.judges.types import JudgeOutput

    assert parse_verdict("no", truncated=True)[0] == "unparseable"
    v, why = read_verdict(JudgeOutput(text="Label: no", truncated=True))
    assert v == "unparseable" and why and "cut off" in why
    assert read_verdict(JudgeOutput(text="Label: no"))[0] == "no"


@pytest.mark.parametrize("text", [
    "0.7", "0.9", "1.5", '{"label": 0.7}', "1. No, the man is silent.", "1/2 of it holds", "True/False: False",
    "Y/N: N", "No, I cannot tell.", "No, I can't tell from these frames.", "Yes, though I cannot be sure.",
    "Label: no, cannot determine",
])
def test_scores_list_markers_choices_and_hedged_labels_are_not_decisions(text: str) -> None:
    """Before: ``0.7`` and ``0.9`` were read as ``no`` ("0" then "."), ``1. No, …`` as ``yes``,
    ``True/False: False`` and ``Y/N: N`` as ``yes``, ``No, I cannot tell`` as ``no``."""
    assert parse_verdict(text)[0] in {"unknown", "unparseable"}


@pytest.mark.parametrize(("text", "verdict"), [
    ("1", "yes"), ("0", "no"), ("1.", "yes"), ("1 (supported)", "yes"), ("0 - not supported", "no"),
    ('{"label": 1}', "yes"), ('{"label": 0}', "no"), ("Label: 1", "yes"),
    ("No. I cannot tell who speaks, but nobody says it.", "no"), ("No; the audio is silent.", "no"),
])
def test_digit_labels_and_labels_before_a_new_sentence_are_still_read(text: str, verdict: str) -> None:
    assert parse_verdict(text)[0] == verdict


@pytest.mark.parametrize("text", ["[" * 100_000, '{"label": ' * 50_000, "```json\n" + "[" * 100_000 + "\n```"])
def test_absurdly_nested_json_is_unparseable_not_a_crash(text: str) -> None:
    """Before: ``RecursionError`` out of the reader (and out of ``parse_json_answer``): one hostile
    answer crashed its item instead of being recorded as unreadable."""
    assert parse_verdict(text)[0] == "unparseable"
    assert parse_json_answer(text)[0] is None


def test_a_deeply_nested_label_object_does_not_exhaust_the_stack() -> None:
    doc = '"yes"'
    for _ in range(600):
        doc = '{"label": ' + doc + "}"
    assert parse_verdict(doc)[0] == "unparseable"  # past any sense: not followed down
    assert parse_verdict('{"label": {"label": "yes"}}')[0] == "yes"


def test_the_label_line_pattern_never_crosses_a_line_end() -> None:
    """What made the reader quadratic: from every line start ``^\\W*`` ran over every newline after
    it (an answer of 40,000 newlines took 75 s). The pattern is now confined to its line, so a match
    from a line start cannot begin by consuming newlines."""
    from murgat.judges.parsing import _LABEL_LINE

    assert _LABEL_LINE.match("\n\n\nLabel: yes") is None
    assert _LABEL_LINE.match("Label\n: yes") is None
    assert parse_verdict("\n" * 1000 + "!\n" * 1000 + "Label: no")[0] == "no"
