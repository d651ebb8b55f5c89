"""The text channels of an item's media file: what is said (ASR), what is written on screen (OCR)
and which sounds are heard (a sound tagger), for judges that read evidence as text and for
``--evidence-text``."""

from __future__ import annotations

import asyncio

from media.errors import ToolMissing
from media.probe import probe
from murgat.judging.config import JudgingConfig
from murgat.judging.context import ItemContext


async def text_channels(ctx: ItemContext, cfg: JudgingConfig, need: bool) -> None:
    """Fill ``ctx.transcript``, ``ctx.sounds`` and ``ctx.screen`` when ``need`` (a judge of the run
    reads evidence as text, or ``--evidence-text``); nothing otherwise. OCR is lazy: frames are
    read only inside cited visual segments, when evidence asks for them."""
    if not need:
        return
    info = probe(ctx.media)
    if info.has_audio:
        from media.asr import transcribe  # ASR, OCR and the sound tagger load their models and numpy

        ctx.transcript = await asyncio.to_thread(transcribe, ctx.media, cfg.asr_model)
        if cfg.sound_events:
            from media.sounds import tag_file

            try:
                ctx.sounds = await asyncio.to_thread(tag_file, ctx.media)
            except ToolMissing:
                ctx.sounds = None  # no tagger installed: sound claims are abstentions (the judge says why)
    if info.has_video:
        from media.ocr import lazy_screen

        ctx.screen = await asyncio.to_thread(lazy_screen, ctx.media, cfg.ocr_fps)
