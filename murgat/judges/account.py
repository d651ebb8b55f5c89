"""What a request carried to the provider, and who answered it.

Serving stacks drop media without an error (an audio part skipped, frames sent without their
time labels, images resized), and a run looks normal. So every provider that builds a wire
request counts, while building it, what it put in: images and their pixel sizes, the text label
sent just before each image (a frame's time label), seconds of audio, video clips and their
seconds, whole files, text characters and the request's bytes (:class:`Sent`, carried by
:class:`~murgat.judges.types.JudgeOutput` and kept in the response cache with the answer).
:class:`SentTotals` sums them for a run.

Where the provider reports prompt tokens per modality (Gemini's ``promptTokensDetails``,
OpenAI-compatible servers' ``prompt_tokens_details.audio_tokens`` where present), the counts are
checked against what was sent (:func:`media_warnings`): audio or pictures sent and none counted
means the server may have dropped them.

:class:`JudgeIdentity` is the judge as the provider names itself (the model version string it
answers with, OpenAI's ``system_fingerprint``) beside the requested name; a floating alias
(``…-latest``) and a model that changes during a run are called out (:func:`identity_warnings`).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

#: longest text, in characters, that counts as the label of the image after it (a frame's
#: ``(frame at 2.00 s)``, a segment header ``[visual 0:02]``); a prompt before an image is no label
LABEL_CHARS = 80


class Sent(BaseModel):
    """What one request carried, as the provider's client sent it."""

    images: int = 0
    image_sizes: list[tuple[int, int]] = Field(default_factory=list, description="(width, height) of each image, in order")
    frame_labels: list[str | None] = Field(
        default_factory=list, description="per image: the short text sent just before it (its time label), or None")
    audio_parts: int = 0
    audio_s: float = 0.0
    video_clips: int = Field(default=0, description="video ranges sent as a clip or a server-side cut (not as frames)")
    video_s: float = 0.0
    whole_files: int = Field(default=0, description="whole media files (a model watching the full video)")
    text_chars: int = 0
    request_bytes: int | None = Field(default=None, description="bytes of the request body")
    bytes_exact: bool = Field(default=False, description="request_bytes is the body as sent (else an estimate)")

    @property
    def unlabelled_images(self) -> int:
        return sum(1 for x in self.frame_labels if not x)

    def brief(self) -> str:
        """One line: ``3 images (320x180), 2.0 s audio, 41 kB``."""
        bits: list[str] = []
        if self.images:
            sizes = sorted({f"{w}x{h}" for w, h in self.image_sizes})
            bits.append(f"{self.images} image{'s' if self.images != 1 else ''} ({', '.join(sizes)})")
        if self.audio_parts:
            bits.append(f"{self.audio_s:.1f} s audio")
        if self.video_clips:
            bits.append(f"{self.video_clips} clip{'s' if self.video_clips != 1 else ''} {self.video_s:.1f} s")
        if self.whole_files:
            bits.append(f"{self.whole_files} whole file{'s' if self.whole_files != 1 else ''}")
        if self.request_bytes is not None:
            bits.append(f"{'' if self.bytes_exact else '~'}{self.request_bytes / 1000:.0f} kB")
        return ", ".join(bits) or "text only"


