"""``SweepSettings``: every setting of ``murgat sweep`` (``murgat.sweep(...)``): generate and score once per
reasoning effort; the generating settings are :class:`~murgat.settings.generate.Generating`'s."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, field_validator

import murgat.engine.options as o
from murgat.settings.generate import Generating


class SweepSettings(Generating, o.JudgeOption, o.Probes):
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

