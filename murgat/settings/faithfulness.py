"""``FaithfulnessSettings``: every setting of ``murgat faithfulness`` (``murgat.faithfulness(...)``), and
:class:`Labelling`, what it shares with ``murgat reflect`` (:mod:`murgat.settings.reflect`): both label reasoning
steps against the media with the same prompts and evidence, and their models write or read whole
reasoning chains, so requests have the reasoning role's defaults (2,048 tokens, 300 s).

Fields declared ``Deciding(...)`` are the folder's fingerprint; :data:`FAITHFULNESS_NAMES` says where each sits
in the ``config.json`` of earlier versions."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o
from murgat.engine.fingerprint import Deciding, Late, Where

_OPT = {"metavar": "KEY=VALUE"}

#: faithfulness folders record the evidence and request settings as the judging configuration has them, the
#: judge's options parsed ("options"); --evidence-text was not recorded before (it decides the labels)
FAITHFULNESS_NAMES: dict[str, Where] = {**o.JUDGING_NAMES, "judge_option": None, "evidence_text": Late("evidence_text")}


class Labelling(o.Settings, o.JudgeOption, o.Frames, o.EvidenceText, o.Place, o.Folder, o.Pace, o.Output,
                 o.ChainRole, o.Requests, o.Effort, o.Selection, o.ResponseCap, o.Stats, o.GroupBy, o.Probes,
                 o.RunOn):
    """What ``faithfulness`` and ``reflect`` share: how steps are labelled and what the labeller sees."""

    variant: Literal["vanilla", "grounding", "grounding+rationale"] = Deciding(
        "grounding", description="labelling prompt: grounding = the judge first describes the media (cached per media)")
    granularity: Literal["chain", "step"] = Deciding(
        "chain", description="one labelling call per chain (cheap) or per step with its own evidence (precise)")
    max_frames: int = Deciding(16, ge=1, description="frames sampled across the whole video when a step cites nothing")


class FaithfulnessSettings(Labelling, o.Undetermined):
    """``murgat faithfulness INPUT --judge J --out OUT [options]``."""

    command: ClassVar[str] = "faithfulness"

    input: str = Field(description="murgat JSONL or the authors' JSON list (responses with reasoning chains)",
                       json_schema_extra={"positional": True})
    judge: str = Deciding(description="provider:model of the labelling judge")
    segmentation: Literal["sentences", "judge"] = Deciding(
        "sentences", description="steps = murgat's citation-aware sentences (deterministic) or the judge's split")
