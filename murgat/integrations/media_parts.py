"""What the inspect task sends the model under test for one media file, as ``media`` says (see
:mod:`murgat.integrations.inspect_ai`): murgat's media code only, no inspect_ai, so it is tested and
reused apart, and the task module holds nothing but inspect's registered objects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from murgat.core.inputs import InputError

MediaAs = Literal["video", "video+audio", "frames+audio", "frames"]
MEDIA_AS: tuple[str, ...] = ("video", "video+audio", "frames+audio", "frames")
#: containers inspect_ai's ContentVideo takes, by file extension
VIDEO_FORMATS = {".mp4": "mp4", ".m4v": "mp4", ".mov": "mov", ".mpg": "mpeg", ".mpeg": "mpeg"}


def check_media_as(media: str) -> None:
    if media not in MEDIA_AS:
        raise ValueError(f"media {media!r}: choose one of {', '.join(MEDIA_AS)}")


@dataclass
class MediaPiece:
    """One piece of what the model is sent: a file (video or audio), a JPEG frame or a text label."""

    kind: Literal["video", "audio", "image", "text"]
    path: str | None = None
    format: str | None = None
    data: bytes | None = None
    text: str | None = None


def media_pieces(path: Path, media: str, fps: float = 1.0, max_frames: int = 64) -> list[MediaPiece]:
    """What ``media`` mode sends for the file at ``path`` (see :mod:`murgat.integrations.inspect_ai`); blocking
    (decodes and converts, cached by content in murgat's media cache)."""
    from murgat.media.clips import audio_clip, video_clip
    from murgat.media.streams import probe

    check_media_as(media)
    info = probe(path)
    pieces: list[MediaPiece] = []
    sound = MediaPiece("audio", str(audio_clip(path, 0.0, float(info.audio_duration or 0.0))), "wav") \
        if info.has_audio and info.audio_duration else None
    if not info.has_video:
        if sound is None:
            raise InputError(f"{path}: the file has neither a video nor an audio stream")
        ext = path.suffix.lower()
        return [MediaPiece("audio", str(path), ext[1:])] if ext in (".wav", ".mp3") else [sound]
    if media.startswith("frames"):
        from murgat.judges.types import ImagePart, MediaPart, frame_label

        for fr in MediaPart(str(path), fps=fps, max_frames=max_frames).frames():  # as murgat's own clients sample them
            pieces.append(MediaPiece("text", text=frame_label(fr.time)))
            pieces.append(MediaPiece("image", data=ImagePart(image=fr.image, time=fr.time).encoded(), format="jpeg"))
        if media == "frames+audio" and sound is not None:
            pieces += [MediaPiece("text", text="(the sound track of the whole video)"), sound]
        return pieces
    fmt = VIDEO_FORMATS.get(path.suffix.lower())
    if media == "video" and fmt is not None:
        return [MediaPiece("video", str(path), fmt)]
    picture, _ = video_clip(path, 0.0, float(info.video_duration or 0.0))
    pieces.append(MediaPiece("video", str(picture), "mp4"))
    if sound is not None:
        pieces.append(sound)
    return pieces
