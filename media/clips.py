"""One-modality clip files for providers that want a file: picture without sound, sound
without picture.

Cut with ffmpeg-python. A video cut is stream-copied when its start lies on a keyframe
(copying from elsewhere would start on the previous keyframe and show frames outside the
citation) and re-encoded otherwise. Audio clips are written from the decoded 16 kHz
track, so they are sample-exact. Results are cached by file digest and cut parameters.

A long file (over :data:`murgat.media.frames.LONG_VIDEO_S`) is cut without reading all of it: its
keyframes are listed only around the cut (``-read_intervals``), and a re-encoded cut seeks to its
start (ffmpeg's accurate input seek decodes from the keyframe before and drops what precedes the
start) instead of decoding from the file's beginning. Short files are cut exactly as before.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import ffmpeg
import numpy as np

from murgat.media.audio import open_audio, wav_bytes
from murgat.media.cache import MediaCache, default_cache, file_digest, make_key
from murgat.media.errors import CorruptMedia, NoVideoStream
from murgat.media.streams import SAFE_INPUT_ARGS, _tool, probe


def _list_keyframes(path: str, stream: int, interval: str | None = None) -> tuple[float, ...]:
    """Presentation times of the keyframes of one video stream (of ``interval``, ffprobe's
    ``-read_intervals`` spelling, when given: only that stretch of the file is read)."""
    window = ["-read_intervals", interval] if interval else []
    cmd = [_tool("ffprobe"), "-v", "error", "-select_streams", str(stream), *window, "-show_entries",
           "packet=pts_time,flags", "-of", "csv=p=0", *SAFE_INPUT_ARGS, "file:" + path]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CorruptMedia(path, "cannot list keyframes")
    times = []
    for line in proc.stdout.split("\n"):
        parts = line.split(",")
        if len(parts) >= 2 and "K" in parts[1] and parts[0] not in ("", "N/A"):
            times.append(float(parts[0]))
    return tuple(sorted(times))


def keyframe_times(path: str, stream: int) -> tuple[float, ...]:
    """Presentation times of the keyframes of one video stream (memoised by the file's content,
    never its path alone)."""
    return _keyframes_of(path, stream, file_digest(path))


@functools.lru_cache(maxsize=64)
def _keyframes_of(path: str, stream: int, digest: str) -> tuple[float, ...]:
    return _list_keyframes(path, stream)


def keyframes_near(path: str, stream: int, t: float, span: float = 1.0) -> tuple[float, ...]:
    """Keyframe times within ``span`` seconds of ``t`` (reads only that stretch of the file)."""
    return _list_keyframes(path, stream, f"{max(0.0, t - span):.3f}%{t + span:.3f}")


def video_clip(path: str | Path, start: float, end: float, cache: MediaCache | None = None) -> tuple[Path, str]:
    """An mp4 of ``[start, end]`` with no audio; returns ``(path, "copy" | "reencode")``."""
    from murgat.media.frames import LONG_VIDEO_S

    info = probe(path)
    if not info.has_video or info.video_stream is None:
        raise NoVideoStream(str(path), "the file has no video stream")
    if end <= start:
        raise ValueError(f"a clip needs end > start (got {start}-{end})")
    cache = cache or default_cache()
    long = float(info.video_duration or 0.0) > LONG_VIDEO_S
    kfs = keyframes_near(info.path, info.video_stream, start) if long else keyframe_times(info.path, info.video_stream)
    on_key = bool(kfs) and bool(np.min(np.abs(np.asarray(kfs) - start)) < 1e-3)
    mode = "copy" if on_key and info.format.startswith("mov") else "reencode"
    key = make_key("vclip", file_digest(info.path), start=round(start, 3), end=round(end, 3), mode=mode)

    def produce(tmp: Path) -> None:
        src = "file:" + info.path
        if mode == "copy":
            inp = ffmpeg.input(src, ss=start, to=end, protocol_whitelist="file")
        elif long:  # accurate input seek: decodes from the keyframe before start, not from 0:00
            inp = ffmpeg.input(src, ss=start, t=end - start, protocol_whitelist="file")
        else:
            inp = ffmpeg.input(src, protocol_whitelist="file")
        stream = inp[str(info.video_stream)]
        if mode == "copy":
            out = ffmpeg.output(stream, str(tmp), c="copy", an=None, f="mp4", movflags="+faststart")
        else:
            trimmed = stream.setpts("PTS-STARTPTS") if long else stream.trim(start=start, end=end).setpts("PTS-STARTPTS")
            out = ffmpeg.output(trimmed, str(tmp), vcodec="libx264", preset="ultrafast", crf=23,
                                pix_fmt="yuv420p", an=None, f="mp4", movflags="+faststart")
        try:
            out.overwrite_output().run(cmd=_tool("ffmpeg"), quiet=True)
        except ffmpeg.Error as exc:
            err = exc.stderr.decode(errors="replace").strip().split("\n") if exc.stderr else []
            raise CorruptMedia(info.path, f"clip {start:.2f}-{end:.2f} failed ({err[-1] if err else 'ffmpeg error'})") from exc

    return cache.get_or_create("vclip", key, ".mp4", produce), mode


def audio_clip(path: str | Path, start: float, end: float, cache: MediaCache | None = None) -> Path:
    """A 16 kHz mono WAV of ``[start, end)`` with no picture (a long file: only that span is decoded)."""
    track = open_audio(path)
    cache = cache or default_cache()
    key = make_key("aclip", file_digest(track.path), start=round(start, 3), end=round(end, 3), sr=track.sr)
    data = wav_bytes(track.slice(start, end), track.sr)
    return cache.put_bytes("aclip", key, ".wav", data)
