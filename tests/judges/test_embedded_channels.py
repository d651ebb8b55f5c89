"""The offline judge v2 on real media: the defects of issue #15, each as a check.

Real ASR (bundled Whisper base), real OCR, the real YAMNet tagger. Every assertion rests on
words and sounds the models are sure of (clearly spoken names and numbers, a music score,
digital silence) and on the *kind* of verdict, never on one exact decoding of a borderline
word: for instance the substitution checks pass whether or not ASR hears every other word.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.core.rules import rule_decompose
from murgat.judges import make_judge
from murgat.judges.embedded_check import check_claim
from murgat.media.asr import WORD_EDGE_TOLERANCE_S, Transcript, Word
from tests.conftest import ROOT, real_media

pytestmark = pytest.mark.slow
JUDGE = make_judge("embedded")


def verdict(media: str, fact: str) -> tuple[str, str]:
    v = check_claim(fact, real_media(media), JUDGE)
    return v.label, v.reason


def test_an_invented_word_is_never_credited() -> None:
    label, reason = verdict("jfk.flac", "He says ask what your country can do for Texas (audio, 0:03-0:07).")
    assert label == "no" and "Texas" in reason
    label, _ = verdict("nasa_13013.mp4", "The narrator says the center is in Greenbelt, Virginia (audio, 0:08-0:12).")
    assert label == "no"


def test_a_missing_negation_is_a_no() -> None:
    label, reason = verdict("jfk.flac", "He says ask what your country can do for you (audio, 0:03-0:07).")
    assert label == "no" and "negat" in reason


def test_time_phrases_and_labels_are_not_claim_terms() -> None:
    label, _ = verdict("countdown.mp3", "Reasoning: Around seven seconds in, the voice says five (audio, 0:07-0:09).")
    assert label == "yes"
    facts = rule_decompose("Reasoning: the voice says five (audio, 0:07-0:09).")
    assert facts == ["the voice says five (audio, 0:07-0:09)."]


def test_words_at_a_window_edge_follow_one_rule() -> None:
    tr = Transcript(model="t", words=[Word(word="your", start=9.78, end=9.94), Word(word="country", start=9.94, end=10.36),
                                      Word(word="later", start=10.45, end=11.2)])
    assert tr.text_in(8.0, 10.0) == "your country"  # 10.36 s ends inside 10.0 + 0.5
    assert tr.words_in(8.0, 10.0, tolerance=0.0)[-1].word == "your"  # without the tolerance it is cut
    assert WORD_EDGE_TOLERANCE_S == 0.5
    label, _ = verdict("jfk.flac", "The speaker says ask what you can do for your country (audio, 0:08-0:10).")
    assert label == "yes"


def test_an_audio_citation_never_blames_the_picture() -> None:
    label, reason = verdict("pyannote_sample.wav", "Both speakers are in California (audio, 0:20-0:22).")
    assert label != "yes" and "visual" not in reason and "see" not in reason


def test_purely_visual_claims_abstain() -> None:
    label, reason = verdict("friday.mp4", "A woman in a hat sits at a desk (visual, 0:02).")
    assert label == "unknown" and "cannot see" in reason


def test_sounds_are_heard() -> None:
    assert verdict("chaplin.mp4", "Music plays (audio, 0:02-0:05).")[0] == "yes"
    assert verdict("chaplin.mp4", "Someone speaks (audio, 0:02-0:05).")[0] == "no"
    assert verdict("flower.webm", "The audio is silent (audio, 0:01-0:03).")[0] == "yes"
    assert verdict("flower.webm", "Music plays (audio, 0:01-0:03).")[0] == "no"
    assert verdict("jfk.flac", "Music plays (audio, 0:02-0:05).")[0] == "no"
    label, reason = verdict("pyannote_sample.wav", "Two people are talking (audio, 0:14-0:17).")
    assert label == "unknown" and "speakers" in reason  # speech is heard; how many cannot be counted


def test_labelled_claims_no_false_claim_credited() -> None:
    """The substituted and negated claims of the labelled set: none may get "yes"; and on all
    claims the judge must agree with the labels on at least 85% of what it answers (the
    benchmark measures 0.93; the margin absorbs decoding differences between CPUs). Wrong-time
    claims are left out of the first check: one (c206) reverses the roles of the same content
    words, which term accounting cannot see (a documented limit)."""
    claims = [json.loads(x) for x in (ROOT / "tests/data/embedded_claims/claims.jsonl").read_text().splitlines() if x]
    assert len(claims) >= 200
    wrong, answered, agree = [], 0, 0
    for c in claims:
        if c["type"] == "visual_only":
            continue
        label = check_claim(c["claim"], real_media(c["media"]), JUDGE).label
        if label in ("yes", "no"):
            answered += 1
            agree += (label == "yes") == c["label"]
        if not c["label"] and label == "yes" and c["type"] in ("substituted", "negated"):
            wrong.append(c["id"])
    assert not wrong
    assert answered > 150 and agree / answered >= 0.85


def test_run_config_records_the_text_models(tmp_path: Path, example_media: Path) -> None:
    from murgat.cli import main

    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4",
                               "response": "She says somebody stole the crown jewels (audio, 0:04-0:06)."}) + "\n")
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded",
                 "--out", str(tmp_path / "run"), "--quiet"]) in (0, 1)
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    tc = cfg["versions"]["text_channels"]
    assert tc["asr"]["compute_type"] in ("float32", "int8") and len(tc["asr"]["model_bin_sha256"]) == 64
    assert tc["sounds"]["yamnet_onnx_sha256"].startswith("6033a308")
    assert set(tc["ocr"]["models_sha256"]) and tc["still_varies"]
