"""Citations → exactly what a judge sees, one modality per segment.

Rules (DESIGN.md, "Evidence"):

* ``visual`` range → frames sampled inside it at ``fps`` (capped at ``max_frames``), or a
  picture-only clip file when ``visual_as="clip"``; ``visual`` point → the frame shown at
  that instant (or frames in a short window when ``visual_point_window_s > 0``);
* ``audio`` range → that span of the 16 kHz mono track, never with picture; ``audio``
  point → a window of ``± audio_point_pad_s`` around it, since an instant of sound is empty;
* ``pad_s`` widens every segment (clamped to the stream);
* several citations → all segments, each labelled with modality and time, in time order;
* an invalid citation → a segment marked unavailable with the reason, never an empty clip;
* a ``visual`` citation with boxes → its frames with the boxes drawn, each followed by a
  crop of every box (``CROP_MARGIN`` around it, enlarged to ``CROP_SIDE``), always as frames
  (a clip cannot show a box);
* optional text channel: ASR words / OCR lines inside the segment;
* over a limit (:mod:`murgat.media.limits`): a visual range gets at most ``max_frames`` frames and,
  when that is fewer than it holds at ``fps``, a ``frames_sampled`` note; an audio segment
  longer than ``limits.max_audio_s`` is sent as evenly spread excerpts (``audio_sampled``) or
  refused with the reason — never cut short silently. :attr:`Evidence.notes` lists them.

Cost follows the cited seconds, not the file: a short file is decoded once and sliced (as
always); a long one is read by seeking — audio in cached chunks (:class:`murgat.media.audio.ChunkedAudio`),
frames by seeking (:class:`murgat.media.seekframes.SeekFrames`) — so memory per open file is bounded
whatever its length.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from murgat.media.errors import MediaError, NoAudioStream, NoVideoStream, OutsideMedia
from murgat.media.limits import EvidenceLimits, EvidenceNote, audio_note, choose_excerpts, fmt_duration, frames_note, refused_note
from murgat.media.streams import ProbeResult, probe

if TYPE_CHECKING:  # decoders load on the first decode, so a run starts its text-only calls without them
    import numpy as np

    from murgat.media.frame import Frame


class CitationLike(Protocol):
    """What the builder needs from a citation (murgat's ``Citation`` fits)."""

    modality: str | None
    start: float | None
    end: float | None
    point: bool
    valid: bool
    reason: str | None
    # boxes: normalised regions (objects with x1, y1, x2, y2), visual only; empty for most


#: a crop shows the box widened by this fraction of its own size on each side
CROP_MARGIN = 0.15
#: longer side of a crop, in pixels (small regions are enlarged to it, large ones reduced)
CROP_SIDE = 512

Region = tuple[float, float, float, float]


def regions_of(c: Any) -> tuple[Region, ...]:
    """The normalised ``(x1, y1, x2, y2)`` boxes of a visual citation (none for audio)."""
    if c.modality != "visual":
        return ()
    return tuple((float(b.x1), float(b.y1), float(b.x2), float(b.y2)) for b in (getattr(c, "boxes", None) or ()))


def regions_label(regions: Sequence[Region]) -> str:
    """`` box 0.100,0.200,0.550,0.800`` per region (what a judge and a cache key see)."""
    return "".join(" box " + ",".join(f"{v:.3f}" for v in r) for r in regions)


class EvidenceConfig(BaseModel):
    """How citations become evidence. Output-affecting: part of every judge cache key."""

    pad_s: float = Field(default=0.0, ge=0, description="widen every segment by this much on each side")
    visual_point_window_s: float = Field(default=0.0, ge=0, description="0: one frame at t; >0: frames within ±w/2")
    audio_point_pad_s: float = Field(default=1.0, ge=0, description="half-width of the window for a point audio citation")
    fps: float = Field(default=1.0, gt=0, description="frame sampling rate inside visual ranges")
    max_frames: int = Field(default=8, ge=1, description="cap on frames per visual segment")
    max_side: int | None = Field(default=768, description="longest image side sent to a judge")
    image_format: Literal["jpeg", "png"] = "jpeg"
    visual_as: Literal["frames", "clip"] = Field(default="frames", description="frames, or a picture-only clip file")
    text: bool = Field(default=False, description="attach ASR words / OCR lines found inside each segment")
    end_tolerance_s: float = Field(default=1.0, ge=0, description="accept ends this far past the stream (then clip)")


@dataclass
class EvidenceSegment:
    """One labelled piece of evidence (or an explicit statement that there is none)."""

    citation_index: int
    modality: str
    cited_start: float | None
    cited_end: float | None
    start: float = 0.0
    end: float = 0.0
    available: bool = True
    reason: str | None = None
    frames: list[Frame] = field(default_factory=list)
    audio: np.ndarray | None = None
    sr: int = 16_000
    clip_path: Path | None = None
    transcript: str | None = None
    #: the transcript's words behind ``transcript`` (times, ASR probability) when the text source
    #: has word times: what the offline judge weighs a missing or misheard name by
    words: list[Any] | None = None
    screen_text: str | None = None
    #: for an audio segment with the sound tagger on: AudioSet classes heard in it (highest
    #: patch probability, classes at 0.01 or more, at most 20) and its loudest patch (dBFS)
    sound_events: dict[str, float] | None = None
    loudness_db: float | None = None
    #: for an audio segment with the voice counter on: how many voices speak in it
    #: (:meth:`murgat.media.voices.VoiceSource.window`: ``voices`` one/several/None, and the figures)
    voices: dict[str, Any] | None = None
    #: a boxed visual citation: its regions; ``frames`` then carry them drawn, and ``crops``
    #: hold, per frame, one enlarged crop per region (frame-major order)
    boxes: tuple[Region, ...] = ()
    crops: list[Frame] = field(default_factory=list)
    #: an audio segment sent as a sample: the excerpts' (start, end) times, in order; ``audio``
    #: then holds their samples one after another (empty: the whole segment was sent)
    excerpts: list[tuple[float, float]] = field(default_factory=list)
    #: what a limit changed in this segment (frames sampled, audio sampled, refused), or None
    note: EvidenceNote | None = None

    @property
    def label(self) -> str:
        from murgat.media.timefmt import fmt_range

        return f"{self.modality} {fmt_range(self.cited_start, self.cited_end)}{regions_label(self.boxes)}"

    def audio_pieces(self) -> list[tuple[float, float, np.ndarray]]:
        """``(start, end, samples)`` per piece sent: the whole segment, or each excerpt."""
        if self.audio is None:
            return []
        if not self.excerpts:
            return [(self.start, self.end, self.audio)]
        out, k = [], 0
        for a, b in self.excerpts:
            n = round(b * self.sr) - round(a * self.sr)
            out.append((a, b, self.audio[k:k + n]))
            k += n
        return out


@dataclass
class Evidence:
    """Everything shown to a judge for a set of citations of one media file."""

    media_path: str
    segments: list[EvidenceSegment]
    config: EvidenceConfig
    #: notes about the request as a whole (added by :func:`murgat.judges.evidence.fit_request`)
    request_notes: list[EvidenceNote] = field(default_factory=list)

    @property
    def available(self) -> list[EvidenceSegment]:
        return [s for s in self.segments if s.available]

    @property
    def empty(self) -> bool:
        return not self.available

    @property
    def notes(self) -> list[EvidenceNote]:
        """Every limit applied to this evidence: per segment (time order), then per request."""
        return [s.note for s in self.segments if s.note is not None] + list(self.request_notes)


class TextSource(Protocol):
    def text_in(self, start: float, end: float) -> str: ...


def _check(c: CitationLike, info: ProbeResult, cfg: EvidenceConfig) -> tuple[float, float]:
    """Effective ``[start, end]`` of a citation, or a typed error saying why there is none."""
    path = info.path
    if not c.valid:
        raise OutsideMedia(path, c.reason or "invalid citation")
    if c.modality not in ("visual", "audio") or c.start is None or c.end is None:
        raise OutsideMedia(path, f"unusable citation ({c.modality}, {c.start}, {c.end})")
    if c.modality == "audio" and not info.has_audio:
        raise NoAudioStream(path, "audio citation on a file without an audio stream")
    if c.modality == "visual" and not info.has_video:
        raise NoVideoStream(path, "visual citation on a file without a video stream")
    dur = float((info.audio_duration if c.modality == "audio" else info.video_duration) or 0.0)
    if c.start > dur:
        raise OutsideMedia(path, f"{c.modality} citation starts at {c.start:.2f} s, after the stream ends ({dur:.2f} s)")
    if c.end > dur + cfg.end_tolerance_s:
        raise OutsideMedia(path, f"{c.modality} citation ends at {c.end:.2f} s, past the stream end ({dur:.2f} s)")
    if c.end < c.start:
        raise OutsideMedia(path, "citation ends before it starts")
    start, end = c.start, c.end
    if c.point and c.modality == "audio":
        start, end = start - cfg.audio_point_pad_s, end + cfg.audio_point_pad_s
    if c.point and c.modality == "visual" and cfg.visual_point_window_s > 0:
        start, end = start - cfg.visual_point_window_s / 2, end + cfg.visual_point_window_s / 2
    start, end = start - cfg.pad_s, end + cfg.pad_s
    return max(0.0, start), min(dur, end)


@dataclass(frozen=True)
class SegmentPlan:
    """Where a segment will come from, known without decoding anything (probe only)."""

    citation_index: int
    modality: str
    cited_start: float | None
    cited_end: float | None
    start: float
    end: float
    available: bool
    reason: str | None
    boxes: tuple[Region, ...] = ()
    #: an audio segment over ``limits.max_audio_s``: the excerpts that will be sent
    excerpts: tuple[tuple[float, float], ...] = ()
    note: EvidenceNote | None = None

    @property
    def label(self) -> str:
        from murgat.media.timefmt import fmt_range

        return f"{self.modality} {fmt_range(self.cited_start, self.cited_end)}{regions_label(self.boxes)}"

    def sampling_key(self) -> dict[str, Any] | None:
        """What a limit changed in this segment, for cache keys: ``None`` when nothing (every
        segment of a short file's ordinary citations), so keys made before limits existed stay."""
        if self.excerpts:
            return {"excerpts": [list(x) for x in self.excerpts]}
        if self.note is not None and self.note.kind == "refused":
            return {"refused": self.note.limit}
        return None


#: the limits :func:`build_evidence` and :func:`plan_segments` apply when none are given
DEFAULT_LIMITS = EvidenceLimits()


def _plan_one(i: int, c: CitationLike, info: ProbeResult, cfg: EvidenceConfig,
              limits: EvidenceLimits | None) -> tuple[SegmentPlan, MediaError | None]:
    """One citation's plan (and the typed error when it has no evidence)."""
    boxes = regions_of(c)
    try:
        a, b = _check(c, info, cfg)
    except MediaError as exc:
        return SegmentPlan(i, str(c.modality), c.start, c.end, 0.0, 0.0, False, exc.reason, boxes), exc
    plan = SegmentPlan(i, str(c.modality), c.start, c.end, a, b, True, None, boxes)
    cap = limits.max_audio_s if limits is not None else None
    if c.modality != "audio" or cap is None or b - a <= cap + 1e-9:
        return plan, None
    assert limits is not None
    limit = f"{fmt_duration(cap)} of audio per request ({limits.source})"
    if limits.over_limit == "refuse":
        note = refused_note(plan.label, i, "audio", b - a, f"{fmt_duration(b - a)} of audio cited, more than {fmt_duration(cap)}",
                            limit)
        return SegmentPlan(i, str(c.modality), c.start, c.end, a, b, False, note.text, boxes, note=note), None
    excerpts = tuple(choose_excerpts([(a, b)], cap, limits.audio_excerpt_s))
    note = audio_note(plan.label, i, (a, b), excerpts, limit)
    return SegmentPlan(i, str(c.modality), c.start, c.end, a, b, True, None, boxes, excerpts, note), None


def _order(s: Any) -> tuple[float, str, int]:
    return (s.start if s.available else float("inf"), s.modality, s.citation_index)


def plan_segments(path: str | Path, citations: Sequence[CitationLike], config: EvidenceConfig | None = None,
                  indices: Sequence[int] | None = None, info: ProbeResult | None = None,
                  limits: EvidenceLimits | None = DEFAULT_LIMITS) -> list[SegmentPlan]:
    """The segments :func:`build_evidence` would make, in its order, from the probe alone.

    Cache keys are built from this plan (file digest + segment times + settings, plus
    :meth:`SegmentPlan.sampling_key` where a limit applies), so a rerun whose answers are all
    cached never decodes a frame or a sample. ``limits=None`` applies none.
    """
    cfg = config or EvidenceConfig()
    info = info or probe(path)
    chosen = list(range(len(citations))) if indices is None else list(indices)
    out = [_plan_one(i, citations[i], info, cfg, limits)[0] for i in chosen]
    out.sort(key=_order)
    return out


def plan_notes(plans: Sequence[SegmentPlan], config: EvidenceConfig | None = None) -> list[EvidenceNote]:
    """The notes :func:`build_evidence` will attach to these segments, from the plan alone (no
    decoding): audio sampled or refused, and frames capped by ``max_frames``. A record whose
    answer came from the judge cache gets its notes from here. (Frames sent: ``max_frames`` —
    fewer only when the span holds fewer frames than that, which a capped span never does at
    the stream's own rate.)"""
    cfg = config or EvidenceConfig()
    out: list[EvidenceNote] = []
    for p in plans:
        if p.note is not None:
            out.append(p.note)
            continue
        if not p.available or p.modality != "visual" or (cfg.visual_as == "clip" and not p.boxes):
            continue
        if p.cited_start == p.cited_end and cfg.visual_point_window_s == 0 and cfg.pad_s == 0:
            continue
        natural = math.floor((p.end - p.start) * cfg.fps) + 1
        if natural > cfg.max_frames:
            out.append(frames_note(p.label, p.citation_index, (p.start, p.end), cfg.max_frames, natural,
                                   f"--max-frames {cfg.max_frames} at --fps {cfg.fps:g}"))
    return out


#: classes whose score is always listed, however low (claims about them are common)
KEY_SOUND_CLASSES = ("Speech", "Music", "Silence", "Conversation", "Narration, monologue", "Vehicle", "Explosion",
                     "Gunshot, gunfire")


def sound_summary(sounds: Any, start: float, end: float, top: int = 20) -> tuple[dict[str, float], float | None]:
    """The classes a :class:`murgat.media.sounds.SoundScores` hears in ``[start, end]``: each class's
    highest patch probability (0.01 or more, the ``top`` highest, plus :data:`KEY_SOUND_CLASSES`
    whatever their score) and the loudest patch."""
    from murgat.media.sounds import class_names

    probs, loud = sounds.window(start, end)
    if not len(probs):
        return {}, None
    peak = probs.max(axis=0)
    names = class_names()
    order = sorted(range(len(peak)), key=lambda i: (-peak[i], i))[:top]
    out = {names[i]: round(float(peak[i]), 3) for i in order if peak[i] >= 0.01}
    for k in KEY_SOUND_CLASSES:
        out.setdefault(k, round(float(peak[names.index(k)]), 3))
    return out, float(max(loud))


def build_evidence(
    path: str | Path,
    citations: Sequence[CitationLike],
    config: EvidenceConfig | None = None,
    *,
    indices: Sequence[int] | None = None,
    transcript: TextSource | None = None,
    screen: TextSource | None = None,
    sounds: Any = None,
    voices: Any = None,
    strict: bool = False,
    limits: EvidenceLimits | None = DEFAULT_LIMITS,
) -> Evidence:
    """Evidence for ``citations`` (or the subset ``indices``), ordered by time.

    With ``strict=True`` the first unusable citation raises its typed :class:`MediaError`
    (``NoAudioStream``, ``OutsideMedia``, …); otherwise it becomes an unavailable segment.
    ``limits`` (default :data:`DEFAULT_LIMITS`; ``None``: none) caps each segment's audio; what it
    changed is in each segment's ``note`` and in :attr:`Evidence.notes`.
    """
    cfg = config or EvidenceConfig()
    info = probe(path)
    chosen = list(range(len(citations))) if indices is None else list(indices)
    planned = [_plan_one(i, citations[i], info, cfg, limits) for i in chosen]
    _decode_ahead(info, citations, planned, cfg)
    segs: list[EvidenceSegment] = []
    for plan, err in planned:
        c = citations[plan.citation_index]
        seg = EvidenceSegment(citation_index=plan.citation_index, modality=plan.modality, cited_start=c.start,
                              cited_end=c.end, boxes=plan.boxes, note=plan.note)
        try:
            if err is not None:
                raise err
            _fill_segment(seg, plan, c, info, cfg)
            if cfg.text and seg.available:
                _attach_text(seg, c, transcript, screen, sounds, voices)
        except MediaError as exc:
            if strict:
                raise
            seg.available = False
            seg.reason = exc.reason
        segs.append(seg)
    segs.sort(key=_order)
    return Evidence(media_path=info.path, segments=segs, config=cfg)


def _decode_ahead(info: ProbeResult, citations: Sequence[CitationLike],
                  planned: Sequence[tuple[SegmentPlan, MediaError | None]], cfg: EvidenceConfig) -> None:
    """Decode what the plan needs before the segments are filled: every frame in one sorted pass,
    and the audio spans meanwhile in a second thread (ffmpeg decodes them in its own process)."""
    spans = [x for p, e in planned if e is None and p.available and p.modality == "audio"
             for x in (p.excerpts or ((p.start, p.end),))]
    wanted = [(citations[p.citation_index], p) for p, _ in planned]
    if not (spans and info.has_audio):
        _prefetch_frames(info, wanted, cfg)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        warm = pool.submit(_warm_audio, info, spans)
        _prefetch_frames(info, wanted, cfg)
        warm.result()


def _fill_segment(seg: EvidenceSegment, plan: SegmentPlan, c: CitationLike, info: ProbeResult,
                  cfg: EvidenceConfig) -> None:
    """A planned segment's times and media (frames or audio); a segment a limit refused stays
    unavailable with the plan's reason. A decoding failure raises its :class:`MediaError`."""
    seg.start, seg.end = plan.start, plan.end
    if not plan.available:  # refused by a limit: the reason says which
        seg.available, seg.reason = False, plan.reason
    elif c.modality == "visual":
        _fill_visual(seg, info, cfg, point=c.point)
    else:
        _fill_audio(seg, info, plan.excerpts)


def _attach_text(seg: EvidenceSegment, c: CitationLike, transcript: TextSource | None, screen: TextSource | None,
                 sounds: Any, voices: Any) -> None:
    """The text beside an available segment's media: an audio segment's transcript (with its words
    where the source has them), sound classes and voice count, a visual segment's on-screen text."""
    src = transcript if c.modality == "audio" else screen
    if src is not None:
        seg.transcript = src.text_in(seg.start, seg.end) if c.modality == "audio" else None
        if c.modality == "audio" and hasattr(src, "words_in"):
            seg.words = list(src.words_in(seg.start, seg.end))
        seg.screen_text = src.text_in(seg.start, seg.end) if c.modality == "visual" else None
    if sounds is not None and c.modality == "audio":
        seg.sound_events, seg.loudness_db = sound_summary(sounds, seg.start, seg.end)
    if voices is not None and c.modality == "audio":
        seg.voices = voices.window(seg.start, seg.end, seg.audio_pieces())


def _warm_audio(info: ProbeResult, spans: Sequence[tuple[float, float]]) -> None:
    """Decode what these spans need ahead of :func:`_fill_audio` (which then slices from memory);
    a failure is left for :func:`_fill_audio` to report on its segment."""
    from murgat.media.audio import open_audio

    try:
        track = open_audio(info.path)
        for a, b in spans:
            track.slice(a, b)
    except (MediaError, ValueError):
        return


def _prefetch_frames(info: ProbeResult, planned: Sequence[tuple[CitationLike, SegmentPlan]], cfg: EvidenceConfig) -> None:
    """Decode every frame these citations need in one sorted pass."""
    if not info.has_video:
        return
    from murgat.media.frames import open_video

    wanted: list[int] = []
    vf = None
    for c, plan in planned:
        if c.modality != "visual" or not plan.available or (cfg.visual_as == "clip" and not plan.boxes):
            continue
        vf = vf or open_video(info.path)
        if c.point and cfg.visual_point_window_s == 0 and cfg.pad_s == 0:
            wanted.append(vf.index_at(plan.start))
        else:
            wanted.extend(vf.range_indices(plan.start, plan.end, cfg.fps, cfg.max_frames))
    if vf is not None and wanted:
        vf.prefetch(wanted)


def _fill_visual(seg: EvidenceSegment, info: ProbeResult, cfg: EvidenceConfig, point: bool) -> None:
    from murgat.media.frame import Frame
    from murgat.media.frames import crop_region, draw_regions, open_video, resize_max_side

    vf = open_video(info.path)
    if cfg.visual_as == "clip" and seg.end > seg.start and not seg.boxes:
        from murgat.media.clips import video_clip

        seg.clip_path, _ = video_clip(info.path, seg.start, seg.end)
        return
    if point and cfg.visual_point_window_s == 0 and cfg.pad_s == 0:
        frames = vf.frames_at([seg.start])
    else:
        frames = vf.frames_in(seg.start, seg.end, cfg.fps, cfg.max_frames)
        natural = math.floor((seg.end - seg.start) * cfg.fps) + 1
        if natural > cfg.max_frames:  # the cap decided how many frames the judge sees: say so
            seg.note = frames_note(seg.label, seg.citation_index, (seg.start, seg.end), len(frames), natural,
                                   f"--max-frames {cfg.max_frames} at --fps {cfg.fps:g}")
    if seg.boxes:
        # crops come from the native frame (the detail a judge needs), before any downscaling
        regions = list(seg.boxes)
        seg.crops = [Frame(f.index, f.time, crop_region(f.image, r, CROP_MARGIN, CROP_SIDE)) for f in frames for r in regions]
        seg.frames = [Frame(f.index, f.time, draw_regions(resize_max_side(f.image, cfg.max_side), regions))
                      for f in frames]
        return
    seg.frames = [Frame(f.index, f.time, resize_max_side(f.image, cfg.max_side)) for f in frames]


def _fill_audio(seg: EvidenceSegment, info: ProbeResult, excerpts: Sequence[tuple[float, float]] = ()) -> None:
    """The segment's samples (only the excerpts' when it is sampled), from a whole track or chunks."""
    import numpy as np

    from murgat.media.audio import open_audio

    track = open_audio(info.path)
    seg.sr = track.sr
    if excerpts:
        seg.excerpts = [(float(a), float(b)) for a, b in excerpts]
        seg.audio = np.concatenate([track.slice(a, b) for a, b in excerpts])
    else:
        seg.audio = track.slice(seg.start, seg.end)
    if len(seg.audio) == 0:
        seg.available = False
        seg.reason = "the audio segment is empty after clipping to the stream"


def describe(ev: Evidence) -> list[dict[str, Any]]:
    """A JSON-able summary of an evidence set (what was shown, or why not)."""
    out = []
    for s in ev.segments:
        out.append({
            "label": s.label, "citation_index": s.citation_index, "modality": s.modality,
            "start": round(s.start, 3), "end": round(s.end, 3), "available": s.available, "reason": s.reason,
            "frames": [round(f.time, 3) for f in s.frames],
            **({"boxes": [list(r) for r in s.boxes], "crops": len(s.crops)} if s.boxes else {}),
            "audio_samples": None if s.audio is None else len(s.audio),
            **({"excerpts": [list(x) for x in s.excerpts]} if s.excerpts else {}),
            "clip": str(s.clip_path) if s.clip_path else None,
            "transcript": s.transcript, "screen_text": s.screen_text,
            **({"note": s.note.model_dump()} if s.note is not None else {}),
        })
    return out
