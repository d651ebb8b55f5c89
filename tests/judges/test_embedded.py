"""The offline ``embedded`` judge on real media: real ASR (bundled Whisper base) and OCR."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from murgat.core.citations import check_durations, parse_citations
from murgat.core.schema import AtomicFact
from murgat.judges.claims import normalize_word, tokenize
from murgat.judges.embedded import EmbeddedJudge
from murgat.judging.context import ItemContext
from murgat.judging.entail import ask_entailment
from murgat.judging.pool import CallPool
from murgat.media.streams import probe
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig

pytestmark = pytest.mark.slow


def entail(media: Path, fact: str, citations: str) -> str:
    cfg = ScoreConfig(judge_verify=JudgeSpec(spec="embedded"), judge_decompose=JudgeSpec(spec="embedded"),
                      judge_entail=JudgeSpec(spec="embedded"))
    cfg.evidence.text = True
    info = probe(media)
    cites = check_durations(parse_citations(citations), info.durations())
    ctx = ItemContext(media=media, durations=info.durations(), config=cfg)
    from murgat.media.asr import transcribe
    from murgat.media.ocr import screen_text

    if info.has_audio:
        ctx.transcript = transcribe(media)
    if info.has_video:
        ctx.screen = screen_text(media)
    fact_obj = AtomicFact(index=0, sentence_index=0, text=f"{fact} {citations}", citations=cites)
    verdict, _call = asyncio.run(ask_entailment(CallPool(), EmbeddedJudge("rules"), fact_obj,
                                               frozenset(range(len(cites))), ctx, variant=cfg.entail_variant))
    return verdict


def test_crown_jewels_entailed_in_the_right_window(friday: Path) -> None:
    fact = "Someone says that somebody must have stolen the crown jewels."
    assert entail(friday, fact, "(audio, 0:04-0:06)") == "yes"
    assert entail(friday, fact, "(audio, 0:00-0:02)") == "no"


def test_visual_claim_without_text_is_unknown(friday: Path) -> None:
    assert entail(friday, "The woman wears a hat.", "(visual, 0:01)") == "unknown"


def test_number_words_match_digits(tmp_path: Path) -> None:
    """espeak-ng says 'five'; Whisper writes 'five'; the fact says '5' — they must match."""
    wav = tmp_path / "five.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "120", "-w", str(wav), "There are five dogs in the yard."], check=True)
    assert entail(wav, "The speaker says there are 5 dogs in the yard.", "(audio, 0:00-0:03)") == "yes"
    assert entail(wav, "The speaker says there are 7 dogs in the yard.", "(audio, 0:00-0:03)") != "yes"
    assert normalize_word("five") == normalize_word("5") == "5"
    assert [normalize_word(w) for w in tokenize("Twenty cats")] == ["20", "cat"]


def test_verify_and_decompose_are_labelled_rules() -> None:
    from murgat.judges.types import JudgeRequest, TextPart

    j = EmbeddedJudge("rules")
    out = asyncio.run(j.generate(JudgeRequest(parts=[TextPart("x")], task="verify",
                                              inputs={"sentence": "So the answer is B."})))
    assert out.text.startswith("Label: no") and "rule:" in out.text
    out = asyncio.run(j.generate(JudgeRequest(parts=[TextPart("x")], task="decompose",
                                              inputs={"sentence": "A man waves (visual, 0:01), and a dog barks (audio, 0:02)."})))
    assert '"facts": ["A man waves (visual, 0:01).", "a dog barks (audio, 0:02)."]' in out.text
