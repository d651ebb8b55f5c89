"""``JudgeCheckSettings``: every setting of ``murgat judge check`` (the probes asked of one judge, through the path
a run of ``score`` or ``faithfulness`` asks it: :mod:`murgat.commands.judge_check.check`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o
from murgat.media.cache import cache_root


class JudgeCheckSettings(o.Settings, o.JudgeOption, o.Frames, o.EvidenceText, o.Transcripts, o.Output, o.Requests,
                         o.Effort):
    """``murgat judge check --judge J [-J KEY=VALUE ...] [options]``."""

    command: ClassVar[str] = "judge check"

    judge: str = Field(description="provider[:model] of the judge to probe, e.g. gemini:gemini-2.5-flash, embedded")
    stage: Literal["entail", "faith-step", "faith-chain"] = Field(
        "entail", description="how the judge is asked: entail (score, program), faith-step (faithfulness "
                              "--granularity step, reflect's detector) or faith-chain (faithfulness' default)")
    probe_seed: int = Field(0, ge=0, description="seed of the probe clip (other numbers and words)")
    cache: str | None = Field(None, description="response cache file (default: judge-check.sqlite in murgat's cache "
                                                "folder, $MURGAT_CACHE_DIR)")
    record: str | None = Field(None, description="append every judge exchange to this JSONL cassette")
    # the evidence options of ``murgat score`` (same names, defaults and help)
    entail_variant: Literal["simple", "json"] = Field("simple", description="entailment prompt: simple (yes/no) or json")
    pad: float = Field(0.0, ge=0, description="seconds that widen every evidence segment on each side")
    max_frames: int | None = Field(None, ge=1, description="most frames sent for one cited visual segment (default: "
                                                             "8 as in score; faith stages: 16 as in faithfulness)")
    visual_as: Literal["frames", "clip"] = Field(
        "frames", description="send visual segments as sampled frames or as a picture-only clip")
    audio_point_pad: float = Field(1.0, ge=0, description="seconds on each side of a point audio citation")
    ocr_fps: float = Field(1.0, gt=0, description="frames per second read for on-screen text")
    sound_events: bool = Field(True, description="do not tag sound events (music, engines, silence…) in cited audio "
                                                 "(for --evidence-text and the embedded judge, whose sound claims then "
                                                 "get 'unknown')", json_schema_extra={"flag": "--no-sound-events"})
    # the role defaults of the command whose path is probed (None: score's for entail, faithfulness' for faith
    # stages), so Requests' two fields are widened to take None
    max_tokens: int | None = Field(  # type: ignore[assignment]
        None, ge=1, description="cap on answer tokens (default: 1,024 for entail as in score; 2,048 for faith stages "
                                "as in faithfulness)")
    timeout: float | None = Field(  # type: ignore[assignment]
        None, gt=0, description="seconds before one attempt is abandoned (default: 120 for entail, 300 for faith "
                                "stages, as in those commands)")
    # one attempt each: a probe is a question about the judge, not work to finish (a slow server's
    # retries kept the first check of a tiny model busy for minutes); --retries N asks again
    retries: int = Field(0, ge=0, description="retries after the first attempt (default 0: one attempt per probe)")
    deadline: float = Field(300.0, gt=0, description="seconds the whole check may take: probes unfinished by then "
                                                     "are unanswered and named, so a slow server ends in bounded time")
    variant: Literal["vanilla", "grounding", "grounding+rationale"] = Field(
        "grounding", description="faith stages: labelling prompt (as murgat faithfulness --variant)")

    def cache_path(self) -> Path:
        return Path(self.cache) if self.cache else cache_root() / "judge-check.sqlite"
