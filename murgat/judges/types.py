"""Judge requests and answers: parts, generation settings, outputs.

A request is an ordered list of parts — text, image, audio segment, video segment, and
evidence text (ASR words / OCR lines) — plus an optional JSON schema for the answer and a
:class:`GenerateConfig`. Parts are plain dataclasses because they carry numpy arrays;
everything that is stored (outputs, usage) is pydantic.
"""

from __future__ import annotations

import base64
import hashlib
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, cast

from pydantic import BaseModel, Field

from murgat.core.schema import omitted_while_unset
from murgat.judges.account import Sent
from murgat.media.cache import file_digest

if TYPE_CHECKING:  # numpy is imported where arrays are made: a text-only run never pays for it
    import numpy as np

_MEMO: dict[tuple[int, str], tuple[weakref.ref[Any], Any]] = {}
_MEMO_LOCK = threading.Lock()


_T = TypeVar("_T")


def memo_on(arr: Any, tag: str, make: Callable[[], _T]) -> _T:
    """``make()`` computed once per array object (frames and audio slices are reused by many
    requests): JPEG/WAV encoding, base64 and digests are the client's main CPU cost. The entry
    goes away with the array (weak reference), so an id is never reused for another array."""
    if arr is None:
        return make()
    key = (id(arr), tag)
    hit = _MEMO.get(key)
    if hit is not None and hit[0]() is arr:
        return cast("_T", hit[1])  # stored under this tag by the same `make`
    value = make()
    def forget(_ref: weakref.ref[Any], key: tuple[int, str] = key) -> None:
        _MEMO.pop(key, None)

    try:
        ref = weakref.ref(arr, forget)
    except TypeError:
        return value
    with _MEMO_LOCK:
        _MEMO[key] = (ref, value)
    return value


@dataclass
class TextPart:
    text: str
    kind: Literal["text"] = "text"

    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass
class ImagePart:
    """One frame; ``image`` is RGB uint8, ``data`` the encoded bytes (made on demand)."""

    image: np.ndarray | None = None
    data: bytes | None = None
    mime: str = "image/jpeg"
    time: float | None = None
    label: str = ""
    kind: Literal["image"] = "image"

    def encoded(self) -> bytes:
        if self.data is None:
            from murgat.media.frames import encode_image

            img = self.image
            assert img is not None
            fmt = "png" if self.mime == "image/png" else "jpeg"
            self.data = memo_on(img, f"enc:{fmt}", lambda: encode_image(img, fmt))
        return self.data

    def b64(self) -> str:
        """Base64 of :meth:`encoded` (memoised with the image)."""
        if self.image is None:
            return base64.b64encode(self.encoded()).decode("ascii")
        return memo_on(self.image, f"b64:{self.mime}", lambda: base64.b64encode(self.encoded()).decode("ascii"))

    def digest(self) -> str:
        if self.image is not None:
            import numpy as np

            img = self.image
            return memo_on(img, "sha", lambda: hashlib.sha256(np.ascontiguousarray(img).tobytes()).hexdigest())
        return hashlib.sha256(self.encoded()).hexdigest()


@dataclass
class AudioPart:
    """A 16 kHz mono float32 segment of the source's audio, with its time range."""

    samples: np.ndarray
    sr: int = 16_000
    start: float = 0.0
    end: float = 0.0
    label: str = ""
    kind: Literal["audio"] = "audio"

    def wav(self) -> bytes:
        from murgat.media.audio import wav_bytes

        return memo_on(self.samples, f"wav:{self.sr}", lambda: wav_bytes(self.samples, self.sr))

    def wav_b64(self) -> str:
        return memo_on(self.samples, f"wavb64:{self.sr}", lambda: base64.b64encode(self.wav()).decode("ascii"))

    def digest(self) -> str:
        import numpy as np

        x = self.samples
        return memo_on(x, f"sha:{self.sr}", lambda: hashlib.sha256(
            np.ascontiguousarray(x, dtype=np.float32).tobytes()).hexdigest() + f":{self.sr}")


@dataclass
class VideoPart:
    """A picture-only range of a source video.

    Providers choose how to send it: Gemini by upload + offsets, OpenAI-compatible servers
    as frames or a clip data URL, hf as frame arrays. ``frames`` are sampled in advance by
    the evidence builder so every provider sees the same instants.
    """

    source: str
    start: float
    end: float
    fps: float = 1.0
    frames: list[Any] = field(default_factory=list)  # media.frames.Frame
    label: str = ""
    kind: Literal["video"] = "video"

    def digest(self) -> str:
        idx = ",".join(str(f.index) for f in self.frames)
        return f"{file_digest(self.source)}:{self.start:.3f}-{self.end:.3f}@{self.fps}:{idx}"


