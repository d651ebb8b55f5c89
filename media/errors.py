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
    """The file does not exist, cannot be opened, or is not a regular file (checked before ffprobe runs)."""

    kind = "missing_media"


class MediaUnwritable(MediaError):
    """A decoded clip or track that must be a file could not be written anywhere (a file-size
    limit such as ``ulimit -f``, a full disk): an error of the item, said in one line."""

    kind = "media_unwritable"


class CorruptMedia(MediaError):
    """ffprobe or a decoder cannot read the file or one of its streams (not media, truncated, no frames)."""

    kind = "corrupt_media"


class UnsupportedCodec(MediaError):
    """A stream whose codec ffprobe cannot identify: murgat would not know how to decode it."""

    kind = "unsupported_codec"


class NoAudioStream(MediaError):
    """An audio citation or a transcript asked of a file with no audio stream."""

    kind = "no_audio_stream"


class NoVideoStream(MediaError):
    """A visual citation or a frame reader asked of a file with no video stream."""

    kind = "no_video_stream"


class OutsideMedia(MediaError):
    """A citation whose times fall outside the cited stream (past its end, or not a valid range)."""

    kind = "outside_media"


class ToolMissing(MediaError):
    """ffmpeg/ffprobe or an optional model package is not installed."""

    kind = "tool_missing"
