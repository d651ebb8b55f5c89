"""``GenerateSettings`` and ``SweepSettings``: every setting of ``murgat generate`` and ``murgat
sweep`` (``murgat.generate(...)``, ``murgat.sweep(...)``). The answering model writes whole
reasoning chains, so its requests have the generating role's defaults (4,096 tokens, 300 s)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

import murgat.engine.options as o
from murgat.engine.fingerprint import Deciding


class _Generating(o.Settings, o.ModelOption, o.Frames, o.Place, o.Folder, o.Pace, o.Output, o.GenerateRole,
                  o.Requests, o.Selection, o.ResponseCap, o.RunOn):
    """What ``generate`` and ``sweep`` share: the questions, the model and how it sees the video."""

    data: str = Field(description="questions: murgat JSONL/CSV, videommmu:PATH, nextgqa:PATH or hf:PATH",
                      json_schema_extra={"positional": True})
    model: str = Deciding(description="provider:model that answers, e.g. gemini:gemini-2.5-flash")
    mode: Literal["base", "cite", "posthoc"] = Deciding(
        "cite", description="base (plain reasoning), cite (cited reasoning) or posthoc (add citations to --base answers)")
    base: str | None = Deciding(None, description="posthoc: the base-mode responses file to annotate")
    max_frames: int = Deciding(64, ge=1, description="most frames of the whole video sent to the answering model")


class GenerateSettings(_Generating, o.Effort):
    """``murgat generate DATA --model M --out OUT [options]``: ``OUT`` is a run folder whose
    ``responses.jsonl`` is the input of ``murgat score`` (a ``FILE.jsonl`` ``--out``, the spelling of
    earlier versions, keeps the rest of the folder in ``FILE.run/``)."""

    command: ClassVar[str] = "generate"


class SweepSettings(_Generating, o.JudgeOption, o.Probes):
    """``murgat sweep DATA --model M --judge J --out ROOT``: generate and score once per effort, in
    ``ROOT/effort-E/`` (responses) and ``ROOT/effort-E/run/`` (scores); ``ROOT/sweep.json`` and
    ``sweep.png`` compare them."""

    command: ClassVar[str] = "sweep"

    efforts: str = Field("minimal,low,medium,high", description="comma-separated efforts to sweep")
    judge: str = Field(description="judge for scoring, as for murgat score")

    @field_validator("efforts", mode="before")
    @classmethod
    def _efforts_list(cls, value: Any) -> Any:
        """The Python API may pass ``efforts=["low", "high"]`` for ``--efforts low,high``."""
        return ",".join(str(v) for v in value) if isinstance(value, list | tuple) else value