@dataclass
class EvidenceTextPart:
    """Words heard (ASR) or text seen (OCR) inside one evidence segment."""

    label: str
    modality: str
    source: Literal["transcript", "screen_text", "sound_events", "voices"]
    text: str
    kind: Literal["evidence_text"] = "evidence_text"
    #: ``sound_events`` only: AudioSet class -> highest probability in the segment, and the
    #: loudest patch in dBFS (what the offline judge decides sound claims from)
    scores: dict[str, float] | None = None
    loudness_db: float | None = None
    #: ``transcript`` only: the words behind ``text`` ({word, start, end, probability[, speaker]}),
    #: for judges that weigh how surely a word was heard; not part of the digest (a score run's key
    #: names the transcript's ASR settings, and the words come from that transcript)
    words: list[dict[str, Any]] | None = None
    #: ``voices`` only: how many voices speak in the segment (:meth:`murgat.media.voices.VoiceSource.window`);
    #: its ``text`` (in the digest) says the count and the figures it was told by
    voices: dict[str, Any] | None = None

    def digest(self) -> str:
        return hashlib.sha256(f"{self.label}|{self.source}|{self.text}".encode()).hexdigest()

    def as_text(self) -> str:
        """How every provider renders it: ``[audio 0:01-0:03] transcript: …``."""
        return f"[{self.label}] {self.source.replace('_', ' ')}: {self.text or '(none)'}"


def frame_label(t: float) -> str:
    """The text put before each sampled frame, so a model knows when it was shown."""
    return f"(frame at {t:.2f} s)"


#: a whole file's sound track is sent whole up to this many seconds (the long-file threshold of
#: :mod:`murgat.media.audio`: 19.2 MB of WAV), else as that many seconds of excerpts (:meth:`MediaPart.sound`)
WHOLE_FILE_AUDIO_S = 600.0


@dataclass
class MediaPart:
    """A whole media file, picture and sound together — what an answering model watches.

    Providers send it natively where they can (Gemini: one Files API upload; OpenAI-
    compatible servers: a ``video_url`` data URL or sampled frames plus the sound track;
    hf: frames at ``fps`` capped at ``max_frames``, plus 16 kHz audio where the model
    hears). ``fps`` and ``max_frames`` are part of the request's identity.
    """

    path: str
    fps: float = 1.0
    max_frames: int = 64
    kind: Literal["media"] = "media"

    def digest(self) -> str:
        return f"{file_digest(self.path)}@{self.fps}x{self.max_frames}"

    def frames(self) -> list[Any]:
        from murgat.media.frames import open_video
        from murgat.media.streams import probe

        if not probe(self.path).has_video:
            return []
        vf = open_video(self.path)
        return vf.frames_in(0.0, vf.duration, self.fps, self.max_frames)

    def sound(self, max_s: float | None = None, excerpt_s: float | None = None) -> tuple[list[Any], int, Any]:
        """``(pieces, sample rate, note)`` of the sound track to send: ``[(start, end, samples)]``, the
        whole track of a file up to ``max_s`` seconds (:data:`WHOLE_FILE_AUDIO_S`; exactly the samples
        sent before this cap existed), else ``max_s`` seconds as evenly spread excerpts decoded
        one by one (:func:`murgat.media.limits.choose_excerpts`; an hour of 16 kHz WAV is 115 MB, more
        than any provider takes inline) with the :class:`murgat.media.limits.EvidenceNote` saying so;
        ``([], 16000, None)`` for a file without sound."""
        from murgat.media.audio import SAMPLE_RATE, open_audio
        from murgat.media.limits import DEFAULT_AUDIO_EXCERPT_S, audio_note, choose_excerpts, fmt_duration
        from murgat.media.streams import probe

        if not probe(self.path).has_audio:
            return [], SAMPLE_RATE, None
        cap = WHOLE_FILE_AUDIO_S if max_s is None else max_s
        track = open_audio(self.path)
        dur = float(track.duration)
        if dur <= cap + 1e-9:
            whole = track.samples if hasattr(track, "samples") else track.slice(0.0, dur)
            return [(0.0, dur, whole)], track.sr, None
        pieces = choose_excerpts([(0.0, dur)], cap, excerpt_s or DEFAULT_AUDIO_EXCERPT_S)
        note = audio_note("the sound track", None, (0.0, dur), pieces,
                          f"{fmt_duration(cap)} of a whole file's sound per request (murgat)")
        return [(a, b, track.slice(a, b)) for a, b in pieces], track.sr, note


Part = TextPart | ImagePart | AudioPart | VideoPart | EvidenceTextPart | MediaPart


