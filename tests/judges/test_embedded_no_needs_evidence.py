"""The offline judge v3 (issue #26): "no" needs evidence; meaning, order and counts.

The decision rules are checked on written transcripts (no ASR, so no borderline decoding
can move them); the sentence model is replaced by a fixed similarity where a rule turns on
it. One slow test runs the labelled v3 claims on the real media with margins.
"""

from __future__ import annotations

import json

import pytest

from murgat.core.rules import rule_verifiable
from murgat.judges import embedded
from murgat.judges.embedded import EmbeddedJudge
from murgat.judges.types import EvidenceTextPart, JudgeRequest, TextPart

JUDGE = EmbeddedJudge("rules")


def ask(fact: str, heard: str, label: str = "audio 0:00-0:10", **sound: object) -> tuple[str, str]:
    parts: list[object] = [TextPart(fact)]
    if heard is not None:
        parts.append(EvidenceTextPart(label=label, modality="audio", source="transcript", text=heard))
    if sound:
        parts.append(EvidenceTextPart(label=label, modality="audio", source="sound_events", text="…", **sound))
    out = JUDGE.entail(JudgeRequest(parts=parts, task="entail", inputs={"fact": fact, "evidence": [label]}))  # type: ignore[arg-type]
    head, reason = out.split("\n", 1)
    return head.removeprefix("Label: "), reason.removeprefix("Reason: ")


