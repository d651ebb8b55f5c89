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
