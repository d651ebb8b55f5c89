"""The settings of ``murgat gold import DATASET``: one model per dataset, since each reads other files
(NExT-GQA three, CiteVQA and ReXTime one list of items)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

import murgat.engine.options as o


class GoldNextgqaSettings(o.Settings):
    """``murgat gold import nextgqa --gsub FILE --qa FILE [--map FILE] --out FILE``."""

    command: ClassVar[str] = "gold import nextgqa"

    gsub: str = Field(description="gsub_{val,test}.json (time spans in seconds)")
    qa: str = Field(description="{val,test}.csv (questions, options a0-a4, answer text)")
    map: str | None = Field(None, description="map_vid_vidorID.json: video id -> VidOR path (optional)")
    out: str = Field(description="gold JSONL to write")


class GoldItemsSettings(o.Settings):
    """What a dataset whose annotations are one list of items takes: ``--items FILE --out FILE``."""

    items: str = Field(description="the dataset's JSON list or JSONL of items")
    out: str = Field(description="gold JSONL to write")


class GoldCitevqaSettings(GoldItemsSettings):
    """``murgat gold import citevqa --items FILE --out FILE``."""

    command: ClassVar[str] = "gold import citevqa"


class GoldRextimeSettings(GoldItemsSettings):
    """``murgat gold import rextime --items FILE --out FILE``."""

    command: ClassVar[str] = "gold import rextime"
