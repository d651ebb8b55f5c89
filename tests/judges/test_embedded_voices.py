"""Who speaks (rules v5.1, murgat.judges.speakers): "he/she says" is decided on what is said where one
voice speaks, and left open — saying what would decide it — where it cannot be told. The voice counts
are written here as the evidence carries them, so no decoding can move them; the real-audio checks
are in test_embedded_voices_real.py."""

from __future__ import annotations

from typing import Any

from murgat.judges.embedded import EmbeddedJudge
from murgat.judges.embedded_check import split_evidence
from murgat.judges.types import EvidenceTextPart, JudgeRequest, TextPart

JUDGE = EmbeddedJudge("rules")
LABEL = "audio 0:00-0:06"
SAID = "The train to Boston leaves from the main platform. Please keep your ticket ready."


def count(voices: str | None, median_hz: float | None = 105.0, file: str | None = None) -> dict[str, Any]:
    win = {"voices": voices, "reason": "figures", "voiced_s": 2.9, "stretches": 5, "median_hz": median_hz,
           "spread_st": 2.7}
    whole = None if file is None else {**win, "voices": file}
    return {"voices": voices if voices is not None else ("one" if file == "one" else None), "window": win,
            "file": whole}


def ask(fact: str, *counts: dict[str, Any]) -> tuple[str, str]:
    parts: list[Any] = [TextPart(fact), EvidenceTextPart(label=LABEL, modality="audio", source="transcript", text=SAID)]
    parts += [EvidenceTextPart(label=LABEL, modality="audio", source="voices", text="…", voices=c) for c in counts]
    text, _ = split_evidence(JUDGE.entail(JudgeRequest(parts=parts, task="entail",
                                                       inputs={"fact": fact, "evidence": [LABEL]})))
    head, reason = text.split("\n", 1)
    return head.removeprefix("Label: "), reason.removeprefix("Reason: ")


def test_one_voice_decides_he_says_on_what_is_said() -> None:
    assert ask("He says please keep your ticket ready.", count("one"))[0] == "yes"
    assert ask("A man says the train to Boston leaves from the main platform.", count("one"))[0] == "yes"
    assert ask("He says please keep your passport ready.", count("one"))[0] == "no"


def test_a_one_voice_file_decides_a_window_too_short_to_count() -> None:
    assert ask("He says please keep your ticket ready.", count(None, file="one"))[0] == "yes"


def test_several_voices_or_an_unsure_count_leave_who_speaks_open() -> None:
    label, reason = ask("He says please keep your ticket ready.", count("several"))
    assert label == "unknown" and "several voices speak" in reason and "one voice would decide it" in reason
    label, reason = ask("He says please keep your ticket ready.", count(None))
    assert label == "unknown" and "unsure" in reason


def test_without_a_voice_count_who_speaks_is_open_as_before() -> None:
    label, reason = ask("He says please keep your ticket ready.")
    assert label == "unknown" and "no speaker turns" in reason and "no voice count" in reason


def test_a_pronoun_the_pitch_does_not_fit_stays_open() -> None:
    # "she" never: a man declaiming reaches a woman's pitch (a false yes on Kennedy's voice otherwise)
    label, reason = ask("She says please keep your ticket ready.", count("one", median_hz=245.0))
    assert label == "unknown" and "cannot tell a woman from a man" in reason
    label, reason = ask("He says please keep your ticket ready.", count("one", median_hz=168.0))
    assert label == "unknown" and "not clearly a man's" in reason


def test_a_name_is_never_confirmed_by_one_voice() -> None:
    label, reason = ask("Kennedy says please keep your ticket ready.", count("one"))
    assert label == "unknown" and "who says it ('Kennedy'" in reason


def test_two_segments_of_one_voice_each_need_the_file_to_be_one_voice() -> None:
    label, reason = ask("He says please keep your ticket ready.", count("one"), count("one"))
    assert label == "unknown" and "not necessarily the same one" in reason
    assert ask("He says please keep your ticket ready.", count("one", file="one"), count("one", file="one"))[0] == "yes"
