"""What is inside a media file: streams, durations, rates, and which streams we use.

Stream choice is deterministic and matches what the decoders pick on their own, so a
probe's "duration of the visual stream" is the duration of the frames we will decode:

* video: the default-disposition stream with the most pixels (ties: lowest index),
  skipping cover art — the same choice decord makes (nasa_13013.mp4 → the 480x270 one);
* audio: the default-disposition stream with the highest sample rate, then most channels
  (ties: lowest index).

Durations come from the stream, then the Matroska ``DURATION`` tag, then the container,
because webm files carry no stream duration and mp4 subtitle tracks can outlast the AV.

ffprobe's answer is kept in the media cache (namespace ``probe``) under the file's *stat
identity* — device, inode, size, modification and change times in nanoseconds — plus
ffprobe's own identity, not under the content digest: hashing a large video just to look up
its stream list would cost more than asking ffprobe again (~0.1 s per file, mostly its
start-up), which is what a warm run saves. Any write to the file changes its change time,
which a user cannot set back, so an edited file is probed again. A file changed in the last
:data:`RACY_NS` is probed but not kept: file times tick in steps of a few milliseconds, so a
second write within the same tick could otherwise leave the identity unchanged.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field

from murgat.media.cache import RACY_NS, default_cache, make_key, stat_identity
from murgat.media.errors import CorruptMedia, MediaNotFound, ToolMissing, UnsupportedCodec
from murgat.media.singleflight import lock_for


class StreamInfo(BaseModel):
    """One stream as ffprobe reports it, with the duration resolved in seconds."""

    index: int = Field(description="ffprobe's index of the stream (what video_stream and audio_stream name)")
    type: str = Field(description="ffprobe's codec_type: video, audio, subtitle, data, attachment or unknown")
    codec: str | None = Field(default=None, description="codec name; an audio or (non cover art) video "
                                                          "stream without one is refused")
    duration: float | None = Field(default=None, description="seconds: the stream's own, else its Matroska DURATION "
                                   "tag, else the container's (webm streams state none)")
    default: bool = Field(default=False, description="default disposition: preferred when a stream is chosen")
    width: int | None = None
    height: int | None = None
    fps: float | None = Field(default=None, description="video only: the average frame rate, else the base one")
    n_frames: int | None = Field(default=None, description="frames as the container counts them (None: not stated)")
    sample_rate: int | None = Field(default=None, description="audio only, in Hz")
    channels: int | None = None
    attached_pic: bool = Field(default=False, description="cover art: a still picture, never the chosen video stream")
    start_time: float | None = Field(default=None, description="first timestamp (s); ffmpeg's -ss counts from the container's")


class ProbeResult(BaseModel):
    """Everything the rest of murgat needs to know about a media file."""

    path: str
    format: str
    duration: float | None = Field(description="container duration in seconds")
    start_time: float | None = Field(default=None, description="container start time in seconds")
    streams: list[StreamInfo]
    video_stream: int | None = Field(default=None, description="ffprobe index of the chosen video stream")
    audio_stream: int | None = Field(default=None, description="ffprobe index of the chosen audio stream")
    has_video: bool = False
    has_audio: bool = False
    video_duration: float | None = None
    audio_duration: float | None = None
    width: int | None = None
    height: int | None = None
    fps: float | None = None
    sample_rate: int | None = None
    channels: int | None = None

    def durations(self) -> dict[str, float | None]:
        """Per-modality durations for citation checks (``None`` = stream absent)."""
        return {"visual": self.video_duration, "audio": self.audio_duration}

    def stream(self, index: int) -> StreamInfo:
        return next(s for s in self.streams if s.index == index)


#: ffmpeg/ffprobe input options that keep them to the one local file named: no network
#: protocols, no playlists or concat lists pulling other files in
SAFE_INPUT_ARGS: tuple[str, ...] = ("-protocol_whitelist", "file")
#: demuxers of ordinary media files (ffprobe's ``format_name`` lists one or more, comma-separated)
ALLOWED_DEMUXERS = frozenset({
    "mov", "mp4", "m4a", "3gp", "3g2", "mj2", "matroska", "webm", "avi", "mp3", "wav", "flac", "ogg", "aac",
    "mpegts", "mpeg", "flv", "asf", "w64", "aiff", "opus", "caf", "ivf", "h264", "hevc", "m4v", "amr",
})
#: demuxers that read other files or URLs named inside the input
REFUSED_DEMUXERS = frozenset({"hls", "applehttp", "concat", "dash", "ffconcat", "sdp", "rtsp", "rtp", "image2",
                              "tee", "lavfi", "imf"})


def _tool(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise ToolMissing(name, f"'{name}' is not on PATH; install ffmpeg (apt-get install -y ffmpeg)")
    return found


def _parse_tag_duration(tag: str | None) -> float | None:
    if not tag:
        return None
    try:
        h, m, s = tag.split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)
    except ValueError:
        return None


def _rate(text: str | None) -> float | None:
    if not text or text in ("0/0", "0"):
        return None
    num, _, den = text.partition("/")
    try:
        return float(num) / float(den or 1)
    except (ValueError, ZeroDivisionError):
        return None


def _float(v: object) -> float | None:
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def probe(path: str | os.PathLike[str]) -> ProbeResult:
    """Probe ``path`` (cached by path, size and mtime within a process)."""
    p = Path(path)
    try:
        st = p.stat()  # one stat for existence, type, size and mtime
    except FileNotFoundError:
        raise MediaNotFound(str(p), "file does not exist") from None
    except OSError as exc:
        raise MediaNotFound(str(p), f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise MediaNotFound(str(p), "not a regular file")
    real = _real(str(p))
    ident = stat_identity(st)
    with lock_for(("probe", real)):  # single-flight: one ffprobe per file even when many items start together
        return _probe_cached(real, ident)


@functools.lru_cache(maxsize=4096)
def _real(p: str) -> str:
    return os.path.realpath(p)


@functools.lru_cache(maxsize=8)
def _tool_identity(tool: str) -> str:
    st = os.stat(tool)
    return f"{tool}:{st.st_size}:{st.st_mtime_ns}"


def _ffprobe_json(path: str, ident: tuple[int, ...]) -> dict[str, Any]:
    """ffprobe's JSON for ``path``: from the media cache when this exact file was probed before."""
    tool = _tool("ffprobe")
    cache = default_cache()
    key = make_key("probe", "stat:" + ":".join(map(str, ident)), path=path, tool=_tool_identity(tool), v=2)
    found = cache.get_json("probe", key)
    if isinstance(found, dict):
        return found
    cmd = [tool, "-v", "warning", *SAFE_INPUT_ARGS, "-print_format", "json", "-show_streams", "-show_format",
           "file:" + path]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:  # failures are not kept: a fixed file is a new file (new stat identity)
        msg = proc.stderr.strip().split("\n")[-1].strip() if proc.stderr.strip() else "ffprobe failed"
        raise CorruptMedia(path, f"cannot be read as media ({msg})")
    data: dict[str, Any] = json.loads(proc.stdout or "{}")
    if _ESTIMATED in proc.stderr:
        _measure_estimated_durations(path, data)
    if time.time_ns() - ident[4] > RACY_NS:
        cache.put_json("probe", key, data)
    return data