class GenerateConfig(BaseModel):
    """Generation settings. Only ``OUTPUT_AFFECTING`` fields enter the response cache key."""

    temperature: float = Field(default=0.0, description="sampling temperature; 0 for reproducible judging")
    max_tokens: int = Field(default=1024, description="cap on answer tokens (thinking tokens excluded where the API allows)")
    samples: int = Field(default=1, ge=1, description="answers to draw per request (majority vote where used)")
    reasoning_effort: str | None = Field(
        default=None, description="murgat effort level (none|minimal|low|medium|high), mapped per provider"
    )
    timeout_s: float = Field(default=120.0, gt=0, description="seconds before one attempt is abandoned (then retried)")
    retries: int = Field(default=5, ge=0, description="retries after the first attempt on 429/5xx/timeouts")
    concurrency: int = Field(default=8, ge=1, description="requests in flight at once for this provider")
    rpm: float | None = Field(default=None, description="requests-per-minute limit (None: unlimited)")
    tpm: float | None = Field(default=None, description="tokens-per-minute limit, estimated before sending")
    seed: int | None = Field(default=0, description="sampling seed passed to providers that accept one")
    backoff_base_s: float = Field(default=1.0, gt=0, description="first retry delay; doubles each retry, with jitter")
    backoff_max_s: float = Field(
        default=60.0, gt=0, description="longest delay between retries; also the ceiling on a server's Retry-After")
    max_retry_time_s: float = Field(
        default=600.0, gt=0, description="most seconds one request may spend on attempts and waits before it fails")

    OUTPUT_AFFECTING: ClassVar[frozenset[str]] = frozenset({"temperature", "max_tokens", "samples", "reasoning_effort", "seed"})

    def cache_fields(self) -> dict[str, Any]:
        d = self.__dict__
        return {k: d[k] for k in _CACHE_FIELD_ORDER}


_CACHE_FIELD_ORDER = tuple(sorted(GenerateConfig.OUTPUT_AFFECTING))


@dataclass
class JudgeRequest:
    """One question to a judge.

    ``task`` names the stage (``verify``, ``decompose``, ``entail``, ``decontextualize``,
    ``generate``, …) and ``inputs`` holds its structured inputs; providers that read
    prompts ignore both (the rendered prompt is in ``parts``), rule-based judges use them.
    """

    parts: list[Part]
    schema: dict[str, Any] | None = None
    config: GenerateConfig = field(default_factory=GenerateConfig)
    task: str = "generic"
    inputs: dict[str, Any] = field(default_factory=dict)
    system: str | None = None
    #: identity of the media parts computed without decoding them (file digest, segment
    #: times, evidence settings); when set it stands for every non-text part in the cache key
    key_hint: str | None = None
    #: what a usable answer looks like: ``verdict`` answers must read as yes/no/unknown
    #: (:func:`murgat.judges.parsing.parse_verdict`); with a ``schema`` the answer must be JSON.
    #: An answer that fails this check is returned but never cached, so a rerun asks again.
    expects: Literal["text", "verdict"] = "text"
    #: what the evidence limits changed in this request's media (:class:`murgat.media.limits.EvidenceNote`
    #: dumps), set where the parts are made: the answer carries them (:attr:`JudgeOutput.evidence_notes`),
    #: so a record made from a cached answer says what its request held
    evidence_notes: list[dict[str, Any]] = field(default_factory=list)
    #: the ``GenerateConfig`` the cache key is made of when it differs from ``config``: an answer cap
    #: sized to the prompt (:func:`murgat.judges.budget.sized_for`) keys as the configured cap did,
    #: because an answer that ended before the smaller cap is the answer to either request
    #: (:meth:`murgat.judges.base.Judge.generate` serves a cached one only when it fits the cap sent)
    key_config: GenerateConfig | None = None
    #: cache keys already computed for this request, per judge (a request is asked of the
    #: call pool and then of the judge and its cache: one SHA-256 of the recipe serves all)
    key_memo: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def text(self) -> str:
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart))


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(input_tokens=self.input_tokens + other.input_tokens,
                     output_tokens=self.output_tokens + other.output_tokens,
                     thinking_tokens=self.thinking_tokens + other.thinking_tokens)


class JudgeOutput(BaseModel):
    """A judge's answer, or why there is none.

    ``error`` is set when no answer came back (after retries, a refusal, a timeout);
    ``blocked`` marks a safety block. ``parsed`` is the JSON value when a schema was given
    and the text parsed, else ``None`` with ``parse_error``. ``truncated``: the server stopped
    the answer at the token cap (OpenAI ``finish_reason: "length"``, Gemini ``MAX_TOKENS``), so
    a label in it is not a finished answer (:func:`murgat.judges.parsing.read_verdict`).
    """

    text: str | None = None
    parsed: Any = None
    parse_error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    provider: str = ""
    cached: bool = False
    deduplicated: bool = False
    retries: int = 0
    error: str | None = None
    blocked: bool = False
    truncated: bool = False
    raw: Any = None
    cost_usd: float = 0.0
    #: what the request carried, as the provider's client sent it (``None``: a provider that sends
    #: no media, or an answer cached before accounts existed); see :mod:`murgat.judges.account`
    sent: Sent | None = None
    #: prompt tokens per modality as the provider reported them (only the modalities it counts)
    modality_tokens: dict[str, int] | None = None
    #: OpenAI's ``system_fingerprint`` (the serving configuration), where given
    system_fingerprint: str | None = None
    #: what the answer's token counts say about media the server may have dropped
    warnings: list[str] = Field(default_factory=list)
    #: what the evidence limits changed in the request this answers (copied from
    #: :attr:`JudgeRequest.evidence_notes` when it was sent, so it is cached with the answer)
    evidence_notes: list[dict[str, Any]] = Field(default_factory=list)

    # answers whose evidence no limit touched are stored (cache, cassettes) exactly as before
    _omit_no_notes = omitted_while_unset(evidence_notes=[])
