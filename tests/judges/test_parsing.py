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
