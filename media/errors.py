"""Typed media errors: each names the file and says what is wrong with it.

The pipeline turns these into per-item error records, so one bad file never stops a run.
"""

from __future__ import annotations


class MediaError(Exception):
    """Base class; ``path`` is the file concerned, ``reason`` a one-line explanation."""

    kind = "media_error"

    def __init__(self, path: str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class MediaNotFound(MediaError):
    kind = "missing_media"


class MediaUnwritable(MediaError):
    """A decoded clip or track that must be a file could not be written anywhere (a file-size
    limit such as ``ulimit -f``, a full disk): an error of the item, said in one line."""

    kind = "media_unwritable"


class CorruptMedia(MediaError):
    kind = "corrupt_media"


class UnsupportedCodec(MediaError):
    kind = "unsupported_codec"


class NoAudioStream(MediaError):
    kind = "no_audio_stream"


class NoVideoStream(MediaError):
    kind = "no_video_stream"


class OutsideMedia(MediaError):
    kind = "outside_media"


class ToolMissing(MediaError):
    """ffmpeg/ffprobe or an optional model package is not installed."""

    kind = "tool_missing"
