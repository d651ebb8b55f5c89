"""Limits on what one judge request may carry, and the notes that say when one was applied.

A citation can cover more media than a judge should be sent: a 30-minute audio citation is a
57.6 MB WAV (77 MB of base64) in one request, which no provider takes, and a 30-minute visual
citation at 1 fps is 1,800 frames. murgat never shortens evidence silently: whatever it sends
instead is recorded as an :class:`EvidenceNote` on the evidence (and, through the command that
builds it, in the record), and the judge is told it is looking at a sample.

What happens over a limit (:class:`EvidenceLimits`):

* **frames** — a visual range always gets at most ``--max-frames`` frames spread evenly; when
  that is fewer than the range holds at ``--fps``, the note says so (``frames_sampled``);
* **audio** — a segment longer than ``max_audio_s`` is *sampled*: ``max_audio_s`` seconds sent as
  excerpts of ``audio_excerpt_s`` spread evenly over the cited span, each labelled with its own
  times (``audio_sampled``); or, with ``over_limit="refuse"``, not sent, with the reason
  (``refused``);
* **per request** (applied where parts are made, :func:`murgat.judges.evidence.fit_request`):
  more images than ``max_images`` → frames thinned evenly per segment (``images_capped``);
  more audio than ``max_audio_s`` over all segments → each segment's share shortened in
  proportion (``audio_sampled``); an estimated request larger than ``max_request_bytes`` → images
  and audio reduced together until it fits (``bytes_capped``), or refused when even one frame
  and one second per segment do not fit.

Only decoded seconds are ever sent: a sampled segment decodes its excerpts, not the whole span.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from murgat.media.timefmt import fmt_range, fmt_time

#: murgat's own cap on audio per request (seconds): long enough for any claim about a scene,
#: 9.6 MB of 16 kHz WAV (12.8 MB of base64) — under every provider's inline limit
DEFAULT_MAX_AUDIO_S = 300.0
#: length of each excerpt of a sampled audio span (seconds)
DEFAULT_AUDIO_EXCERPT_S = 30.0

NoteKind = Literal["frames_sampled", "audio_sampled", "images_capped", "bytes_capped", "refused"]


class EvidenceLimits(BaseModel):
    """Per-request caps on evidence (defaults per provider family: :mod:`murgat.judges.evidence`).

    Not part of :class:`murgat.media.evidence.EvidenceConfig` on purpose: that object enters every cache
    key and run fingerprint as it is, so a new field there would change all of them. A cap changes
    what is sent only when it bites, and then the segment plan says how (see
    :meth:`murgat.media.evidence.SegmentPlan.sampling_key`).
    """

    max_audio_s: float | None = Field(default=DEFAULT_MAX_AUDIO_S, gt=0,
                                      description="most seconds of audio in one request (None: no cap)")
    audio_excerpt_s: float = Field(default=DEFAULT_AUDIO_EXCERPT_S, gt=0,
                                   description="length of each excerpt when a long audio span is sampled")
    max_images: int | None = Field(default=None, ge=1, description="most images (frames and crops) in one request")
    max_request_bytes: int | None = Field(default=None, ge=1,
                                          description="most bytes of media in one request, after base64 (None: no cap)")
    over_limit: Literal["sample", "refuse"] = Field(
        default="sample", description="a segment over a limit is sampled (and noted) or refused with the reason")
    source: str = Field(default="murgat default", description="where these numbers come from (shown in notes)")


class EvidenceNote(BaseModel):
    """What was sent instead of everything cited, and why (one per segment or per request)."""

    kind: NoteKind
    text: str = Field(description="one line for people: what was cited, what was sent, which limit")
    label: str = Field(default="", description="the segment's label; empty for a request-level note")
    citation_index: int | None = None
    modality: Literal["visual", "audio"] | None = None
    cited_s: float = Field(default=0.0, description="seconds of media the segment (or request) covers")
    sent_s: float | None = Field(default=None, description="audio seconds sent")
    frames_sent: int | None = None
    frames_in_span: int | None = Field(default=None, description="frames the span holds at --fps, before the cap")
    excerpts: list[tuple[float, float]] = Field(default_factory=list, description="audio excerpts sent (start, end)")
    limit: str = Field(default="", description="the limit that applied")


def fmt_duration(seconds: float) -> str:
    """``30:00``, ``0:30``, ``1:00:00`` (whole seconds below a minute keep decimals)."""
    return fmt_time(round(seconds, 3))


def choose_excerpts(windows: Sequence[tuple[float, float]], budget_s: float,
                    excerpt_s: float = DEFAULT_AUDIO_EXCERPT_S) -> list[tuple[float, float]]:
    """Pieces of total length ``budget_s`` spread evenly over ``windows`` (sorted, disjoint).

    The windows are laid end to end; ``k = max(1, floor(budget / excerpt_s))`` pieces of equal
    length ``budget / k`` start at evenly spaced points of that joined timeline, the first at its
    start and the last ending at its end, so the beginning and the end of what was cited are both
    heard. A piece that crosses from one window into the next is split at the gap. When the
    windows are no longer than the budget they are returned whole.
    """
    wins = [(float(a), float(b)) for a, b in windows if b > a]
    total = sum(b - a for a, b in wins)
    if total <= budget_s + 1e-9 or not wins:
        return wins
    k = max(1, math.floor(budget_s / excerpt_s + 1e-9))
    piece = budget_s / k
    starts = [0.0] if k == 1 else [j * (total - piece) / (k - 1) for j in range(k)]
    out: list[tuple[float, float]] = []
    for s in starts:
        out.extend(_virtual_to_real(wins, s, s + piece))
    return _merge(out)


def _virtual_to_real(wins: list[tuple[float, float]], s: float, e: float) -> list[tuple[float, float]]:
    """``[s, e)`` on the joined timeline of ``wins`` as real time ranges."""
    out = []
    offset = 0.0
    for a, b in wins:
        length = b - a
        lo, hi = max(s, offset), min(e, offset + length)
        if hi > lo:
            out.append((round(a + lo - offset, 6), round(a + hi - offset, 6)))
        offset += length
        if offset >= e:
            break
    return out


def _merge(ranges: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1e-9:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def excerpts_text(excerpts: Sequence[tuple[float, float]], show: int = 3) -> str:
    """``0:00-0:30, 3:17-3:47, …, 29:30-30:00`` (the first ``show`` and the last)."""
    items = [fmt_range(a, b) for a, b in excerpts]
    if len(items) > show + 1:
        items = [*items[:show], "…", items[-1]]
    return ", ".join(items)


def audio_note(label: str, citation_index: int | None, cited: tuple[float, float],
               excerpts: Sequence[tuple[float, float]], limit: str) -> EvidenceNote:
    """The note for an audio span sent as ``excerpts``."""
    cited_s = cited[1] - cited[0]
    sent = sum(b - a for a, b in excerpts)
    lengths = {round(b - a, 3) for a, b in excerpts}
    each = f" of {fmt_duration(lengths.pop())}" if len(lengths) == 1 else ""
    how = (f"sampled as {len(excerpts)} excerpt{'s' if len(excerpts) != 1 else ''}{each} spread evenly "
           f"({excerpts_text(excerpts)})")
    return EvidenceNote(kind="audio_sampled", label=label, citation_index=citation_index, modality="audio",
                        cited_s=cited_s, sent_s=sent, excerpts=[(a, b) for a, b in excerpts], limit=limit,
                        text=f"{fmt_duration(cited_s)} of audio cited; {fmt_duration(sent)} sent, {how}; limit: {limit}")


def frames_note(label: str, citation_index: int | None, cited: tuple[float, float], sent: int, in_span: int,
                limit: str, kind: NoteKind = "frames_sampled") -> EvidenceNote:
    """The note for a visual span shown by ``sent`` frames out of the ``in_span`` it holds at --fps."""
    cited_s = cited[1] - cited[0]
    every = f", one every {fmt_duration(cited_s / max(1, sent - 1))}" if sent > 1 else ""
    return EvidenceNote(kind=kind, label=label, citation_index=citation_index, modality="visual", cited_s=cited_s,
                        frames_sent=sent, frames_in_span=in_span, limit=limit,
                        text=(f"{fmt_duration(cited_s)} of video cited; {sent} frame{'s' if sent != 1 else ''} sent"
                              f"{every}, of the {in_span:,} the span holds at the sampling rate; limit: {limit}"))


def refused_note(label: str, citation_index: int | None, modality: Literal["visual", "audio"] | None,
                 cited_s: float, reason: str, limit: str) -> EvidenceNote:
    return EvidenceNote(kind="refused", label=label, citation_index=citation_index, modality=modality,
                        cited_s=cited_s, limit=limit, text=f"{reason}; not sent; limit: {limit}")


def count_notes(notes: Sequence[EvidenceNote]) -> dict[str, int]:
    """``{kind: count}`` of these notes, in a fixed order (for a run's summary)."""
    kinds: tuple[NoteKind, ...] = ("frames_sampled", "audio_sampled", "images_capped", "bytes_capped", "refused")
    return {k: n for k in kinds if (n := sum(1 for x in notes if x.kind == k))}
