"""The offline judge's rule table: each rule on evidence written here (transcripts, on-screen
text and sound-tagger scores as the pipeline would hand them over), so no decoding can move it.

The figures on the labelled claims of real media are the benchmark's (``bench_embedded_judge.py``).
"""

from __future__ import annotations

from typing import Any

from murgat.judges.claims import analyze
from murgat.judges.embedded import EmbeddedJudge, sound_parts
from murgat.judges.embedded_check import split_evidence
from murgat.judges.embedded_rules import RULES, channel_of, rules_markdown
from murgat.judges.types import EvidenceTextPart, JudgeRequest, TextPart

JUDGE = EmbeddedJudge("rules")
MUSIC_ONLY = {"Music": 0.98, "Piano": 0.7, "Silence": 0.0}


def words(text: str, p: float = 0.95, **low: float) -> list[dict[str, Any]]:
    """Word records for ``text``, each heard at probability ``p`` (``low``: word → its own probability)."""
    return [{"word": w, "start": float(k), "end": k + 0.5, "probability": low.get(w.strip(",.!?").lower(), p)}
            for k, w in enumerate(text.split())]


def ask(fact: str, heard: str | None = None, screen: str | None = None, label: str = "audio 0:00-0:10",
        scores: dict[str, float] | None = None, loudness_db: float | None = -20.0, **low: float) -> tuple[str, str]:
    parts: list[Any] = [TextPart(fact)]
    cited = [label]
    if heard is not None:
        parts.append(EvidenceTextPart(label=label, modality="audio", source="transcript", text=heard,
                                      words=words(heard, **low)))
    if screen is not None:
        parts.append(EvidenceTextPart(label="visual 0:05", modality="visual", source="screen_text", text=screen))
        cited.append("visual 0:05")
    if scores is not None:
        parts.append(EvidenceTextPart(label=label, modality="audio", source="sound_events", text="…", scores=scores,
                                      loudness_db=loudness_db))
    out = JUDGE.entail(JudgeRequest(parts=parts, task="entail", inputs={"fact": fact, "evidence": cited}))
    text, _ = split_evidence(out)
    head, reason = text.split("\n", 1)
    return head.removeprefix("Label: "), reason.removeprefix("Reason: ")


def test_every_sound_named_together_must_be_heard() -> None:
    """Two sounds claimed together: the loudest class never carries the other (a false yes under v4)."""
    assert ask("A dog barks while music plays.", scores=MUSIC_ONLY)[0] == "no"
    assert ask("Music and speech are heard together.", scores=MUSIC_ONLY)[0] == "no"
    label, reason = ask("A dog barks while music plays.", scores={**MUSIC_ONLY, "Dog": 0.9, "Bark": 0.8})
    assert label == "yes" and "dog" in reason and "music" in reason
    assert ask("A dog barks while music plays.", scores={**MUSIC_ONLY, "Dog": 0.3})[0] == "unknown"
    assert ask("Music is heard and no one talks.", scores={**MUSIC_ONLY, "Speech": 0.01})[0] == "yes"


def test_sound_parts_split_at_joining_words() -> None:
    parts = sound_parts(analyze("A dog barks while music plays."))
    assert [(w, absent) for w, _, absent in parts] == [("dog", False), ("music", False)]
    assert len(sound_parts(analyze("A piano melody is heard."))) == 1  # one sound, described by two words


def test_sound_words_outside_the_table_reach_the_tagger() -> None:
    label, reason = ask("A cat meows.", scores=MUSIC_ONLY)
    assert label == "no" and "Meow" in reason
    assert ask("A whistle blows.", scores={**MUSIC_ONLY, "Whistle": 0.9})[0] == "yes"


def test_words_on_screen_never_credit_words_spoken() -> None:
    """A sign that shows the words is no evidence they were said (a false yes under v4)."""
    label, reason = ask("Someone says the exit is closed.", heard="", screen="THE EXIT IS CLOSED")
    assert label == "unknown" and "spoken" in reason
    assert ask("Someone says the exit is closed.", heard="Welcome aboard, everyone.", screen="THE EXIT IS CLOSED")[0] \
        != "yes"


