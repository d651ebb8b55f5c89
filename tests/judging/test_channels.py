"""Text channels by window: a long file's transcript and sound scores are lazy sources (nothing heard
until a window is asked for); a short file's are whole, as before; work over a whole long file
says how far it got."""

from __future__ import annotations

import asyncio
from pathlib import Path

from murgat.judging.channels import progress_line, text_channels
from murgat.judging.config import JudgingConfig
from murgat.judging.context import ItemContext
from murgat.media.asr import ChunkedTranscript, Transcript
from murgat.media.streams import probe


def _ctx(media: Path) -> ItemContext:
    return ItemContext(media=media, durations=probe(media).durations(), config=JudgingConfig())


def test_a_long_files_channels_are_lazy_and_keyed_by_their_recipe(long_tone: Path) -> None:
    ctx = _ctx(long_tone)
    asyncio.run(text_channels(ctx, JudgingConfig(sound_events=False), True))
    assert isinstance(ctx.transcript, ChunkedTranscript) and ctx.transcript.chunks_transcribed == 0
    plans = ctx.segment_plans([], [])
    assert ctx.evidence_hint(plans, True) != ctx.evidence_hint(plans, False)  # the recipe names the ASR settings
    assert ctx._text_id is not None and ctx._text_id["transcript"] == ctx.transcript.identity


def test_a_short_files_transcript_is_whole_as_before(jfk: Path) -> None:
    ctx = _ctx(jfk)
    asyncio.run(text_channels(ctx, JudgingConfig(sound_events=False), True))
    assert isinstance(ctx.transcript, Transcript)


def test_progress_line_reports_each_tenth_once(capsys) -> None:
    report = progress_line("transcribing x.mp4")
    for done in range(0, 3601, 24):
        report(float(done), 3600.0)
    report(3600.0, 3600.0)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0] == "transcribing x.mp4: 10% of 1:00:00" and lines[-1] == "transcribing x.mp4: 100% of 1:00:00"
    assert len(lines) == 10
