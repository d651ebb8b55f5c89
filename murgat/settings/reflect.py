"""``ReflectSettings``: every setting of ``murgat reflect`` (``murgat.reflect(...)``); the labelling it shares
with ``murgat faithfulness`` is :class:`~murgat.settings.faithfulness.Labelling`.

Fields declared ``Deciding(...)`` are the folder's fingerprint; :data:`REFLECT_NAMES` says where each sits in the
``config.json`` of earlier versions."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o
from murgat.engine.fingerprint import Deciding, Where
from murgat.settings.faithfulness import Labelling

_OPT = {"metavar": "KEY=VALUE"}

#: reflect folders record every setting by its own name, the options parsed ("model_options", …) and --from
#: by its content ("from")
REFLECT_NAMES: dict[str, Where] = {"model_option": None, "detector_option": None, "judge_option": None, "from_": None}


class ReflectSettings(Labelling, o.ModelOption):
    """``murgat reflect DATA --model M --detector D --out OUT [options]`` (reflect always walks
    murgat's sentences: its steps are regenerated one by one, so there is no ``--segmentation``)."""

    command: ClassVar[str] = "reflect"

    data: str = Field(description="questions: murgat JSONL/CSV, videommmu:PATH, nextgqa:PATH or hf:PATH",
                      json_schema_extra={"positional": True})
    model: str = Deciding(description="provider:model that writes, regenerates and continues chains")
    detector: str = Deciding(description="provider:model of the step checker, or 'self'")
    detector_option: list[str] = Deciding(default_factory=list, description="detector option KEY=VALUE (repeatable)",
                                          spelled={"short": "-D", **_OPT})
    detector_prompt: Literal["detect", "label"] = Deciding(
        "detect", description="detect: question-aware, flags only errors that matter to the question; label: the "
                              "labelling prompt of 'murgat faithfulness'")
    judge: str | None = Deciding(None, description="provider:model that measures UPR before/after (independent labeller; "
                                                "default: the detector, with a warning)")
    k: int = Deciding(3, ge=1, le=20, description="regeneration attempts per unfaithful step")
    max_regenerations: int = Deciding(15, ge=0, description="regeneration attempts per item, all steps together (later "
                                                         "unfaithful steps are left as they are)")
    max_steps: int = Deciding(100, ge=1, description="steps checked per item, continuations included (later steps are "
                                                  "kept unchecked)")
    from_: str | None = Deciding(None, description="start from these responses instead of generating chains",
                                 spelled={"flag": "--from", "metavar": "RESPONSES"})
    mode: Literal["base", "cite"] = Deciding("base", description="chains with or without citations")