#: what ffmpeg says when a container's duration is only its size over the first frames' bitrate (a VBR
#: MP3 without a Xing/VBRI header, some raw streams): 244.7 s for a 300 s file, or 134.8 s for 60 s
_ESTIMATED = "Estimating duration from bitrate"


def _measure_estimated_durations(path: str, data: dict[str, Any]) -> None:
    """Replace a duration ffprobe estimated from the bitrate by the one the packets give (demuxed,
    never decoded: the end of the last packet of each audio stream), in ``data`` in place, so a true
    moment near the end is not "past the end" of the media. Noted as ``murgat_duration``."""
    import av

    streams = [s for s in data.get("streams", []) if s.get("codec_type") == "audio" and isinstance(s.get("index"), int)]
    if not streams:
        return
    try:
        with cast(Any, av.open(path, options={"protocol_whitelist": "file"})) as container:
            for s in streams:
                st = container.streams[s["index"]]
                end = 0.0
                for pkt in container.demux(st):
                    if pkt.pts is not None:
                        end = max(end, float((pkt.pts + (pkt.duration or 0)) * st.time_base))
                container.seek(0)
                s["duration"] = f"{end:.6f}"
    except (av.FFmpegError, IndexError, ValueError, OSError):
        return  # the estimate stays; the file's own problems are reported where it is decoded
    longest = max(float(s["duration"]) for s in streams)
    data.setdefault("format", {})["duration"] = f"{longest:.6f}"
    data["format"]["murgat_duration"] = "measured from the packets (the container's duration was a bitrate estimate)"