@pytest.fixture
def sim(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Fix the sentence similarity the meaning rule reads."""
    def set_to(value: float) -> None:
        monkeypatch.setattr(embedded, "similarity", lambda a, b: value)
    return set_to


def test_an_unheard_word_is_an_abstention_not_a_no(sim) -> None:  # type: ignore[no-untyped-def]
    sim(0.45)
    label, reason = ask("The narrator says the telescope sits in a cleanroom (audio, 0:04-0:08).",
                        "space telescope in one of the largest clean rooms in the world")
    assert label == "unknown" and "sits" in reason and "other words" in reason and "0.45" in reason


def test_a_direct_quote_must_be_heard(sim) -> None:  # type: ignore[no-untyped-def]
    sim(0.9)
    label, reason = ask('The narrator says "the telescope sits in a cleanroom" (audio, 0:04-0:08).',
                        "space telescope in one of the largest clean rooms in the world")
    assert label == "no" and "quotes" in reason


def test_speech_that_says_something_else_is_a_no(sim) -> None:  # type: ignore[no-untyped-def]
    sim(0.05)
    label, reason = ask("The speaker says the lord of the universe is in (audio, 0:04-0:06).",
                        "Somebody must have stolen the crown jewels.")
    assert label == "no" and "something else" in reason
    sim(0.4)  # between the thresholds: no decision from meaning
    assert ask("The speaker says the lord of the universe is in (audio, 0:04-0:06).",
               "Somebody must have stolen the crown jewels.")[0] == "unknown"
    sim(0.05)  # one missing word (a name ASR may not have caught) is no evidence of other speech
    assert ask("The speaker says Hildy (audio, 0:00-0:01).", "Come on, tell me")[0] == "unknown"


def test_paraphrase_by_synonym_and_meaning(sim) -> None:  # type: ignore[no-untyped-def]
    sim(0.3)  # the synonym table alone decides these
    assert ask("The speaker says he is in a foul mood (audio, 0:03-0:05).", "Yes, he's in, in a bad humor.")[0] == "yes"
    assert ask("The speaker says the fire started at noon.", "The fire began at noon.")[0] == "yes"
    assert ask("The speaker urges people to ask what they can do for their nation (audio, 0:08-0:10).",
               "ask what you can do for your country")[0] == "yes"
    sim(0.87)
    label, reason = ask("The narrator says the telescope sits in one of the biggest cleanrooms on Earth.",
                        "space telescope in one of the largest clean rooms in the world")
    assert label == "yes" and "other words" in reason


def test_a_paraphrase_that_swaps_a_word_is_still_no(sim) -> None:  # type: ignore[no-untyped-def]
    sim(0.95)  # however close the sentences, a substitution or an opposite is a "no"
    label, reason = ask("She says he is in a cheerful mood (audio, 0:03-0:05).", "Yes, he's in, in a bad humor.")
    assert label == "no" and "opposite" in reason
    label, reason = ask("Kennedy urges people to ask what they can do for their city (audio, 0:08-0:10).",
                        "ask what you can do for your country")
    assert label == "no" and "city" in reason
    assert ask("The speaker says he is not in a good humor (audio, 0:03-0:05).", "Yes, he's in, in a bad humor.")[
        0] == "yes"
    # a denial of another word agrees with the evidence but is not what it says; with the same negation heard, a
    # swapped word is still a "no"
    assert ask("The narrator says the telescope is not in Texas.", "the telescope is in Maryland")[0] == "unknown"
    assert ask("He says ask not what your city can do for you.", "ask not what your country can do for you")[0] == "no"


def test_order_from_word_order() -> None:
    heard = "nine, eight, seven"
    assert ask("The voice says eight right after nine (audio, 0:00-0:05).", heard)[0] == "yes"
    label, reason = ask("The voice says nine right after eight (audio, 0:00-0:05).", heard)
    assert label == "no" and "other way round" in reason
    assert ask("The last number the voice says is seven (audio, 0:00-0:05).", heard)[0] == "yes"
    assert ask("The first number the voice says is seven (audio, 0:00-0:05).", heard)[0] == "no"
    # an order word that is itself said is part of what is said, not an order of utterances
    assert ask("The speaker says he left after lunch (audio, 0:00-0:05).", "He left after lunch.")[0] == "yes"
    jfk = "ask not what your country can do for you, ask what you can do for your country"
    assert ask("Kennedy first says ask what you can do for your country, then ask not what your country can do for "
               "you (audio, 0:03-0:10).", jfk)[0] == "no"


def test_counting_from_word_order() -> None:
    heard = "9, 8, 7, 6, 5, 4, 3, 2, 1, 0."
    assert ask("The voice counts down from nine to zero (audio, 0:00-0:19).", heard)[0] == "yes"
    assert ask("The voice counts up from zero to nine (audio, 0:00-0:19).", heard)[0] == "no"
    assert ask("The voice says ten numbers (audio, 0:00-0:19).", heard)[0] == "yes"
    assert ask("The voice says two numbers (audio, 0:00-0:19).", heard)[0] == "no"
    jfk = "ask not what your country can do for you, ask what you can do for your country"
    assert ask("The speaker says country twice (audio, 0:03-0:10).", jfk)[0] == "yes"
    assert ask("Kennedy says country three times (audio, 0:03-0:10).", jfk)[0] == "no"


def test_negation_is_judged() -> None:
    heard = "at NASA's Goddard Space Flight Center in Greenbelt, Maryland."
    assert ask("The narrator does not mention Houston (audio, 0:08-0:12).", heard)[0] == "yes"
    assert ask("The narrator does not mention Maryland (audio, 0:08-0:12).", heard)[0] == "no"
    assert ask("The voice never says ten (audio, 0:00-0:19).", "9, 8, 7, 6, 5, 4, 3, 2, 1, 0.")[0] == "yes"
    jfk = "ask not what your country can do for you"
    assert ask("The speaker tells the audience not to ask what their country can do for them.", jfk)[0] == "yes"
    label, reason = ask("Kennedy tells Americans to ask what their country can do for them.", jfk)
    assert label == "no" and "negat" in reason


def test_number_words_as_determiners_are_not_numbers() -> None:
    assert ask("One of the voices says Houston (audio, 0:00-0:07).", "Apollo 11, Houston, we got a recommendation")[
        0] == "yes"
    assert ask("One of the voices says Moscow (audio, 0:00-0:07).", "Apollo 11, Houston, we got a recommendation")[
        0] == "no"


def test_reasons_print_thresholds_cleanly() -> None:
    label, reason = ask("The audio is silent (audio, 0:00-0:04).", "", scores={"Silence": 0.2}, loudness_db=-42.3456)
    assert label == "unknown" and "-42 dBFS" in reason and "42.34" not in reason
    label, reason = ask("No one speaks (audio, 0:00-0:04).", "", scores={"Speech": 0.3}, loudness_db=-30.0)
    assert label == "unknown" and "heard at 0.30" in reason and "(≤ 0.05)" in reason and "(≥ 0.60)" in reason


def test_the_rules_version_enters_the_cache_key() -> None:
    assert JUDGE.options["rules_version"] == EmbeddedJudge.RULES_VERSION == "5.1"
    assert {"meaning_yes", "meaning_no", "rules_version"} <= set(EmbeddedJudge.answer_options)


@pytest.mark.parametrize(("sentence", "ok"), [
    ("She says somebody must have stolen the crown jewels (audio, 0:04-0:06).", True),
    ("The woman says he is probably in a bad humor.", True),
    ("The narrator says the telescope is typically cleaned.", True),
    ("Kennedy tells his listeners that they should ask what they can do.", True),
    ("Somebody must have stolen the crown jewels.", False),
    ("This suggests that the jewels were stolen.", False),
    ("It seems the man is angry.", False),
    ("The man probably says hello.", False),
    ("A man reads a book, showcasing his love for literature.", False),
])
def test_the_verifier_reads_a_plain_report_as_a_statement(sentence: str, ok: bool) -> None:
    assert rule_verifiable(sentence)[0] is ok


@pytest.mark.slow
def test_labelled_v3_claims_on_real_media() -> None:
    """The 72 v3 claims (both halves) on real ASR, with margins for decoding differences: few
    true claims answered "no", few false claims credited, and no substituted older claim
    credited (that check is in test_embedded_v2)."""
    from murgat.judges import make_judge
    from murgat.judges.embedded_check import check_claim
    from tests.conftest import ROOT, real_media

    judge = make_judge("embedded")
    claims = [json.loads(x) for x in (ROOT / "tests/data/embedded_claims/claims.jsonl").read_text().splitlines() if x]
    v3 = [c for c in claims if "v3" in c]
    assert len(v3) >= 60
    said_no = credited = answered = agree = 0
    for c in v3:
        label = check_claim(c["claim"], real_media(c["media"]), judge).label
        said_no += c["label"] and label == "no"
        credited += (not c["label"]) and label == "yes"
        if label in ("yes", "no"):
            answered += 1
            agree += (label == "yes") == c["label"]
    true_n = sum(1 for c in v3 if c["label"])
    assert said_no <= 0.15 * true_n and credited <= 0.15 * (len(v3) - true_n)
    # rules v4 abstain where a part of the claim cannot be checked (a named speaker, a question), so fewer
    # of these claims are answered than under v3 (0.7); the answered ones must still agree
    assert answered >= 0.6 * len(v3) and agree / answered >= 0.85
