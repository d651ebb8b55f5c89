"""``ImportInspectSettings``: every setting of ``murgat import inspect`` (an inspect_ai log → murgat input)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

import murgat.engine.options as o


class ImportInspectSettings(o.Settings):
    """``murgat import inspect LOG --out DIR``."""

    command: ClassVar[str] = "import inspect"

    log: str = Field(description="an inspect_ai log file (.eval or .json)", json_schema_extra={"positional": True})
    out: str = Field(description="folder for responses.jsonl and inspect.json (where it came from)")


class ImportLmmsSettings(o.Settings):
    """``murgat import lmms-eval SAMPLES --out DIR``."""

    command: ClassVar[str] = "import lmms-eval"

    samples: str = Field(description="an lmms-eval samples log (--log_samples: OUT/MODEL/DATE_samples_TASK.jsonl) of "
                         "murgat's task", json_schema_extra={"positional": True})
    out: str = Field(description="folder for responses.jsonl and lmms_eval.json (where it came from)")
