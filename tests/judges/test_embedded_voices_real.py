"""Who speaks on real audio (rules v5.1): espeak-ng speech run through the whole path a score run
takes (ASR, the sound channel, the voice count, the judge; murgat.judges.embedded_check). One voice:
"he says" is decided on what is said, yes and no; a man and a woman an octave apart: unknown."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from murgat.judges import make_judge
from murgat.judges.embedded_check import check_claim
from tests.media.test_voices import MAN, WOMAN, concat, speak

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("ffmpeg") is None,
                                reason="espeak-ng and ffmpeg make the test audio")


@pytest.fixture(scope="module")
def audio(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("voices")
    man = speak(d / "man.wav", MAN, "en+m3")
    return {"man": man, "two": concat(d / "two.wav", man, speak(d / "woman.wav", WOMAN, "en+f3"))}


def test_one_voice_decides_he_says_yes_and_no(audio: dict[str, Path]) -> None:
    judge = make_judge("embedded")
    yes = check_claim("He says the library is closed on Sunday (audio, 0:00-0:04).", audio["man"], judge)
    assert yes.label == "yes", yes.reason
    no = check_claim("He says the library is not closed on Sunday (audio, 0:00-0:04).", audio["man"], judge)
    assert no.label == "no", no.reason


def test_she_says_of_a_mans_voice_is_left_open(audio: dict[str, Path]) -> None:
    got = check_claim("She says the library is closed on Sunday (audio, 0:00-0:04).", audio["man"], make_judge("embedded"))
    assert got.label == "unknown" and "cannot tell a woman from a man" in got.reason


def test_two_voices_of_clearly_different_pitch_are_never_a_yes(audio: dict[str, Path]) -> None:
    got = check_claim("He says the library is closed on Sunday (audio, 0:00-0:08).", audio["two"], make_judge("embedded"))
    assert got.label == "unknown" and "several voices speak" in got.reason
