"""``ProgramSettings``: every setting of ``murgat program`` (``murgat.program(...)``). The planner
and executor write programs and descriptions, so requests have the reasoning role's defaults
(2,048 tokens, 300 s); items run four at a time by default (each runs a whole program)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o
from murgat.engine.fingerprint import Deciding

_OPT = {"metavar": "KEY=VALUE"}


class ProgramSettings(o.Settings, o.JudgeOption, o.Frames, o.EvidenceText, o.Transcripts, o.Place, o.Folder,
                      o.Pace, o.Output, o.ChainRole, o.Requests, o.Effort, o.Selection, o.ResponseCap, o.Probes,
                      o.RunOn):
    """``murgat program DATA --planner P --out OUT [options]``."""

    command: ClassVar[str] = "program"

    data: str = Field(description="questions: murgat JSONL/CSV, videommmu:PATH, nextgqa:PATH or hf:PATH",
                      json_schema_extra={"positional": True})
    variant: str = Field("all", description="logic-declarative, logic-imperative, narrative-declarative, "
                                            "narrative-imperative (comma list) or all")
    planner: str = Deciding(description="provider:model that writes the programs")
    executor: str | None = Deciding(None, description="provider:model for find/describe/synthesize (default: the planner)")
    judge: str | None = Deciding(None, description="entailment judge for the runtime check and --score (default: executor)")
    planner_option: list[str] = Deciding(default_factory=list, description="planner option KEY=VALUE (repeatable)",
                                         spelled={"short": "-P", **_OPT})
    executor_option: list[str] = Deciding(default_factory=list, description="executor option KEY=VALUE (repeatable)",
                                          spelled={"short": "-E", **_OPT})
    find: Literal["model", "transcript", "ocr"] = Deciding(
        "model", description="find backend: the executor model, ASR words (audio), or on-screen text (visual)")
    no_check: bool = Deciding(False, description="skip the runtime attribution check of descriptions")
    check_retries: int = Deciding(2, ge=0, le=10, description="regenerations of a description the check rejects")
    replan: int = Deciding(0, ge=0, le=10, description="times a refused program goes back to the planner with the reason")
    max_ops: int = Deciding(24, ge=1, description="operation calls allowed per program")
    program_timeout: float = Field(600.0, gt=0, description="wall seconds per program")
    max_frames: int = Deciding(8, ge=1, description="most frames sent for one cited visual segment")
    score: bool = Field(False, description="score each variant with murgat score and compare them")
    baseline: str | None = Field(None, description="with --score: a `murgat generate --mode cite` file to compare "
                                                   "against")
    item_concurrency: int | None = Field(4, ge=1, description="items processed at once")
