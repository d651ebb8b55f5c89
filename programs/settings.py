"""``ProgramSettings``: every setting of ``murgat program`` (``murgat.program(...)``). The planner
and executor write programs and descriptions, so requests have the reasoning role's defaults
(2,048 tokens, 300 s); items run four at a time by default (each runs a whole program)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o
from murgat.engine.fingerprint import decides

_OPT = {"metavar": "KEY=VALUE"}


class ProgramSettings(o.Settings, o.JudgeOption, o.Frames, o.EvidenceText, o.Transcripts, o.Place, o.Folder,
                      o.Pace, o.Output, o.ChainRole, o.Requests, o.Effort, o.Selection, o.RunOn):
    """``murgat program DATA --planner P --out OUT [options]``."""

    command: ClassVar[str] = "program"

    data: str = Field(description="questions: murgat JSONL/CSV, videommmu:PATH, nextgqa:PATH or hf:PATH",
                      json_schema_extra={"positional": True})
    variant: str = Field("all", description="logic-declarative, logic-imperative, narrative-declarative, "
                                            "narrative-imperative (comma list) or all")
    planner: str = Field(description="provider:model that writes the programs", json_schema_extra=decides())
    executor: str | None = Field(None, description="provider:model for find/describe/synthesize (default: the planner)",
                                 json_schema_extra=decides())
    judge: str | None = Field(None, description="entailment judge for the runtime check and --score (default: executor)",
                              json_schema_extra=decides())
    planner_option: list[str] = Field(default_factory=list, description="planner option KEY=VALUE (repeatable)",
                                      json_schema_extra=decides(short="-P", **_OPT))
    executor_option: list[str] = Field(default_factory=list, description="executor option KEY=VALUE (repeatable)",
                                       json_schema_extra=decides(short="-E", **_OPT))
    find: Literal["model", "transcript", "ocr"] = Field(
        "model", description="find backend: the executor model, ASR words (audio), or on-screen text (visual)",
        json_schema_extra=decides())
    no_check: bool = Field(False, description="skip the runtime attribution check of descriptions",
                           json_schema_extra=decides())
    check_retries: int = Field(2, ge=0, le=10, description="regenerations of a description the check rejects",
                               json_schema_extra=decides())
    replan: int = Field(0, ge=0, le=10, description="times a refused program goes back to the planner with the reason",
                        json_schema_extra=decides())
    max_ops: int = Field(24, ge=1, description="operation calls allowed per program", json_schema_extra=decides())
    program_timeout: float = Field(600.0, gt=0, description="wall seconds per program")
    max_frames: int = Field(8, ge=1, description="most frames sent for one cited visual segment",
                            json_schema_extra=decides())
    score: bool = Field(False, description="score each variant with murgat score and compare them")
    baseline: str | None = Field(None, description="with --score: a `murgat generate --mode cite` file to compare "
                                                   "against")
    item_concurrency: int | None = Field(4, ge=1, description="items processed at once")
