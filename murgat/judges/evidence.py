"""What a judge is sent for a set of cited segments: the media layer's :class:`~media.evidence.Evidence`
turned into labelled request parts, one header per segment and then its one-modality content.

It lives with the judges (not with a command) because every command that asks a judge about
media — ``score``, ``faithfulness``, ``program``'s runtime check, the embedded judge's own
checks — sends the same parts for the same segments, so their cache keys and what a judge sees
are the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from media.evidence import Evidence, EvidenceSegment
from murgat.judges.types import AudioPart, EvidenceTextPart, ImagePart, Part, TextPart, VideoPart

if TYPE_CHECKING:
    from media.frames import Frame


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
        if s.modality == "audio" and s.audio is not None:
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
    return parts


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