def test_words_spoken_never_credit_words_shown() -> None:
    label, reason = ask("The sign reads the exit is closed.", heard="the exit is closed", screen="")
    assert label == "unknown" and "shown" in reason
    assert ask("The sign reads the exit is closed.", heard="the exit is closed")[0] == "unknown"


def test_channel_of_a_claim() -> None:
    assert channel_of(analyze("The sign reads crown jewels.")) == "shown"
    assert channel_of(analyze("A title card says my fellow Americans.")) == "shown"
    assert channel_of(analyze("The screen shows the words Goddard Space Flight Center.")) == "shown"
    assert channel_of(analyze("Someone says crown jewels.")) == "spoken"
    assert channel_of(analyze("The jewels are in the crown.")) == "any"


def test_the_rule_table_renders_every_rule() -> None:
    table = rules_markdown()
    lines = table.strip().splitlines()
    assert len(lines) == len(RULES) + 2
    for i, row in enumerate(RULES, 1):
        assert lines[i + 1].startswith(f"| {i} | `{row.name}` |")
        assert row.fn.__doc__ and "Example:" in row.fn.__doc__, row.name
    assert len({r.name for r in RULES}) == len(RULES)


def test_every_rule_is_small() -> None:
    """The rule code stays readable: no rule function over 40 lines."""
    import inspect

    for row in RULES:
        assert len(inspect.getsource(row.fn).splitlines()) <= 40, row.name


COUNTDOWN = "Nine. Eight. Seven. Six. Five. Four."


def test_an_ordinal_position_is_read_from_the_word_order() -> None:
    assert ask("The third number the voice says is seven.", heard=COUNTDOWN)[0] == "yes"
    label, reason = ask("The fourth number the voice says is five.", heard=COUNTDOWN)
    assert label == "no" and "'6'" in reason
    assert analyze("The third number the voice says is seven.").speaker is None  # "third" names no one


def test_the_first_thing_said_is_checked_on_its_first_word() -> None:
    heard = "This is the optical and science segment of the Webb."
    assert ask("The first thing the narrator says is this is the optical segment.", heard=heard)[0] == "yes"
    assert ask("The first thing the narrator says is the Webb segment.", heard=heard)[0] == "no"


def test_passive_voice_makes_no_speaker_of_the_addressees() -> None:
    c = analyze("Listeners are told to ask what they can do for their country.")
    assert c.speaker is None and c.addressee is None and [t.text for t in c.terms] == ["ask", "country"]
    assert analyze("Visitors are told to keep out.").addressee == "Visitors"
    heard = "ask what you can do for your country."
    assert ask("Listeners are told to ask what they can do for their country.", heard=heard)[0] == "yes"


def test_source_nouns_and_tone_words_are_not_speakers() -> None:
    for fact in ("The broadcast mentions Goddard.", "The recording says Goddard.", "A cheerful voice says Goddard.",
                 "The speaker irritably says Goddard."):
        c = analyze(fact)
        assert c.speaker is None and [t.text for t in c.terms] == ["Goddard"], fact
    assert ask("The broadcast mentions Goddard.", heard="at NASA's Goddard Space Flight Center")[0] == "yes"


def test_tone_words_are_not_verifiable() -> None:
    from murgat.core.rules import rule_verifiable

    for s in ("The speaker irritably says he is in a bad humor.", "A cheerful voice calls out Hildy.",
              "The narrator sounds annoyed."):
        assert rule_verifiable(s)[0] is False, s
    assert rule_verifiable("Someone says he is happy.")[0] is True  # a report of the words, not a tone


def test_a_display_is_the_speaker_of_on_screen_text() -> None:
    """"The sign reads X" is decided from the text read, the display word itself need not be read."""
    for fact in ("The sign reads EXIT ONLY.", "A title card says Chapter One.",
                 "The screen shows the words Chapter One."):
        c = analyze(fact)
        assert c.speaker is None and all(t.norm not in ("sign", "title", "card", "screen") for t in c.terms), fact
    assert ask("The sign reads EXIT ONLY.", screen="EXIT ONLY")[0] == "yes"
    assert ask("The sign reads EXIT ONLY.", screen="ENTRANCE ONLY")[0] == "no"
    assert ask("The screen shows the words Chapter One.", screen="CHAPTER ONE")[0] == "yes"


