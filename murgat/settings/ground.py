"""``GroundCommandSettings``: every setting of ``murgat ground`` (grounding figures of cited responses against
gold evidence; no media, no judge). What the figures are computed with is
:class:`~murgat.commands.ground.run.GroundSettings`, made from these by the command."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

import murgat.engine.options as o


class GroundCommandSettings(o.Settings, o.Json, o.ResponseCap, o.Stats, o.GroupBy):
    """``murgat ground RESPONSES --gold GOLD [--out DIR] [options]``."""

    command: ClassVar[str] = "ground"

    responses: str = Field(description="response file (murgat JSONL or the authors' JSON list)",
                           json_schema_extra={"positional": True})
    gold: str = Field(description="gold JSONL (murgat gold import …)")
    out: str | None = Field(None, description="run folder for config.json, results.jsonl, summary.json")
    citevqa_compat: bool = Field(False, description="evidence precision as CiteVQA's released scorer: gold items "
                                                    "matched / citations")
    attributed_threshold: float = Field(0.5, ge=0, le=1, description="MURGAT-S that makes a right answer count as "
                                                                     "attributed in SAA_cite")
    recall_threshold: float = Field(0.6, ge=0, le=1, description="evidence recall needed for SAA")
    score_run: str | None = Field(None, description="a murgat score run folder of the same responses: MURGAT-S for "
                                                    "SAA_cite, facts for per-fact overlap")
    end_tolerance: float = Field(1.0, description="citations may end this many seconds past the gold duration and "
                                                  "stay valid")
    cluster_by_video: bool = Field(False, description="bootstrap resamples whole videos (several questions per video)")
