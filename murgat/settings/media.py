"""The settings of ``murgat media ACTION``: one model per action (``probe``, ``transcribe``, ``ocr``,
``evidence``), each a file's tool with its own options."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o


class MediaProbeSettings(o.Settings, o.Json):
    """``murgat media probe FILE [--json]``: streams, durations and which streams murgat uses."""

    command: ClassVar[str] = "media probe"

    file: str = Field(description="a media file (video or audio)", json_schema_extra={"positional": True})


class MediaTranscribeSettings(o.Settings, o.Json):
    """``murgat media transcribe FILE [--asr-model M] [--language L] [--backend B] [--json]``."""

    command: ClassVar[str] = "media transcribe"

    file: str = Field(description="a media file (video or audio)", json_schema_extra={"positional": True})
    asr_model: str | None = Field(None, description="model folder, or a bundled name: base (default), tiny.en (the "
                                                    "same option as score's --asr-model)",
                                  json_schema_extra={"also": ["--model"]})
    language: str = Field("en", description="spoken language code for ASR")
    backend: Literal["faster-whisper", "whisperx"] = Field(
        "faster-whisper", description="ASR backend: faster-whisper, or whisperx (optional extra)")


class MediaOcrSettings(o.Settings, o.Json):
    """``murgat media ocr FILE [--fps F] [--json]``: on-screen text of sampled frames."""

    command: ClassVar[str] = "media ocr"

    file: str = Field(description="a media file (video or audio)", json_schema_extra={"positional": True})
    fps: float = Field(1.0, description="frames per second read for on-screen text")


class MediaEvidenceSettings(o.Settings):
    """``murgat media evidence FILE CITATIONS --out DIR [options]``: exactly what a judge would be sent."""

    command: ClassVar[str] = "media evidence"

    file: str = Field(description="a media file (video or audio)", json_schema_extra={"positional": True})
    citations: str = Field(description='e.g. "(audio, 0:01-0:02; visual, 0:03)"', json_schema_extra={"positional": True})
    out: str = Field(description="folder for frames, WAVs, clips and manifest.json")
    pad: float = Field(0.0, description="pad_s: widen each segment")
    fps: float = Field(1.0, description="frames per second sampled inside visual segments")
    max_frames: int = Field(8, ge=1, description="most frames sent for one visual segment (or the whole video)")
    clips: bool = Field(False, description="picture-only clip files instead of frames")
    max_audio_s: float | None = Field(None, description="most seconds of audio sent for one request (default 300); a "
                                                        "longer span is sampled")
    audio_excerpt_s: float | None = Field(None, description="length of each excerpt of a sampled span (default 30)")
    over_limit: Literal["sample", "refuse"] | None = Field(
        None, description="a segment over a limit is sampled (default) or refused with the reason")
    provider: str | None = Field(None, description="apply this judge provider's request limits too (gemini, openai, "
                                                   "hf, …), as a run with --judge PROVIDER:… does")
