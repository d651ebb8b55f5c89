"""``find`` backends on real speech: ASR words (exact phrase, fuzzy, MiniLM) and merging."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from murgat.judging.context import ItemContext
from murgat.judging.pool import CallPool
from murgat.media.streams import probe
from murgat.programs.ops import ExecutorApi, OpSettings, merge_ranges
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig
from tests.conftest import real_media


def test_merge_ranges_clamps_drops_and_merges() -> None:
    got = merge_ranges([(5, 7), (-1, 2), (6, 9), (20, 30), (4, 3), (1.5, 1.8)], duration=25.0)
    assert got == [(0.0, 2.0), (5, 9), (20, 25.0)]


def _api(media: Path, backend: str = "transcript") -> ExecutorApi:
    js = JudgeSpec(spec="replay:none")
    cfg = ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js)
    ctx = ItemContext(media=media, durations=probe(media).durations(), config=cfg)
    return ExecutorApi(executor=None, checker=None, pool=CallPool(), ctx=ctx,  # type: ignore[arg-type]
                       settings=OpSettings(find_backend=backend))  # type: ignore[arg-type]


@pytest.mark.slow
async def test_transcript_find_on_espeak_speech(tmp_path: Path) -> None:
    """Two phrases with 2 s of silence between: the second is found after the first."""
    a, b, wav = tmp_path / "a.wav", tmp_path / "b.wav", tmp_path / "speech.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "130", "-w", str(a), "The weather is sunny today."], check=True)
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "130", "-w", str(b), "Please open the green door."], check=True)
    subprocess.run(["sox", str(a), str(wav), "pad", "0", "2"], check=True)
    subprocess.run(["sox", str(wav), str(b), str(tmp_path / "both.wav")], check=True)
    media = tmp_path / "both.wav"
    first_len = float(subprocess.run(["soxi", "-D", str(a)], capture_output=True, text=True).stdout)
    api = _api(media)
    found = await api.find("the green door", "audio")
    assert found and all(r.source == "transcript" and r.modality == "audio" for r in found)
    assert found[0].start >= first_len + 1.0  # in the second phrase, after the silence
    assert api.records[-1].inputs["backend"] == "transcript"
    sunny = await api.find('he says "sunny today"', "audio")  # the quoted words are what is searched
    assert sunny and sunny[0].end <= first_len + 0.5


@pytest.mark.slow
async def test_transcript_find_on_a_real_clip() -> None:
    """jfk.flac: "ask not what your country can do for you" comes in the second half."""
    api = _api(real_media("jfk.flac"))
    found = await api.find("what your country can do for you", "audio")
    assert found, "the phrase (or a near spelling of it) is in the transcript"
    assert 4.0 <= found[0].start <= 11.0


async def test_find_with_an_unknown_modality_or_missing_track_is_recorded() -> None:
    api = _api(real_media("jfk.flac"), backend="model")
    assert await api.find("a man waves", "visual") == []  # the file has no picture
    assert api.records[-1].status == "error" and "no visual track" in api.records[-1].error
    assert await api.find("x", "smell") == [] and "unknown modality" in api.records[-1].error
