"""``GenerateSettings``: every setting of ``murgat generate`` (``murgat.generate(...)``), and :class:`Generating`,
what it shares with ``murgat sweep`` (:mod:`murgat.settings.sweep`). The answering model writes whole
reasoning chains, so its requests have the generating role's defaults (4,096 tokens, 300 s)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o
from murgat.engine.fingerprint import Deciding


class Generating(o.Settings, o.ModelOption, o.Frames, o.Place, o.Folder, o.Pace, o.Output, o.GenerateRole,
                  o.Requests, o.Selection, o.ResponseCap, o.RunOn):
    """What ``generate`` and ``sweep`` share: the questions, the model and how it sees the video."""

    data: str = Field(description="questions: murgat JSONL/CSV, videommmu:PATH, nextgqa:PATH or hf:PATH",
                      json_schema_extra={"positional": True})
    model: str = Deciding(description="provider:model that answers, e.g. gemini:gemini-2.5-flash")
    mode: Literal["base", "cite", "posthoc"] = Deciding(
        "cite", description="base (plain reasoning), cite (cited reasoning) or posthoc (add citations to --base answers)")
    base: str | None = Deciding(None, description="posthoc: the base-mode responses file to annotate")
    max_frames: int = Deciding(64, ge=1, description="most frames of the whole video sent to the answering model")


class GenerateSettings(Generating, o.Effort):
    """``murgat generate DATA --model M --out OUT [options]``: ``OUT`` is a run folder whose
    ``responses.jsonl`` is the input of ``murgat score`` (a ``FILE.jsonl`` ``--out``, the spelling of
    earlier versions, keeps the rest of the folder in ``FILE.run/``)."""

    command: ClassVar[str] = "generate"
