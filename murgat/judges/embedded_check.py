"""Ask the offline judge about one cited claim exactly as ``murgat score`` would.

The labelled claim set (``tests/data/embedded_claims/``), its benchmark and the judge's tests
all go through :func:`check_claim`: the claim's citations are parsed and checked against the
file, the evidence is built with its text channels (ASR words, OCR text, sound classes) and
the entailment question is put to the judge with the same parts a run sends — so a figure
measured here is the figure a run gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.judges.types import JudgeRequest, TextPart
from murgat.media.interrupt import run_async

if TYPE_CHECKING:
    from murgat.media.evidence import Evidence


@dataclass
class ClaimVerdict:
    label: str  # yes | no | unknown | unavailable (the evidence could not be built)
    reason: str
    #: the embedded judge's record of what was heard and read in the cited segments (its answer's
    #: ``Evidence:`` line), when the answer has one
    evidence: dict[str, Any] | None = None


def check_claim(fact: str, media: str | Path, judge: Any, *, asr_model: str | None = None,
                ocr_fps: float = 1.0, sounds: bool = True) -> ClaimVerdict:
    """The judge's entailment verdict on ``fact`` (a sentence with its citations) about ``media``.

    Each step is the one a score run takes, in its order, so that a figure measured here is the
    figure a run gets: the citations, the text channels of the file, the evidence of the cited
    segments, then the question. Example: "The speaker says my fellow Canadians (audio, 0:00-0:02)."
    about ``jfk.flac`` → ``ClaimVerdict("no", "the fact says 'Canadians' where audio 0:00-0:02 has
    'american'.", {...})``; the same sentence without its citation → ``"unavailable"``."""
    from murgat.core.citations import parse_citations
    from murgat.media.errors import MediaError
    from murgat.media.evidence import EvidenceConfig, build_evidence
    from murgat.media.streams import probe

    info = probe(media)
    cites = [c for c in parse_citations(fact) if c.valid]
    if not cites:
        return ClaimVerdict("unavailable", "the claim has no valid citation")
    transcript, tags, voices = _audio_channels(media, asr_model, sounds) if info.has_audio else (None, None, None)
    screen = _screen_channel(media, ocr_fps) if info.has_video else None
    try:
        ev = build_evidence(media, cites, EvidenceConfig(text=True), transcript=transcript, screen=screen, sounds=tags,
                            voices=voices)
    except MediaError as exc:
        return ClaimVerdict("unavailable", str(exc))
    bad = [s for s in ev.segments if not s.available]
    if bad:
        return ClaimVerdict("unavailable", "; ".join(f"{s.label}: {s.reason}" for s in bad))
    return _ask(fact, ev, judge)


def _audio_channels(media: str | Path, asr_model: str | None, sounds: bool) -> tuple[Any, Any, Any]:
    """``(transcript, sound tags, voices)`` of a file with audio, as lazy sources: a long file is
    heard only around the cited windows, as in a score run (:mod:`murgat.judging.channels`). A
    missing sound tagger leaves the tags out (the sound rule then abstains) instead of failing the
    claim. Example: ``_audio_channels("jfk.flac", None, sounds=False)`` → ``(its transcript, None,
    None)``."""
    from murgat.media.asr import transcript_source

    transcript = transcript_source(media, asr_model)
    if not sounds:
        return transcript, None, None
    return transcript, _sound_tags(media), _voices(media)


def _sound_tags(media: str | Path) -> Any:
    """The sound tagger's source for ``media``, or ``None`` when the tagger is not installed: a long
    file's scores come later, per window, so whether its model files are there is asked now, where
    a missing tool still means "no tags" rather than a failed claim. Example: a long file without the
    tagger's model files → ``None``: the claim is judged without sound tags."""
    from murgat.media.errors import ToolMissing

    try:
        from murgat.media.sounds import model_files, sound_source

        tags = sound_source(media)
        if tags is not None and hasattr(tags, "block"):
            model_files()  # a long file's scores come later, per window: is the tagger there?
    except ToolMissing:
        return None
    return tags


def _voices(media: str | Path) -> Any:
    """The voice counts of ``media`` (:mod:`murgat.media.voices`), which "he says" / "she asks" is
    checked against (:mod:`murgat.judges.speakers`): a named speaker stands only where one voice
    speaks. Example: ``_voices("jfk.flac")`` → a :class:`~murgat.media.voices.VoiceSource`."""
    from murgat.media.voices import voice_source

    return voice_source(media)


def _screen_channel(media: str | Path, ocr_fps: float) -> Any:
    """The on-screen text of a file with video, read lazily (only the frames of the cited windows
    are read), so a claim about one second of a long film reads one second of it. Example:
    ``_screen_channel("bikes.mp4", 1.0)`` → a :class:`~murgat.media.ocr.LazyScreen` at one frame a second."""
    from murgat.media.ocr import lazy_screen

    return lazy_screen(media, ocr_fps)


def _ask(fact: str, ev: Evidence, judge: Any) -> ClaimVerdict:
    """Put the entailment question to ``judge`` with the parts a run sends (the claim without its
    citations, then the evidence text), and read the answer as a run reads it: a truncated answer
    is unparseable whatever it says, and the ``Evidence:`` record is kept apart from the reason.
    Example: the answer "Label: no / Reason: the fact says 'Canadians' where audio 0:00-0:02 has
    'american'. / Evidence: {…}" (one line each) → ``ClaimVerdict("no", "the fact says 'Canadians'
    where audio 0:00-0:02 has 'american'.", {…})``."""
    from murgat.core.citations import strip_citations
    from murgat.judges.evidence import evidence_parts
    from murgat.judges.parsing import read_verdict

    claim = strip_citations(fact)
    req = JudgeRequest(parts=[TextPart(claim), *evidence_parts(ev, True)], task="entail",
                       inputs={"fact": claim, "evidence": [s.label for s in ev.segments]})
    out = run_async(judge.generate(req))
    verdict, _ = read_verdict(out)  # a truncated answer is unparseable, whatever it says
    text, record = split_evidence(out.text or "")
    reason = text.split("Reason:", 1)[-1].strip() if "Reason:" in text else text
    return ClaimVerdict(str(verdict), reason, record)


def split_evidence(text: str) -> tuple[str, dict[str, Any] | None]:
    """An embedded-judge answer without its ``Evidence:`` line, and that line's record (``None``
    when there is none or it cannot be read)."""
    import json

    head, sep, tail = text.partition("\nEvidence: ")
    if not sep:
        return text, None
    try:
        record = json.loads(tail.split("\n", 1)[0])
    except ValueError:
        return head, None
    return head, record if isinstance(record, dict) else None
