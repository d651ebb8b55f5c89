"""``ScoreSettings``: every setting of ``murgat score``, which is also what ``murgat.score(...)`` takes.

The command line is made from these fields (:func:`murgat.engine.options.add_settings`); the
shared groups come from :mod:`murgat.engine.options`. A field declared ``Deciding(...)`` is part of the
fingerprint a run folder records (a rerun that changes it is refused); :data:`SCORE_NAMES` says
where each setting sits in the scoring configuration (:class:`~murgat.settings.score_resolved.ScoreConfig`)
and in the ``config.json`` of earlier versions, which is derived from these settings with it. A
default changed here changes fingerprints: the defaults below are those of every earlier version.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from pydantic import Field, ValidationInfo, field_validator

import murgat.engine.options as o
from murgat.engine.fingerprint import Deciding, Late, Where

#: where each setting sits in the scoring configuration and in config.json (the names of earlier
#: versions); ``None``: through what the run derives from it (the stages' judges, the box convention)
SCORE_NAMES: dict[str, Where] = {
    **o.JUDGING_NAMES,
    "decompose_context": "decompose_context_sentences", "bootstrap": "bootstrap_resamples",
    "end_tolerance": ("end_tolerance_s", "evidence.end_tolerance_s"),
    "pad": "evidence.pad_s", "audio_point_pad": "evidence.audio_point_pad_s", "visual_as": "evidence.visual_as",
    "judge": None, "judge_verify": None, "judge_decompose": None, "judge_entail": None, "judge_decontextualize": None,
    "decontextualize": None, "judge_option": None, "box_units": None, "box_order": None, "box_frame_size": None,
    # the request caps entered folders' fingerprints only when changed: folders made before them resume
    "max_citations_per_fact": Late("max_citations_per_fact"), "max_evidence_s": Late("max_evidence_s"),
    # --repeats entered folders' fingerprints only when not 1: every folder made before it resumes
    "repeats": Late("repeats"),
}


#: request caps (``--max-citations-per-fact``, ``--max-evidence-s``): a sentence with 10,000
#: citations made 10,003 calls and one 834 MB request before these existed
DEFAULT_MAX_CITATIONS_PER_FACT = 16
DEFAULT_MAX_EVIDENCE_S = 900.0

class ScoreSettings(o.Settings, o.JudgeOption, o.Frames, o.EvidenceText, o.Transcripts, o.Place, o.Folder,
                    o.Pace, o.Undetermined, o.Output, o.Requests, o.Effort, o.Selection, o.ResponseCap, o.Stats,
                    o.GroupBy, o.Probes, o.RunOn):
    """``murgat score INPUT --judge J --out OUT [options]``."""

    command: ClassVar[str] = "score"

    input: str = Field(description="murgat JSONL, the authors' JSON list, or a generate run folder (its responses.jsonl)",
                       json_schema_extra={"positional": True})
    judge: str = Deciding(description="provider[:model] for every stage, e.g. gemini:gemini-2.5-flash, embedded")
    judge_verify: str | None = Deciding(None, description="judge for the verifiability stage only (default: --judge)")
    judge_decompose: str | None = Deciding(None, description="judge for the decomposition stage only (default: --judge)")
    judge_entail: str | None = Deciding(None, description="judge for the entailment stage only (default: --judge)")
    judge_decontextualize: str | None = Deciding(None, description="enables decontextualization with this judge")
    decontextualize: bool = Deciding(False, description="decontextualize with --judge before splitting")
    verify_variant: Literal["simple", "cot", "json"] = Deciding(
        "simple", description="verifiability prompt: simple, cot (reasoning first) or json")
    decompose_variant: Literal["sentence", "response", "single-pass"] = Deciding(
        "sentence", description="decomposition: per sentence, whole response in one call, or single-pass")
    entail_variant: Literal["simple", "json"] = Deciding("simple", description="entailment prompt: simple (yes/no) or json")
    precision_mode: Literal["alce", "strict", "individual"] = Deciding(
        "alce", description="alce (default), strict (leave-one-out only) or individual (each citation alone)")
    empty_policy: Literal["zero", "exclude"] = Deciding(
        "zero", description="a response with no verifiable sentence scores 0 (zero) or is left out (exclude)")
    pad: float = Deciding(0.0, ge=0, description="seconds that widen every evidence segment on each side")
    max_frames: int = Deciding(8, ge=1, description="most frames sent for one cited visual segment")
    visual_as: Literal["frames", "clip"] = Deciding(
        "frames", description="send visual segments as sampled frames or as a picture-only clip")
    audio_point_pad: float = Deciding(1.0, ge=0, description="seconds on each side of a point audio citation")
    end_tolerance: float = Deciding(1.0, ge=0, description="citations may end this many seconds past the stream "
                                                        "(then clipped)")
    box_units: Literal["norm", "1000", "px"] = Deciding(
        "norm", description="what a bare 'box' in a citation means: 0-1 fractions, 0-1000, or pixels")
    box_order: Literal["xyxy", "yxyx"] = Deciding("xyxy", description="number order of boxes (Gemini writes y first: yxyx)")
    box_frame_size: str | None = Deciding(None, description="frame the model saw when pixel boxes refer to a resized "
                                                         "frame (default: the native frame)", spelled={"metavar": "WxH"})
    ocr_fps: float = Deciding(1.0, gt=0, description="frames per second read for on-screen text")
    sound_events: bool = Deciding(True, description="do not tag sound events (music, engines, silence…) in cited audio "
                                                 "(for --evidence-text and the embedded judge, whose sound claims then "
                                                 "get 'unknown')", spelled={"flag": "--no-sound-events"})
    # None: as many items as judge requests in flight (at least 4) — a role default
    item_concurrency: int | None = Field(None, ge=1, description="items processed at once (default: as many as judge "
                                                                 "requests in flight, at least 4)")
    cluster_by_video: bool = Field(False, description="bootstrap resamples whole videos (several questions per video)")
    attributed_threshold: float = Field(0.5, ge=0, le=1, description="MURGAT-S needed for an answer to count as "
                                                                     "right and attributed")
    gold: str | None = Field(None, description="gold evidence JSONL (murgat gold import): add the grounding figures of "
                                               "'murgat ground' to the summary")
    dry_run: bool = Field(False, description="count calls and estimate cost; nothing is sent")
    record: str | None = Field(None, description="append every judge exchange to this JSONL cassette")
    max_citations_per_fact: int = Deciding(DEFAULT_MAX_CITATIONS_PER_FACT, ge=1, description="a fact citing more "
                                        "segments is undetermined, not judged: bounds calls per fact")
    max_evidence_s: float = Deciding(DEFAULT_MAX_EVIDENCE_S, gt=0, description="most seconds of cited media one "
                                  "entailment request carries; longer evidence leaves the fact undetermined")
    repeats: int = Deciding(1, ge=1, le=100, description="ask every yes/no judge question (verifiability, "
                            "entailment) K times, repeat r with seed +r; the majority is the verdict (a tie: unknown) "
                            "and the summary reports how stable the verdicts and MURGAT-S are",
                            spelled={"metavar": "K"})
    decompose_context: int = Deciding(3, ge=0, description="earlier sentences shown to the decomposer (bounded: cost stays "
                                                        "linear in response length)")
    decompose_context_chars: int = Deciding(1500, ge=0, description="character cap on that context")
    # not in the fingerprint (a plain Field, as --gold): the check asks about the run's records after
    # they are made and changes none of them; its requests are cached like the run's own
    modality_check: int = Field(0, ge=0, description="after scoring, ask the entail judge again about N facts it "
                                "found supported (drawn by --seed), each cited time moved to the other modality; "
                                "the summary reports the share still judged supported (a modality-blindness rate, "
                                "with its confidence interval; 0: no check)", json_schema_extra={"metavar": "N"})
    copy_media: bool = Field(False, description="copy media next to report.html (portable run folder)")
    save_evidence: bool = Field(False, description="save cited frames/audio for report.html")

    @field_validator("max_citations_per_fact", "max_evidence_s", mode="before")
    @classmethod
    def _cap_none_is_the_default(cls, value: Any, info: ValidationInfo) -> Any:
        """``None`` (the Python API of earlier versions) means the cap's default."""
        return cls.model_fields[str(info.field_name)].default if value is None else value

    @classmethod
    def scoring_of(cls, parent: Any, *, input: str, judge: str, judge_option: list[str], out: str,
                   cache: str) -> Self:
        """The score run another command makes of its own output (:func:`~murgat.engine.options.scoring_values`)."""
        return cls(**o.scoring_values(parent, input=input, judge=judge, judge_option=judge_option, out=out,
                                      cache=cache))
