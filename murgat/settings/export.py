"""``ExportSettings``: every setting of ``murgat export`` (a score run's results as a flat table). The choices
are :data:`murgat.core.export.FORMATS` and :data:`~murgat.core.export.LEVELS` (a test holds them equal)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o


class ExportSettings(o.Settings):
    """``murgat export RUN [--format F] [--level L] [--out FILE]``."""

    command: ClassVar[str] = "export"

    run: str = Field(description="a murgat score run folder", json_schema_extra={"positional": True})
    format: Literal["csv", "parquet", "jsonl"] = Field(
        "csv", description="csv and jsonl need nothing extra; parquet needs pandas and pyarrow")
    level: Literal["item", "sentence", "fact", "modality"] = Field(
        "item", description="one row per item (scores, answer), per sentence (verifiability, citations) or per fact "
                            "(verdict, recall, precision), every one carrying the item id; or modality: the facts' "
                            "precision, recall and F1 per modality of their citations (audio, visual, both, none, all)")
    out: str | None = Field(None, description="file to write (default: RUN/export_LEVEL.FORMAT)")
