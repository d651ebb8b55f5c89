"""What a judge is sent for a set of cited segments: the media layer's :class:`~murgat.media.evidence.Evidence`
turned into labelled request parts, one header per segment and then its one-modality content.

It lives with the judges (not with a command) because every command that asks a judge about
media — ``score``, ``faithfulness``, ``program``'s runtime check, the embedded judge's own
checks — sends the same parts for the same segments, so their cache keys and what a judge sees
are the same.

It also holds the per-request side of the evidence limits (:mod:`murgat.media.limits`): the documented
limits of each provider family (:data:`PROVIDER_LIMITS`, :func:`limits_for`, with ``-J`` overrides:
:data:`LIMIT_OPTIONS`) and the fitting of one request's evidence to them (:func:`fit_request`,
which only thins what is already decoded). How a fit enters cache keys: :mod:`murgat.judging.context`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from murgat.judges.types import AudioPart, EvidenceTextPart, ImagePart, Part, TextPart, VideoPart
from murgat.media.evidence import Evidence, EvidenceSegment
from murgat.media.limits import (
    DEFAULT_MAX_AUDIO_S,
    EvidenceLimits,
    EvidenceNote,
    choose_excerpts,
    fmt_duration,
    frames_note,
)
from murgat.media.timefmt import fmt_range

if TYPE_CHECKING:
    from murgat.media.frame import Frame


def evidence_parts(ev: Evidence, with_text: bool, box_view: Literal["both", "crop"] = "both") -> list[Part]:
    """Labelled parts for a judge: one header per segment, then its one-modality content
    (``box_view="crop"``: a boxed segment shows its enlarged boxes only)."""
    parts: list[Part] = []
    for s in ev.segments:
        header = f"[{s.label}]"
        if not s.available:
            parts.append(TextPart(f"{header} no evidence: {s.reason}"))
            continue
        if s.modality == "visual" and s.boxes:
            parts.extend(_boxed_parts(s, header, crop_only=box_view == "crop"))
        else:
            parts.append(TextPart(header))
        if s.modality == "audio" and s.audio is not None and s.excerpts:
            # a sample of the cited span: the judge is told so, and hears each excerpt at its own times
            parts.append(TextPart(f"{header} only part of the cited audio is sent: "
                                  f"{s.note.text if s.note is not None else 'sampled'}"))
            for a, b, x in s.audio_pieces():
                parts.append(AudioPart(samples=x, sr=s.sr, start=a, end=b, label=f"{s.label} (excerpt {fmt_range(a, b)})"))
        elif s.modality == "audio" and s.audio is not None:
            parts.append(AudioPart(samples=s.audio, sr=s.sr, start=s.start, end=s.end, label=s.label))
        elif s.modality == "visual" and not s.boxes:
            if len(s.frames) == 1 and s.cited_start == s.cited_end:
                f: Frame = s.frames[0]
                parts.append(ImagePart(image=f.image, time=f.time, label=s.label))
            else:
                parts.append(VideoPart(source=ev.media_path, start=s.start, end=s.end, fps=ev.config.fps,
                                       frames=list(s.frames), label=s.label))
        if with_text:
            if s.transcript is not None:
                parts.append(EvidenceTextPart(label=s.label, modality=s.modality, source="transcript", text=s.transcript,
                                              words=None if s.words is None else [word_doc(w) for w in s.words]))
            if s.screen_text is not None:
                parts.append(EvidenceTextPart(label=s.label, modality=s.modality, source="screen_text", text=s.screen_text))
            if s.sound_events is not None:
                heard = ", ".join(f"{k} {v:.2f}" for k, v in s.sound_events.items()) or "no class at 0.01 or more"
                loud = f"; loudest {s.loudness_db:.0f} dBFS" if s.loudness_db is not None else ""
                parts.append(EvidenceTextPart(label=s.label, modality=s.modality, source="sound_events",
                                              text=f"{heard}{loud}", scores=dict(s.sound_events),
                                              loudness_db=s.loudness_db))
            if s.voices is not None:
                parts.append(EvidenceTextPart(label=s.label, modality=s.modality, source="voices",
                                              text=voices_text(s.voices), voices=dict(s.voices)))
    return parts


def voices_text(v: dict[str, Any]) -> str:
    """The voice count of a segment as one line: the window's count and figures, and the file's
    where it decided (``one voice in the file: …``)."""
    from murgat.media.voices import VoiceCount

    win = VoiceCount.model_validate(v["window"])
    text = win.text()
    if v.get("voices") == "one" and win.voices is None and v.get("file"):
        text += f"; one voice in the whole file: {VoiceCount.model_validate(v['file']).reason}"
    return text


def word_doc(w: Any) -> dict[str, Any]:
    """One transcript word as the request carries it: its text, times and ASR probability (and its
    speaker where the transcript has turns)."""
    d: dict[str, Any] = {"word": w.word, "start": round(float(w.start), 3), "end": round(float(w.end), 3),
                         "probability": None if w.probability is None else round(float(w.probability), 3)}
    if getattr(w, "speaker", None) is not None:
        d["speaker"] = w.speaker
    return d


def _boxed_parts(s: EvidenceSegment, header: str, crop_only: bool = False) -> list[Part]:
    """A boxed visual citation: each frame whole with its boxes drawn, then each box enlarged.

    The citation names a region, so the judge must find the claim there: the drawn frame
    gives the context, the crop the detail a frame-sized image loses. ``crop_only`` leaves
    the whole frames out (the wrong-box check asks what the region alone shows).
    """
    n = len(s.boxes)
    what = "the box" if n == 1 else f"any of the {n} boxes"
    if crop_only:
        intro = f"{header} the cited region{'s' if n > 1 else ''} of the frame, enlarged."
    else:
        intro = (f"{header} the citation points at a region: the claim must be visible inside {what}. "
                 "Each frame is shown whole with the region outlined in red, then the region enlarged.")
    parts: list[Part] = [TextPart(intro)]
    for k, f in enumerate(s.frames):
        if not crop_only:
            parts.append(ImagePart(image=f.image, time=f.time, label=f"{s.label} (whole frame, box outlined)"))
        for j, crop in enumerate(s.crops[k * n:(k + 1) * n]):
            name = "box" if n == 1 else f"box {j + 1}"
            parts.append(ImagePart(image=crop.image, time=crop.time, label=f"{s.label} ({name} enlarged)"))
    return parts


# ----- per-request limits -----

MB = 1000**2

#: documented request limits per provider family (``None``: no limit murgat knows of). Audio
#: per request is murgat's own cap (:data:`murgat.media.limits.DEFAULT_MAX_AUDIO_S`) everywhere: the
#: providers take far more (Gemini: 9.5 hours per prompt) but a judge asked about a five-minute
#: window is already asked about a scene, not a moment.
PROVIDER_LIMITS: dict[str, EvidenceLimits] = {
    # ai.google.dev "File input methods": inline data up to 100 MB per request (20 MB before
    # January 2026); "Image understanding": up to 3,600 images per request. Video ranges sent by
    # Files-API offsets (-J visual=offsets) are not inline and do not count against the bytes.
    "gemini": EvidenceLimits(max_images=3600, max_request_bytes=100 * MB,
                             source="Gemini API: 100 MB inline per request, 3,600 images"),
    # platform.openai.com "Images and vision": up to 500 images and 50 MB of image bytes per
    # request. vLLM/SGLang servers set their own count per prompt (--limit-mm-per-prompt):
    # set max_images to it.
    "openai": EvidenceLimits(max_images=500, max_request_bytes=50 * MB,
                             source="OpenAI API: 500 images, 50 MB per request"),
    # in-process models: no transport limit; the model's context is the limit
    "hf": EvidenceLimits(source="murgat default (in-process model)"),
    "embedded": EvidenceLimits(source="murgat default (offline judge)"),
}
#: any other provider (replay, scripted, unknown): the most common inline limit (20 MB)
GENERIC_LIMITS = EvidenceLimits(max_images=500, max_request_bytes=20 * MB,
                                source="murgat default: 20 MB per request, 500 images")


#: ``-J`` options that override the provider's evidence limits (``-J max_images=16`` for a vLLM
#: server started with ``--limit-mm-per-prompt image=16``; ``-J over_limit=refuse``)
LIMIT_OPTIONS = ("max_audio_s", "audio_excerpt_s", "max_images", "max_request_bytes", "over_limit")


def limit_overrides(options: dict[str, Any] | None) -> dict[str, Any]:
    """The evidence-limit overrides among a judge's ``-J`` options (:data:`LIMIT_OPTIONS`)."""
    return {k: v for k, v in (options or {}).items() if k in LIMIT_OPTIONS}


