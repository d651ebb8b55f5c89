"""``CitationsSettings``: every setting of ``murgat citations`` (how murgat reads one text, no media)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o


class CitationsSettings(o.Settings, o.Json):
    """``murgat citations TEXT [--json] [--box-units U] [--box-order O] [--box-frame-size WxH]``."""

    command: ClassVar[str] = "citations"

    text: str = Field(description="response text, or - for stdin", json_schema_extra={"positional": True})
    # the box options of ``murgat score`` (same names, choices and defaults)
    box_units: Literal["norm", "1000", "px"] = Field(
        "norm", description="what a bare 'box' means: 0-1 fractions, 0-1000, or pixels (as score's option)")
    box_order: Literal["xyxy", "yxyx"] = Field("xyxy", description="number order of boxes")
    box_frame_size: str | None = Field(None, description="frame that pixel boxes refer to",
                                       json_schema_extra={"metavar": "WxH"})
