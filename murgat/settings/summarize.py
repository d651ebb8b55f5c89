"""``SummarizeSettings``: every setting of ``murgat summarize`` (runs side by side, paired differences against
the first, judge agreement; ground runs too)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

import murgat.engine.options as o


class SummarizeSettings(o.Settings, o.Json, o.Stats, o.GroupBy):
    """``murgat summarize RUN [RUN ...] [--human LABELS] [--by FIELD] [--json]``."""

    command: ClassVar[str] = "summarize"

    runs: list[str] = Field(description="run folders (the first is the reference)",
                            json_schema_extra={"positional": True})
    human: str | None = Field(None, description="human labels (murgat annotate's export): with two or more runs, how "
                                                "alike the judges' errors against people are",
                              json_schema_extra={"metavar": "LABELS"})