def test_a_word_near_in_meaning_is_no_substitution() -> None:
    """"film" where "movie" is heard may be a paraphrase: never "no" (v4 answered "no")."""
    heard = "somebody must have stolen the movie reels"
    label, reason = ask("The speaker says somebody must have stolen the film reels.", heard=heard)
    assert label == "unknown" and "'movie'" in reason and "similarity" in reason
    assert ask("The speaker says somebody must have stolen the castle reels.", heard=heard)[0] == "no"


def test_a_plain_word_is_replaced_only_by_a_word_heard_above_chance() -> None:
    heard = "somebody must have stolen the movie reels"
    fact = "The speaker says somebody must have stolen the castle reels."
    assert ask(fact, heard=heard, movie=0.1)[0] == "unknown"
    assert ask(fact, heard=heard, movie=0.3)[0] == "no"


def test_an_unsure_word_matters_only_where_it_decides() -> None:
    """A name swapped for a surely heard one is "no" even when another word of the window is unsure."""
    heard = "um, at the Goddard Space Flight Center in Greenbelt, Maryland."
    label, reason = ask("The narrator says the center is in Greenbelt, Virginia.", heard=heard, um=0.1)
    assert label == "no" and "maryland" in reason.lower()
    assert ask("The narrator says the center is in Greenbelt, Virginia.", heard=heard, maryland=0.3)[0] == "unknown"


def test_numbers_in_words_years_and_dozens() -> None:
    from murgat.judges.claims import numbers_as_digits

    assert numbers_as_digits("built in two thousand and five") == "built in 2005"
    assert numbers_as_digits("in nineteen ninety nine, nineteen oh five") == "in 1999, 1905"
    assert numbers_as_digits("a dozen eggs, half a dozen, two dozen") == "12 eggs, 6, 24"
    assert numbers_as_digits("nineteen eighteen") == "nineteen eighteen"  # a countdown, not 1918
    assert ask("The speaker says it opened in two thousand and five.", heard="It opened in 2005.")[0] == "yes"
    assert ask("The speaker says it opened in nineteen ninety nine.", heard="It opened in 1999.")[0] == "yes"
    assert ask("The speaker says it opened in nineteen ninety nine.", heard="It opened in 1989.")[0] == "no"
    assert ask("The voice says a dozen numbers.", heard=COUNTDOWN)[0] == "no"


JFK = "And so, my fellow Americans, ask not what your country can do for you, ask what you can do for your country."


def test_a_negation_belongs_to_the_clause_it_stands_in() -> None:
    """The "not" of "ask not …" negates that clause only (v4 answered the true second clause "no" and
    credited its false denial)."""
    assert ask("The speaker says ask what you can do for your country.", heard=JFK)[0] == "yes"
    assert ask("The speaker says do not ask what you can do for your country.", heard=JFK)[0] == "no"
    assert ask("The speaker says ask what your country can do for you.", heard=JFK)[0] == "no"
    assert ask("The speaker says ask not what your country can do for you.", heard=JFK)[0] == "yes"


def test_the_negation_of_a_named_quote_is_not_the_claims() -> None:
    assert ask('After "ask not", the speaker says what your country can do for you.', heard=JFK)[0] == "yes"
    assert ask('The speaker says ask what you can do for your country after saying "ask not".', heard=JFK)[0] == "yes"
    assert ask('The speaker says the line "ask not what your country can do for you".', heard=JFK)[0] == "yes"
    assert ask('The speaker says "ask what your country can do for you".', heard=JFK)[0] == "no"


def test_asks_when_or_where_is_the_question_not_a_picture() -> None:
    c = analyze("Someone asks when the train leaves.")
    assert [t.text for t in c.terms] == ["train", "leaves"] and not c.scene and c.asks
    assert ask("Someone asks when the train leaves.", heard="When does the train leave?")[0] == "yes"