def limits_for(provider: str, overrides: dict[str, Any] | None = None) -> EvidenceLimits:
    """The limits for a provider family (``gemini``, ``openai``, …), with user ``overrides``
    (e.g. ``{"max_images": 16}``; the source then says so). A bad override raises ``ValueError``
    (pydantic's, naming the option)."""
    base = PROVIDER_LIMITS.get(provider.split(":", 1)[0], GENERIC_LIMITS)
    if not overrides:
        return base
    merged = {**base.model_dump(), **overrides, "source": f"{base.source}, overridden: "
              + ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()))}
    return EvidenceLimits.model_validate(merged)


def strictest(*limits: EvidenceLimits) -> EvidenceLimits:
    """One set of limits that every one of ``limits`` allows (the smallest of each cap): for a run
    whose evidence goes to two providers (``program``'s executor and checker)."""
    def low(vals: list[Any]) -> Any:
        known = [v for v in vals if v is not None]
        return min(known) if known else None

    first = limits[0]
    if len(limits) == 1:
        return first
    return EvidenceLimits(max_audio_s=low([x.max_audio_s for x in limits]),
                          audio_excerpt_s=min(x.audio_excerpt_s for x in limits),
                          max_images=low([x.max_images for x in limits]),
                          max_request_bytes=low([x.max_request_bytes for x in limits]),
                          over_limit="refuse" if any(x.over_limit == "refuse" for x in limits) else "sample",
                          source="; ".join(dict.fromkeys(x.source for x in limits)))


