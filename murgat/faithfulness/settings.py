"""``FaithfulnessSettings`` and ``ReflectSettings``: every setting of ``murgat faithfulness`` and
``murgat reflect`` (``murgat.faithfulness(...)``, ``murgat.reflect(...)``). Both label reasoning
steps against the media with the same prompts and evidence, and their models write or read whole
reasoning chains, so requests have the reasoning role's defaults (2,048 tokens, 300 s).

Fields declared ``Deciding(...)`` are the folder's fingerprint; :data:`FAITHFULNESS_NAMES` and
:data:`REFLECT_NAMES` say where each sits in the ``config.json`` of earlier versions."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o
from murgat.engine.fingerprint import Deciding, Late, Where

_OPT = {"metavar": "KEY=VALUE"}

#: faithfulness folders record the evidence and request settings as the judging configuration has them, the
#: judge's options parsed ("options"); --evidence-text was not recorded before (it decides the labels)
FAITHFULNESS_NAMES: dict[str, Where] = {**o.JUDGING_NAMES, "judge_option": None, "evidence_text": Late("evidence_text")}
#: reflect folders record every setting by its own name, the options parsed ("model_options", …) and --from
#: by its content ("from")
REFLECT_NAMES: dict[str, Where] = {"model_option": None, "detector_option": None, "judge_option": None, "from_": None}


class _Labelling(o.Settings, o.JudgeOption, o.Frames, o.EvidenceText, o.Place, o.Folder, o.Pace, o.Output,
                 o.ChainRole, o.Requests, o.Effort, o.Selection, o.ResponseCap, o.Stats, o.GroupBy, o.Probes,
                 o.RunOn):
    """What ``faithfulness`` and ``reflect`` share: how steps are labelled and what the labeller sees."""

    variant: Literal["vanilla", "grounding", "grounding+rationale"] = Deciding(
        "grounding", description="labelling prompt: grounding = the judge first describes the media (cached per media)")
    granularity: Literal["chain", "step"] = Deciding(
        "chain", description="one labelling call per chain (cheap) or per step with its own evidence (precise)")
    max_frames: int = Deciding(16, ge=1, description="frames sampled across the whole video when a step cites nothing")


class FaithfulnessSettings(_Labelling, o.Undetermined):
    """``murgat faithfulness INPUT --judge J --out OUT [options]``."""

    command: ClassVar[str] = "faithfulness"

    input: str = Field(description="murgat JSONL or the authors' JSON list (responses with reasoning chains)",
                       json_schema_extra={"positional": True})
    judge: str = Deciding(description="provider:model of the labelling judge")
    segmentation: Literal["sentences", "judge"] = Deciding(
        "sentences", description="steps = murgat's citation-aware sentences (deterministic) or the judge's split")


class ReflectSettings(_Labelling, o.ModelOption):
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
