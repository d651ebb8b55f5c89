"""``ScoreSettings``: every setting of ``murgat score``, which is also what ``murgat.score(...)`` takes.

The command line is made from these fields (:func:`murgat.engine.options.add_settings`); the
shared groups come from :mod:`murgat.engine.options`. The scoring configuration a run folder
records (:class:`murgat.pipeline.config.ScoreConfig`, whose fingerprint decides whether a folder
can be resumed) is built from these settings, so a default changed here changes fingerprints:
the defaults below are those of every earlier version.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from pydantic import Field

import murgat.engine.options as o


class ScoreSettings(o.Settings, o.JudgeOption, o.Frames, o.EvidenceText, o.Transcripts, o.Place, o.Folder,
                    o.Pace, o.Undetermined, o.Output, o.Requests, o.Effort, o.Selection, o.Stats, o.RunOn):
    """``murgat score INPUT --judge J --out OUT [options]``."""

    command: ClassVar[str] = "score"

    input: str = Field(description="murgat JSONL, the authors' JSON list, or a generate run folder (its responses.jsonl)",
                       json_schema_extra={"positional": True})
    judge: str = Field(description="provider[:model] for every stage, e.g. gemini:gemini-2.5-flash, embedded")
    judge_verify: str | None = Field(None, description="judge for the verifiability stage only (default: --judge)")
    judge_decompose: str | None = Field(None, description="judge for the decomposition stage only (default: --judge)")
    judge_entail: str | None = Field(None, description="judge for the entailment stage only (default: --judge)")
    judge_decontextualize: str | None = Field(None, description="enables decontextualization with this judge")
    decontextualize: bool = Field(False, description="decontextualize with --judge before splitting")
    verify_variant: Literal["simple", "cot", "json"] = Field(
        "simple", description="verifiability prompt: simple, cot (reasoning first) or json")
    decompose_variant: Literal["sentence", "response", "single-pass"] = Field(
        "sentence", description="decomposition: per sentence, whole response in one call, or single-pass")
    entail_variant: Literal["simple", "json"] = Field("simple", description="entailment prompt: simple (yes/no) or json")
    precision_mode: Literal["alce", "strict", "individual"] = Field(
        "alce", description="alce (default), strict (leave-one-out only) or individual (each citation alone)")
    empty_policy: Literal["zero", "exclude"] = Field(
        "zero", description="a response with no verifiable sentence scores 0 (zero) or is left out (exclude)")
    pad: float = Field(0.0, ge=0, description="seconds that widen every evidence segment on each side")
    max_frames: int = Field(8, ge=1, description="most frames sent for one cited visual segment")
    visual_as: Literal["frames", "clip"] = Field(
        "frames", description="send visual segments as sampled frames or as a picture-only clip")
    audio_point_pad: float = Field(1.0, ge=0, description="seconds on each side of a point audio citation")
    end_tolerance: float = Field(1.0, ge=0, description="citations may end this many seconds past the stream "
                                                        "(then clipped)")
    box_units: Literal["norm", "1000", "px"] = Field(
        "norm", description="what a bare 'box' in a citation means: 0-1 fractions, 0-1000, or pixels")
    box_order: Literal["xyxy", "yxyx"] = Field("xyxy", description="number order of boxes (Gemini writes y first: yxyx)")
    box_frame_size: str | None = Field(None, description="frame the model saw when pixel boxes refer to a resized "
                                                         "frame (default: the native frame)",
                                       json_schema_extra={"metavar": "WxH"})
    ocr_fps: float = Field(1.0, gt=0, description="frames per second read for on-screen text")
    sound_events: bool = Field(True, description="do not tag sound events (music, engines, silence…) in cited audio "
                                                 "(for --evidence-text and the embedded judge, whose sound claims then "
                                                 "get 'unknown')", json_schema_extra={"flag": "--no-sound-events"})
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
    max_response_chars: int = Field(200_000, ge=1, description="longer responses get an error record instead of being "
                                                               "scored")
    # None: the defaults of murgat.pipeline.config (not imported to build the parser)
    max_citations_per_fact: int | None = Field(None, ge=1, description="a fact citing more segments is undetermined, "
                                               "not judged: bounds calls per fact (default: 16)")
    max_evidence_s: float | None = Field(None, gt=0, description="most seconds of cited media one entailment request "
                                         "carries; longer evidence leaves the fact undetermined (default: 900)")
    decompose_context: int = Field(3, ge=0, description="earlier sentences shown to the decomposer (bounded: cost stays "
                                                        "linear in response length)")
    decompose_context_chars: int = Field(1500, ge=0, description="character cap on that context")
    copy_media: bool = Field(False, description="copy media next to report.html (portable run folder)")
    save_evidence: bool = Field(False, description="save cited frames/audio for report.html")

    @classmethod
    def scoring_of(cls, parent: Any, *, input: str, judge: str, judge_option: list[str], out: str,
                   cache: str) -> Self:
        """The score run another command makes of its own output (``sweep``'s efforts, ``program
        --score``'s variants): the parent's media place, where to run, how requests are sent (one
        account's rate limits, retries and concurrency hold for scoring too), ``--overwrite``,
        ``--retry-errors`` and quietness (``--json`` too: the parent prints the one document);
        scoring's own role defaults (``--max-tokens``, ``--timeout``) and everything else."""
        return cls(input=input, judge=judge, judge_option=list(judge_option), out=out, cache=cache,
                   overwrite=parent.overwrite, retry_errors=parent.retry_errors, quiet=parent.quiet or parent.print_json,
                   **parent.model_dump(include=set(o.Place.model_fields)), **o.passed_to_scoring(parent))
