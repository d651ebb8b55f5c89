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
from typing import Any

from murgat.judges.types import JudgeRequest, TextPart
from murgat.media.interrupt import run_async


@dataclass
class ClaimVerdict:
    label: str  # yes | no | unknown | unavailable (the evidence could not be built)
    reason: str
    #: the embedded judge's record of what was heard and read in the cited segments (its answer's
    #: ``Evidence:`` line), when the answer has one
    evidence: dict[str, Any] | None = None


def check_claim(fact: str, media: str | Path, judge: Any, *, asr_model: str | None = None,
                ocr_fps: float = 1.0, sounds: bool = True) -> ClaimVerdict:
    """The judge's entailment verdict on ``fact`` (a sentence with its citations) about ``media``."""
    from murgat.core.citations import parse_citations, strip_citations
    from murgat.judges.evidence import evidence_parts
    from murgat.judges.parsing import read_verdict
    from murgat.media.errors import MediaError, ToolMissing
    from murgat.media.evidence import EvidenceConfig, build_evidence
    from murgat.media.streams import probe

    info = probe(media)
    cites = [c for c in parse_citations(fact) if c.valid]
    if not cites:
        return ClaimVerdict("unavailable", "the claim has no valid citation")
    transcript: Any = None
    screen: Any = None
    tags: Any = None
    voices: Any = None
    if info.has_audio:
        # a long file is heard only around the cited windows, as in a score run (murgat.judging.channels)
        from murgat.media.asr import transcript_source

        transcript = transcript_source(media, asr_model)
        if sounds:
            try:
                from murgat.media.sounds import model_files, sound_source

                tags = sound_source(media)
                if tags is not None and hasattr(tags, "block"):
                    model_files()  # a long file's scores come later, per window: is the tagger there?
            except ToolMissing:
                tags = None
            from murgat.media.voices import voice_source

            voices = voice_source(media)
    if info.has_video:
        from murgat.media.ocr import lazy_screen

        screen = lazy_screen(media, ocr_fps)
    try:
        ev = build_evidence(media, cites, EvidenceConfig(text=True), transcript=transcript, screen=screen, sounds=tags,
                            voices=voices)
    except MediaError as exc:
        return ClaimVerdict("unavailable", str(exc))
    bad = [s for s in ev.segments if not s.available]
    if bad:
        return ClaimVerdict("unavailable", "; ".join(f"{s.label}: {s.reason}" for s in bad))
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