def _images_per_frame(s: EvidenceSegment, box_view: str) -> int:
    if not s.boxes:
        return 1
    return len(s.boxes) if box_view == "crop" else 1 + len(s.boxes)


def _image_count(segs: Sequence[EvidenceSegment], box_view: str) -> int:
    return sum(len(s.frames) * _images_per_frame(s, box_view) for s in segs if s.available and s.modality == "visual")


def _b64(n: int) -> int:
    return 4 * math.ceil(n / 3)


def request_bytes(segs: Sequence[EvidenceSegment], box_view: str = "both") -> int:
    """Bytes of media these segments put in a request, after base64: JPEG frames (encoded once,
    memoised with the frame, as the providers encode them) and 16-bit WAV audio."""
    total = 0
    for s in segs:
        if not s.available:
            continue
        if s.modality == "audio" and s.audio is not None:
            total += sum(_b64(44 + 2 * len(x)) for _, _, x in s.audio_pieces())
        elif s.modality == "visual":
            shown = [] if (box_view == "crop" and s.boxes) else [f.image for f in s.frames]
            for img in [*shown, *(c.image for c in s.crops)]:
                total += _b64(len(ImagePart(image=img).encoded()))
    return total


def _thin_frames(s: EvidenceSegment, keep: int) -> None:
    """Keep ``keep`` of the segment's frames, spread evenly (crops follow their frames)."""
    n = len(s.frames)
    if keep >= n:
        return
    idx = sorted({round(x) for x in _linspace(0, n - 1, keep)})
    per = len(s.boxes)
    s.crops = [s.crops[k * per + j] for k in idx for j in range(per)] if per else s.crops
    s.frames = [s.frames[k] for k in idx]


def _linspace(a: float, b: float, n: int) -> list[float]:
    return [a] if n <= 1 else [a + (b - a) * k / (n - 1) for k in range(n)]


def _shorten_audio(s: EvidenceSegment, budget_s: float, excerpt_s: float) -> None:
    """Send ``budget_s`` seconds of what the segment holds, spread evenly (slices only: nothing
    is decoded again)."""
    pieces = s.audio_pieces()
    if s.audio is None or not pieces:
        return
    import numpy as np

    keep = choose_excerpts([(a, b) for a, b, _ in pieces], budget_s, excerpt_s)
    out = []
    for a, b in keep:
        for pa, pb, x in pieces:
            if pa - 1e-9 <= a and b <= pb + 1e-9:
                i0 = round(a * s.sr) - round(pa * s.sr)
                out.append(x[i0:i0 + round(b * s.sr) - round(a * s.sr)])
                break
    s.excerpts = [(float(a), float(b)) for a, b in keep]
    s.audio = np.concatenate(out) if out else s.audio[:0]


