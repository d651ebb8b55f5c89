"""The offline judge reads a number the same whether it is said in digits or in words.

ASR writes "platform 21", "2,000 people", "the 9th"; a model's claim says "platform twenty-one",
"two thousand people", "the ninth" (or the other way round). Rules v4 read "twenty-one" and "21"
as different words and answered "no" to right claims. Transcripts are written here (text, or
word records as faster-whisper gives them, one word each), so no decoding can move the verdicts.
"""

from __future__ import annotations

import pytest

from murgat.judges.claims import number_value, numbers_as_digits, tokenize
from tests.judges.test_embedded_every_part_checked import ask, words


@pytest.mark.parametrize(("fact", "heard"), [
    ("The voice says platform twenty-one", "platform 21"),
    ("The voice says platform 21", "platform twenty-one"),
    ("The voice says platform 21", words("platform twenty one")),
    ("The voice says one hundred", "100"),
    ("The voice says ninety-nine", "99"),
    ("The voice says 2,000 people came", "two thousand people came"),
    ("The voice says two thousand people came", "2,000 people came"),
    ("The voice says two thousand people came", words("2000 people came")),
    ("The voice says 2,000 people came", words("two thousand people came")),
    ("The voice says the ninth platform", "the 9th platform"),
    ("The voice says the 9th platform", "the ninth platform"),
    ("The voice says the first platform", "the 1st platform"),
    ("The voice says platform nine", "platform 9."),
])
def test_a_number_in_words_meets_its_digits(fact: str, heard: str | list) -> None:
    label, reason = ask(f"{fact} (audio, 0:00-0:10).", heard)
    assert label == "yes", reason


def test_a_different_number_is_still_a_no() -> None:
    label, reason = ask("The voice says platform twenty-two (audio, 0:00-0:10).", "platform 21")
    assert label == "no" and "'22'" in reason and "'21'" in reason


def test_a_list_of_numbers_is_not_one_number() -> None:
    assert numbers_as_digits("four, three, two, one") == "four, three, two, one"
    assert numbers_as_digits("four three two one") == "four three two one"  # a countdown, not 4,321
    assert number_value(["twenty", "nineteen"]) is None and number_value(["nine", "fifteen"]) is None
    assert ask("The voice says two right after three (audio, 0:12-0:15).", "4, 3, 2, 1")[0] == "yes"


def test_numbers_of_several_words_as_digits() -> None:
    assert numbers_as_digits("twenty-one ninety nine") == "21 99"
    assert numbers_as_digits("one hundred and five, a hundred, 3 million") == "105, 100, 3000000"
    assert numbers_as_digits("two thousand five hundred and 1,250,000") == "2500 and 1250000"
    assert tokenize("the 9th of 2,000") == ["the", "9th", "of", "2000"]


def test_heard_words_make_one_number_only_when_said_together() -> None:
    from murgat.judges.heard import number_runs

    assert number_runs(["platform", "twenty", "one."]) == {1: (3, "21")}
    assert number_runs(["twenty,", "one"]) == {}  # a pause written as a comma: two numbers
    assert number_runs(["four", "three", "two", "one"]) == {}


def test_a_fact_said_word_for_word_is_no_no_for_want_of_its_sound() -> None:
    """The benchmark's "The night train leaves from platform nine" over an announcement that says
    so: v4 read it as a claim about a train's sound and answered "no" (no train heard by the tagger).
    Said word for word, it may restate what is said: an abstention, never a "no"."""
    sound = {"scores": {"Speech": 0.9, "Music": 0.01, "Silence": 0.0, "Vehicle": 0.0, "Train": 0.0}, "loudness_db": -14.0}
    fact = "The night train leaves from platform nine (audio, 0:00-0:10)."
    label, reason = ask(fact, "The code word is pineapple. The night train leaves from platform 9.", **sound)
    assert label == "unknown" and "every term of the fact is said" in reason
    label, _ = ask("A train passes by (audio, 0:00-0:10).", "The code word is pineapple.", **sound)
    assert label == "no"  # not said, not heard: the sound claim keeps its "no"