class SentTotals(BaseModel):
    """Sums of :class:`Sent` over the requests of a run (``summary.json``)."""

    requests: int = Field(default=0, description="requests with an account (answered by a provider that counts)")
    images: int = 0
    pixels: int = Field(default=0, description="sum of width x height over the images")
    image_sizes: dict[str, int] = Field(default_factory=dict, description="'WxH' -> images of that size")
    unlabelled_images: int = Field(default=0, description="images sent with no short text label before them")
    audio_parts: int = 0
    audio_s: float = 0.0
    video_clips: int = 0
    video_s: float = 0.0
    whole_files: int = 0
    text_chars: int = 0
    request_bytes: int = 0
    bytes_estimated: int = Field(default=0, description="requests whose size is an estimate")
    media_warnings: int = Field(default=0, description="answers whose token counts say media were dropped")

    def add(self, s: Sent | None) -> None:
        if s is None:
            return
        self.requests += 1
        self.images += s.images
        for w, h in s.image_sizes:
            self.pixels += w * h
            self.image_sizes[f"{w}x{h}"] = self.image_sizes.get(f"{w}x{h}", 0) + 1
        self.unlabelled_images += s.unlabelled_images
        self.audio_parts += s.audio_parts
        self.audio_s = round(self.audio_s + s.audio_s, 3)
        self.video_clips += s.video_clips
        self.video_s = round(self.video_s + s.video_s, 3)
        self.whole_files += s.whole_files
        self.text_chars += s.text_chars
        self.request_bytes += s.request_bytes or 0
        self.bytes_estimated += 0 if s.bytes_exact else 1

    def __add__(self, other: SentTotals | dict[str, Any]) -> SentTotals:
        """The sum of two accounts; ``other`` may be a dumped one (a Ray worker's stats come as dicts,
        and the driver sums every field of :class:`~murgat.judges.base.JudgeStats` with ``+``)."""
        out = self.model_copy(deep=True)
        out.merge(other if isinstance(other, SentTotals) else SentTotals.model_validate(other))
        return out

    def merge(self, other: SentTotals) -> None:
        for name in ("requests", "images", "pixels", "unlabelled_images", "audio_parts", "video_clips", "whole_files",
                     "text_chars", "request_bytes", "bytes_estimated", "media_warnings"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.audio_s = round(self.audio_s + other.audio_s, 3)
        self.video_s = round(self.video_s + other.video_s, 3)
        for k, v in other.image_sizes.items():
            self.image_sizes[k] = self.image_sizes.get(k, 0) + v


def sent_totals(judges: Any) -> SentTotals:
    """The run's media account from its judges (each judge's ``sent_totals``; a wrapper's inner judge's):
    what the lead puts in ``summary.json``. On Ray the workers' judges are elsewhere: their flat
    ``JudgeStats.sent_*`` counters come back summed with the other statistics."""
    total = SentTotals()
    seen: set[int] = set()
    for j in judges:
        j = getattr(j, "inner", j)
        part = getattr(j, "sent_totals", None)
        if isinstance(part, SentTotals) and id(part) not in seen:
            seen.add(id(part))
            total.merge(part)
    return total


class Account:
    """Counts a request while a provider builds it (one per attempt)."""

    def __init__(self) -> None:
        self.sent = Sent()
        self._last_text: str | None = None
        #: bytes of media put inline (a provider whose SDK serialises the body estimates its size from them)
        self.inline_bytes = 0

    def text(self, text: str) -> None:
        self.sent.text_chars += len(text)
        self._last_text = text

    def image(self, width: int, height: int) -> None:
        s = self.sent
        s.images += 1
        s.image_sizes.append((int(width), int(height)))
        label = self._last_text
        s.frame_labels.append(label.strip() if label is not None and len(label.strip()) <= LABEL_CHARS else None)
        self._last_text = None

    def image_array(self, image: Any) -> None:
        """An image given as an (H, W, 3) array."""
        h, w = image.shape[:2]
        self.image(w, h)

    def image_bytes(self, data: bytes) -> None:
        """An encoded image (its size read from the header only)."""
        import io

        from PIL import Image

        try:
            with Image.open(io.BytesIO(data)) as im:
                self.image(*im.size)
        except Exception:  # unreadable bytes are still an image sent
            self.image(0, 0)

    def audio(self, seconds: float) -> None:
        self.sent.audio_parts += 1
        self.sent.audio_s = round(self.sent.audio_s + max(0.0, seconds), 3)
        self._last_text = None

    def clip(self, seconds: float) -> None:
        self.sent.video_clips += 1
        self.sent.video_s = round(self.sent.video_s + max(0.0, seconds), 3)
        self._last_text = None

    def whole_file(self) -> None:
        self.sent.whole_files += 1
        self._last_text = None

    def done(self, request_bytes: int | None, exact: bool) -> Sent:
        self.sent.request_bytes = request_bytes
        self.sent.bytes_exact = exact and request_bytes is not None
        return self.sent


def media_warnings(sent: Sent | None, tokens: dict[str, int] | None, where: str) -> dict[str, str]:
    """What the provider's per-modality prompt tokens say about media it may not have seen.

    ``tokens`` holds only the modalities the provider counts (Gemini: all of text, image, audio,
    video, 0 when it lists none; OpenAI-compatible servers: ``audio`` where they report
    ``audio_tokens``, ``image`` where they report ``image_tokens``); a modality it does not count is
    absent and never checked. Returns ``{"audio" | "pictures": warning}``.
    """
    if sent is None or not tokens:
        return {}
    out: dict[str, str] = {}
    if sent.audio_parts and "audio" in tokens and tokens["audio"] <= 0:
        out["audio"] = (f"{sent.audio_s:.1f} s of audio were sent to {where} but it counted 0 audio tokens: the server "
                        "may have dropped the audio")
    visual = sent.images + sent.video_clips
    counted = [k for k in ("image", "video") if k in tokens]
    if visual and counted and sum(tokens[k] for k in counted) <= 0:
        what = f"{sent.images} image(s)" + (f" and {sent.video_clips} clip(s)" if sent.video_clips else "")
        out["pictures"] = (f"{what} were sent to {where} but it counted 0 {' or '.join(counted)} tokens: the server "
                           "may have dropped the pictures")
    return out


_FLOATING = re.compile(r"(?:^|[-_./:])latest(?:$|[-_.])", re.I)


def floating_alias(model: str) -> str | None:
    """Why ``model`` names no fixed model (``gemini-flash-latest``, ``chatgpt-4o-latest``), or ``None``."""
    if _FLOATING.search(model or ""):
        return (f"the judge model {model!r} is a floating alias: the provider may move it to another model at any "
                "time, so this run's figures may not be reproducible; pin a versioned name")
    return None


class JudgeIdentity(BaseModel):
    """A judge as requested and as the provider reported itself (the run fingerprint's judge part)."""

    name: str = Field(description="provider:model as requested")
    provider: str
    requested: str = Field(description="the model name murgat sent")
    reported: dict[str, int] = Field(default_factory=dict,
                                     description="model version strings the provider answered with -> answers")
    system_fingerprints: dict[str, int] = Field(default_factory=dict,
                                                description="OpenAI system_fingerprint values -> answers")
    from_cache: dict[str, int] = Field(default_factory=dict,
                                       description="model strings of answers served from the response cache -> answers")
    warnings: list[str] = Field(default_factory=list)


class IdentityTracker:
    """Collects what answers say about the model behind a judge."""

    def __init__(self, name: str, provider: str, requested: str) -> None:
        self.name, self.provider, self.requested = name, provider, requested
        self.reported: dict[str, int] = {}
        self.fingerprints: dict[str, int] = {}
        self.from_cache: dict[str, int] = {}

    def saw(self, model: str | None, fingerprint: str | None, cached: bool) -> None:
        if cached:
            if model:
                self.from_cache[model] = self.from_cache.get(model, 0) + 1
            return
        if model:
            self.reported[model] = self.reported.get(model, 0) + 1
        if fingerprint:
            self.fingerprints[fingerprint] = self.fingerprints.get(fingerprint, 0) + 1

    def identity(self) -> JudgeIdentity:
        ident = JudgeIdentity(name=self.name, provider=self.provider, requested=self.requested,
                              reported=dict(self.reported), system_fingerprints=dict(self.fingerprints),
                              from_cache=dict(self.from_cache))
        ident.warnings = identity_warnings(ident)
        return ident


def identity_warnings(ident: JudgeIdentity) -> list[str]:
    """Floating aliases, names that resolved to another version, and models that changed mid-run."""
    out = []
    alias = floating_alias(ident.requested)
    if alias:
        out.append(alias)
    # "models/gemini-2.5-flash" or "embedded-rules-asr-ocr" name the requested model; "gpt-4o-2024-08-06" another
    others = sorted(m for m in ident.reported if not m.endswith(ident.requested))
    if others and not alias:
        out.append(f"{ident.name} answered as {', '.join(others)}: the requested name is an alias; pin "
                   f"{others[0]!r} to reproduce these answers")
    if len(ident.reported) > 1:
        out.append(f"the model behind {ident.name} changed during the run: " +
                   ", ".join(f"{m} ({n} answers)" for m, n in sorted(ident.reported.items())))
    if len(ident.system_fingerprints) > 1:
        out.append(f"{ident.name}'s system_fingerprint changed during the run ({len(ident.system_fingerprints)} "
                   "values): the serving configuration changed, answers may differ")
    return out