@functools.lru_cache(maxsize=512)
def _probe_cached(path: str, ident: tuple[int, ...]) -> ProbeResult:
    if ident[2] == 0:
        raise CorruptMedia(path, "file is empty")
    data = _ffprobe_json(path, ident)
    fmt = data.get("format", {})
    demuxers = set(str(fmt.get("format_name", "")).split(","))
    if not demuxers & ALLOWED_DEMUXERS or demuxers & REFUSED_DEMUXERS:
        raise CorruptMedia(path, f"container '{fmt.get('format_name')}' is not a media file murgat reads "
                                 "(playlists and indirect inputs such as HLS or concat lists are refused)")
    container = _float(fmt.get("duration"))
    streams: list[StreamInfo] = []
    for s in data.get("streams", []):
        disp = s.get("disposition", {}) or {}
        dur = _float(s.get("duration")) or _parse_tag_duration((s.get("tags") or {}).get("DURATION"))
        streams.append(
            StreamInfo(
                index=int(s["index"]),
                type=s.get("codec_type", "unknown"),
                codec=s.get("codec_name"),
                duration=dur if dur is not None else container,
                default=bool(disp.get("default")),
                width=s.get("width"),
                height=s.get("height"),
                fps=_rate(s.get("avg_frame_rate")) or _rate(s.get("r_frame_rate")) if s.get("codec_type") == "video" else None,
                n_frames=int(s["nb_frames"]) if str(s.get("nb_frames", "")).isdigit() else None,
                sample_rate=int(s["sample_rate"]) if s.get("sample_rate") else None,
                channels=s.get("channels"),
                attached_pic=bool(disp.get("attached_pic")),
                start_time=_float(s.get("start_time")),
            )
        )
    if not any(s.type in ("video", "audio") for s in streams):
        raise CorruptMedia(path, "no video or audio stream found")
    videos = [s for s in streams if s.type == "video" and not s.attached_pic]
    audios = [s for s in streams if s.type == "audio"]
    for s in videos + audios:
        if s.codec is None or s.codec == "none":
            raise UnsupportedCodec(path, f"stream {s.index} has a codec ffprobe cannot identify")
    v = min(videos, key=lambda s: (not s.default, -((s.width or 0) * (s.height or 0)), s.index), default=None)
    a = min(audios, key=lambda s: (not s.default, -(s.sample_rate or 0), -(s.channels or 0), s.index), default=None)
    return ProbeResult(
        path=path,
        format=fmt.get("format_name", "unknown"),
        duration=container,
        start_time=_float(fmt.get("start_time")),
        streams=streams,
        video_stream=v.index if v else None,
        audio_stream=a.index if a else None,
        has_video=v is not None,
        has_audio=a is not None,
        video_duration=v.duration if v else None,
        audio_duration=a.duration if a else None,
        width=v.width if v else None,
        height=v.height if v else None,
        fps=v.fps if v else None,
        sample_rate=a.sample_rate if a else None,
        channels=a.channels if a else None,
    )