def _audio_s(segs: Sequence[EvidenceSegment]) -> float:
    return sum(len(s.audio) / s.sr for s in segs if s.available and s.modality == "audio" and s.audio is not None)


def fit_request(ev: Evidence, limits: EvidenceLimits | None, box_view: Literal["both", "crop"] = "both") -> Evidence:
    """``ev`` made to fit one request under ``limits``: a new :class:`Evidence` (``ev`` is not
    changed) whose ``request_notes`` say what was thinned, or whose segments are unavailable with
    the reason when it cannot fit. Only slices and drops what is already decoded.

    Order: audio over ``max_audio_s`` in total → each audio segment keeps its share in proportion
    to its length; images over ``max_images`` → each visual segment keeps its share of frames
    (at least one); estimated bytes over ``max_request_bytes`` → frames and audio scaled down
    together (at most 8 rounds) — still over with one frame and one second per segment, or more
    visual segments than ``max_images``: refused.
    """
    if limits is None:
        return ev
    segs = [dataclasses.replace(s) for s in ev.segments]
    notes: list[EvidenceNote] = []
    audio = [s for s in segs if s.available and s.modality == "audio" and s.audio is not None and len(s.audio)]
    visual = [s for s in segs if s.available and s.modality == "visual" and s.frames]
    _cap_audio(audio, limits, notes)
    refusal = None
    if limits.max_images is not None and (count := _image_count(visual, box_view)) > limits.max_images:
        refusal = _cap_images(visual, limits.max_images, count, limits, box_view, ev.config.fps, notes)
    # the bytes step runs only when the images could be fitted (a refusal ends the fitting)
    if (refusal is None and limits.max_request_bytes is not None
            and (before := request_bytes(segs, box_view)) > limits.max_request_bytes):
        refusal = _cap_bytes(segs, visual, audio, before, limits, box_view, ev.config.fps, notes)
    if refusal is not None:
        return _refuse(ev, segs, notes, refusal, limits)
    if not notes:
        return ev
    return Evidence(media_path=ev.media_path, segments=segs, config=ev.config, request_notes=[*ev.request_notes, *notes])


def _cap_audio(audio: list[EvidenceSegment], limits: EvidenceLimits, notes: list[EvidenceNote]) -> None:
    """The first step of :func:`fit_request`: audio over ``max_audio_s`` in total is shortened,
    each segment keeping its share in proportion to its length (a note says so)."""
    cap = limits.max_audio_s
    total = _audio_s(audio)
    if cap is None or total <= cap + 1e-6:
        return
    for s in audio:
        _shorten_audio(s, cap * (len(s.audio) / s.sr) / total, limits.audio_excerpt_s)  # type: ignore[arg-type]
        _renote_audio(s, limits, "shared among the request's audio segments")
    notes.append(EvidenceNote(kind="audio_sampled", modality="audio", cited_s=total, sent_s=_audio_s(audio),
                              limit=f"{fmt_duration(cap)} of audio per request ({limits.source})",
                              text=(f"{fmt_duration(total)} of audio in this request; {fmt_duration(_audio_s(audio))} "
                                    f"sent, each segment shortened in proportion; limit: {fmt_duration(cap)} of "
                                    f"audio per request ({limits.source})")))


def _cap_images(visual: list[EvidenceSegment], cap: int, count: int, limits: EvidenceLimits, box_view: str,
                fps: float, notes: list[EvidenceNote]) -> str | None:
    """The second step of :func:`fit_request`, for ``count`` images over ``cap`` (``max_images``):
    each visual segment keeps its share of frames (at least one). Returns the reason to refuse when
    even one frame per segment is too many, else ``None``."""
    if sum(_images_per_frame(s, box_view) for s in visual) > cap:
        return f"{len(visual)} visual segments need {count:,} images, more than {cap:,} per request even at one frame each"
    had = {id(s): len(s.frames) for s in visual}
    _fit_images(visual, cap, box_view)
    limit = f"{cap:,} images per request ({limits.source})"
    _renote_thinned(visual, [], had, limits, limit, fps)
    notes.append(EvidenceNote(kind="images_capped", modality="visual", frames_sent=_image_count(visual, box_view),
                              limit=limit, text=(f"{count:,} images in this request; "
                                                 f"{_image_count(visual, box_view):,} sent, frames thinned "
                                                 f"evenly in each segment; limit: {limit}")))
    return None


