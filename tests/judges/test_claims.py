"""How the offline judge reads a claim: content terms, what is not a claim term, near misses.

Pure text: no media, no models."""

from __future__ import annotations

import pytest

from murgat.judges.claims import analyze, match_term, normalize_word, phonetic_key


def terms(fact: str) -> list[tuple[str, str]]:
    return [(t.norm, t.kind) for t in analyze(fact).terms]


def test_attribution_is_not_a_claim_term_but_what_is_said_is() -> None:
    assert terms("He says ask what your country can do for Texas (audio, 0:03-0:07).") == [
        ("ask", "word"), ("country", "word"), ("texas", "name")]
    assert analyze("The narrator says the telescope is clean.").speech


@pytest.mark.parametrize("phrase", ["Around seven seconds in,", "At the start of the clip,", "After about three seconds,",
                                    "About a second in,", "At 0:07,", "Then", "Finally,", "In the opening seconds"])
def test_time_phrases_are_removed(phrase: str) -> None:
    c = analyze(f"{phrase} the voice says five (audio, 0:07-0:09).")
    assert [(t.norm, t.kind) for t in c.terms] == [("5", "number")], c.cleaned
    assert c.removed


@pytest.mark.parametrize("label", ["Reasoning:", "Step 2:", "Answer:", "Observation 3:", "1."])
def test_discourse_labels_are_removed(label: str) -> None:
    c = analyze(f"{label} the voice says five.")
    assert terms(c.original) == [("5", "number")]
    assert c.removed[0].rstrip(".").strip() == label.rstrip(".:").strip() or label in c.removed[0]


def test_negation_and_quotes() -> None:
    c = analyze('The speaker says "ask not what your country can do".')
    assert c.negated and c.quoted == ["ask not what your country can do"]
    assert {t.norm for t in c.terms} >= {"ask", "country"}
    assert analyze("Nobody has stolen the jewels.").negated
    # a quote made only of function words is claimed word for word
    assert [t.norm for t in analyze('She asks "How are you?"').terms] == ["how", "are", "you"]


def test_speech_presence_speaker_counts_and_manner() -> None:
    c = analyze("Two people are talking (audio, 0:14-0:17).")
    assert c.speech_presence and c.speakers == 2 and not c.terms
    c = analyze("Someone speaks over the radio.")
    assert c.speech_presence and c.manner == ["radio"]
    c = analyze("The man talks about the telescope.")
    assert not c.speech_presence and c.speech and [t.norm for t in c.terms] == ["telescope"]
    c = analyze("No one is talking.")
    assert c.speech_presence and c.negated and c.speakers is None


def test_normalisation() -> None:
    assert normalize_word("Five") == normalize_word("5") == "5"
    assert normalize_word("jewels") == "jewel" and normalize_word("Texas") == "texas"
    assert normalize_word("universities") == "university"


def test_near_misses_need_spelling_and_sound_to_agree() -> None:
    assert match_term("universe", {"university"}) == ("university", True)
    assert match_term("webb", {"web"}) == ("web", True)
    assert match_term("stole", {"stolen"}) == ("stolen", True)
    assert match_term("texas", {"you", "country"}) == (None, False)
    assert match_term("royal", {"crown"}) == (None, False)
    assert match_term("5", {"6"}) == (None, False)  # numbers match exactly or not at all
    assert phonetic_key("jewel") == phonetic_key("jewell")


def test_a_time_in_what_is_said_is_kept() -> None:
    c = analyze("The narrator says the launch happens in ten seconds (audio, 0:01-0:04).")
    assert "10" in [t.norm for t in c.terms] and not c.removed
    c = analyze("The voice says five, around seven seconds in (audio, 0:07-0:09).")
    assert [t.norm for t in c.terms] == ["5"] and c.removed == ["around seven seconds in"]


# --- rules v3 (issue #26): who speaks, to whom, order, counts, absence, meaning ---


def test_the_speaker_and_function_words_are_not_terms() -> None:
    assert terms("One of the voices says Houston (audio, 0:00-0:07).") == [("houston", "name")]
    assert terms("One voice says four (audio, 0:10-0:11).") == [("4", "number")]
    assert terms("Kennedy himself says ask not what your country can do for you.") == [("ask", "word"),
                                                                                     ("country", "word")]
    assert terms("Here, she says he is in a bad humor.") == [("bad", "word"), ("humor", "word")]
    # a subject that is not a speaker keeps its words
    assert [t.norm for t in analyze("The telescope in the cleanroom is named Webb.").terms] == [
        "telescope", "cleanroom", "webb"]


def test_who_is_spoken_to_is_an_addressee() -> None:
    c = analyze("Kennedy urges the audience to ask what they can do for their country.")
    assert [(t.norm, t.role) for t in c.terms] == [("audience", "addressee"), ("ask", "said"), ("country", "said")]
    # when nothing else is said, the object is what is claimed
    c = analyze("Kennedy addresses his fellow Canadians (audio, 0:00-0:02).")
    assert {t.role for t in c.terms} == {"said"} and "canadian" in [t.norm for t in c.terms]


def test_order_and_count_words_are_checks_not_terms() -> None:
    c = analyze("The voice says eight right after nine (audio, 0:00-0:03).")
    assert c.order is not None and (c.order.before, c.order.after) == (["9"], ["8"])
    assert [t.norm for t in c.terms] == ["8", "9"]
    c = analyze("The narrator mentions Goddard before Greenbelt.")
    assert c.order is not None and (c.order.before, c.order.after) == (["goddard"], ["greenbelt"])
    c = analyze("The first number the voice says is zero (audio, 0:16-0:19).")
    assert c.order is not None and (c.order.which, c.order.among, c.order.target) == ("first", "number", "0")
    c = analyze("The voice counts down from nine to zero (audio, 0:00-0:19).")
    assert c.count is not None and (c.count.kind, c.count.start, c.count.end, c.count.direction) == (
        "range", "9", "0", "down")
    assert analyze("The sign changes from 5 to 3 (visual, 0:01).").count is None  # no counting said
    c = analyze("Kennedy says country twice (audio, 0:03-0:10).")
    assert c.count is not None and (c.count.kind, c.count.times, c.count.word) == ("times", 2, "country")
    c = analyze("The voice says three numbers.")
    assert c.count is not None and (c.count.kind, c.count.times) == ("numbers", 3) and not c.terms


def test_a_negation_before_the_speech_verb_is_a_claim_of_absence() -> None:
    c = analyze("The narrator does not mention Houston (audio, 0:08-0:12).")
    assert c.says_not and not c.negated and [t.norm for t in c.terms] == ["houston"]
    c = analyze("Kennedy tells Americans not to ask what their country can do for them.")
    assert c.negated and not c.says_not


def test_meaning_matches_by_lemma_and_synonym_table_only() -> None:
    from murgat.judges.claims import antonym_heard, match_meaning

    assert match_meaning("foul", {"bad", "humor"}) == ("bad", "synonym")
    assert match_meaning("taken", {"stolen"}) == ("stolen", "synonym")
    assert match_meaning("steal", {"stole"})[1] == "lemma"  # terms arrive normalised ("steals" → "steal")
    assert match_meaning("city", {"country"}) == (None, "")  # another word of its kind is not a synonym
    assert antonym_heard("cheerful", {"he", "bad", "humor"}) == "bad"
    assert antonym_heard("foul", {"bad"}) is None
