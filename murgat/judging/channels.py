"""The text channels of an item's media file: what is said (ASR), what is written on screen (OCR)
and which sounds are heard (a sound tagger), for judges that read evidence as text and for
``--evidence-text``.

Each channel is read where evidence is cited, not over the whole file: a short file is
transcribed and tagged whole, exactly as before (its keys and words unchanged), a long one
(longer than :data:`murgat.media.audio.LONG_AUDIO_S`) gets lazy sources that transcribe and tag only the
chunks a cited window touches, each cached on its own (:func:`murgat.media.asr.transcript_source`,
:func:`murgat.media.sounds.sound_source`); OCR reads only the frames inside cited visual segments
(:func:`murgat.media.ocr.lazy_screen`). So evidence text for one citation near the end of an hour-long
file costs one ASR window, not an hour of transcription."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from murgat.judging.config import JudgingConfig
from murgat.judging.context import ItemContext
from murgat.media.errors import ToolMissing
from murgat.media.limits import fmt_duration
from murgat.media.streams import probe


async def text_channels(ctx: ItemContext, cfg: JudgingConfig, need: bool) -> None:
    """Fill ``ctx.transcript``, ``ctx.sounds`` and ``ctx.screen`` when ``need`` (a judge of the run
    reads evidence as text, or ``--evidence-text``); nothing otherwise. Every channel is lazy on a
    long file (see the module docstring): nothing is heard or read until evidence asks for a window."""
    if not need:
        return
    info = probe(ctx.media)
    if info.has_audio:
        from murgat.media.asr import transcript_source  # ASR, OCR and the sound tagger load their models and numpy

        ctx.transcript = await asyncio.to_thread(transcript_source, ctx.media, cfg.asr_model)
        if cfg.sound_events:
            from murgat.media.sounds import model_files, sound_source

            try:
                sounds = await asyncio.to_thread(sound_source, ctx.media)
                if sounds is not None and hasattr(sounds, "block"):
                    # a long file's scores are made per window, later: is the tagger installed at all?
                    await asyncio.to_thread(model_files)
                ctx.sounds = sounds
            except ToolMissing:
                ctx.sounds = None  # no tagger installed: sound claims are abstentions (the judge says why)
            from murgat.media.voices import voice_source  # numpy (lazy): no model to be missing

            ctx.voices = await asyncio.to_thread(voice_source, ctx.media)
    if info.has_video:
        from murgat.media.ocr import lazy_screen

        ctx.screen = await asyncio.to_thread(lazy_screen, ctx.media, cfg.ocr_fps)


def progress_line(what: str, step: float = 0.1) -> Callable[[float, float], None]:
    """A progress callback (``done, total`` seconds) for work over a whole long file: one line on
    stderr each time another ``step`` of it is done (``what: 40% of 1:00:00``), so an hour of
    transcription is never silent."""
    shown = [0.0]

    def report(done: float, total: float) -> None:
        share = done / total if total > 0 else 1.0
        if share >= shown[0] + step - 1e-9 or (share >= 1.0 > shown[0]):
            shown[0] = share
            print(f"{what}: {share:.0%} of {fmt_duration(total)}", file=sys.stderr, flush=True)

    return report
