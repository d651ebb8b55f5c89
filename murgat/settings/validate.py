"""``ValidateSettings``: every setting of ``murgat validate`` (citations against the media's stream durations,
no judge)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

import murgat.engine.options as o
from murgat.core.inputs import MAX_RESPONSE_CHARS


class ValidateSettings(o.Settings, o.Place, o.Json):
    """``murgat validate INPUT [--media-root DIR] [--strict] [--ids A,B] [--json]``."""

    command: ClassVar[str] = "validate"

    input: str = Field(description="JSONL (murgat) or JSON list (authors' format)",
                       json_schema_extra={"positional": True})
    strict: bool = Field(False, description="exit 1 when any item has a problem or a warning")
    ids: str | None = Field(None, description="comma-separated ids to check (default: every item)")
    max_response_chars: int = Field(MAX_RESPONSE_CHARS, ge=1, description="a longer response is an input error, as "
                                                                           "the run commands refuse it")
