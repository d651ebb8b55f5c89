"""``DiffSettings``: every setting of ``murgat diff`` (what differs between two run folders)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

import murgat.engine.options as o


class DiffSettings(o.Settings, o.Json):
    """``murgat diff RUN_A RUN_B [--json]``."""

    command: ClassVar[str] = "diff"

    run_a: str = Field(description="a run folder", json_schema_extra={"positional": True})
    run_b: str = Field(description="another run folder", json_schema_extra={"positional": True})