def _cap_bytes(segs: list[EvidenceSegment], visual: list[EvidenceSegment], audio: list[EvidenceSegment], before: int,
               limits: EvidenceLimits, box_view: str, fps: float, notes: list[EvidenceNote]) -> str | None:
    """The last step of :func:`fit_request`, for ``before`` estimated bytes over ``max_request_bytes``:
    frames and audio are scaled down together (at most 8 rounds). Returns the reason to refuse when
    still over at one frame and one second per segment, else ``None``."""
    assert limits.max_request_bytes is not None
    est = before
    had = {id(s): len(s.frames) if s.modality == "visual" else _n(s.audio) for s in [*visual, *audio]}
    for _ in range(8):
        f = 0.95 * limits.max_request_bytes / est
        for s in visual:
            _thin_frames(s, max(1, int(len(s.frames) * f)))
        for s in audio:
            _shorten_audio(s, max(1.0, len(s.audio) / s.sr * f), limits.audio_excerpt_s)  # type: ignore[arg-type]
        est = request_bytes(segs, box_view)
        if est <= limits.max_request_bytes:
            break
    limit = f"{limits.max_request_bytes / MB:g} MB per request ({limits.source})"
    if est > limits.max_request_bytes:
        return f"the evidence is {before / MB:.1f} MB, more than {limit} even at one frame and one second per segment"
    _renote_thinned(visual, audio, had, limits, limit, fps)
    notes.append(EvidenceNote(kind="bytes_capped", limit=limit,
                              text=(f"{before / MB:.1f} MB of media in this request; {est / MB:.1f} MB sent, "
                                    f"frames and audio reduced together; limit: {limit}")))
    return None


def _renote_thinned(visual: list[EvidenceSegment], audio: list[EvidenceSegment], had: dict[int, int],
                    limits: EvidenceLimits, limit: str, fps: float) -> None:
    """A new per-segment note for each segment that lost frames or samples since ``had`` (by id)."""
    for s in visual:
        if len(s.frames) < had[id(s)]:
            _renote_frames(s, limit, fps)
    for s in audio:
        if _n(s.audio) < had[id(s)]:
            _renote_audio(s, limits, limit)


def _n(x: Any) -> int:
    return 0 if x is None else len(x)


def _fit_images(visual: list[EvidenceSegment], cap: int, box_view: str) -> None:
    """Frames per segment in proportion to what each holds, at least one, within ``cap`` images."""
    count = _image_count(visual, box_view)
    keep = {id(s): max(1, int(len(s.frames) * cap / count)) for s in visual}
    while sum(keep[id(s)] * _images_per_frame(s, box_view) for s in visual) > cap:
        big = max(visual, key=lambda s: keep[id(s)])
        keep[id(big)] -= 1
    for s in visual:
        _thin_frames(s, keep[id(s)])


def _renote_frames(s: EvidenceSegment, limit: str, fps: float) -> None:
    in_span = s.note.frames_in_span if s.note is not None and s.note.frames_in_span else None
    if in_span is None:
        in_span = math.floor((s.end - s.start) * fps) + 1
    s.note = frames_note(s.label, s.citation_index, (s.start, s.end), len(s.frames), max(in_span, len(s.frames)),
                         limit, kind="images_capped")


def _renote_audio(s: EvidenceSegment, limits: EvidenceLimits, what: str) -> None:
    from murgat.media.limits import audio_note

    cap = limits.max_audio_s or DEFAULT_MAX_AUDIO_S
    s.note = audio_note(s.label, s.citation_index, (s.start, s.end), s.excerpts or [(s.start, s.end)],
                        f"{fmt_duration(cap)} of audio per request ({limits.source}), {what}")


def _refuse(ev: Evidence, segs: list[EvidenceSegment], notes: list[EvidenceNote], reason: str,
            limits: EvidenceLimits) -> Evidence:
    """Every available segment unavailable with ``reason``: the request is not sent (a judge
    that never saw the evidence cannot say no)."""
    note = EvidenceNote(kind="refused", limit=limits.source, text=f"{reason}; not sent")
    out = [dataclasses.replace(s, available=False, reason=note.text, audio=None, frames=[], crops=[], excerpts=[])
           if s.available else s for s in segs]
    return Evidence(media_path=ev.media_path, segments=out, config=ev.config,
                    request_notes=[*ev.request_notes, *notes, note])
