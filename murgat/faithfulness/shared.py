"""What ``murgat faithfulness`` and ``murgat reflect`` build alike: the judge settings their
labelling options imply, the item selection and the percentage format (their options are
:mod:`murgat.faithfulness.settings`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from murgat.faithfulness.settings import FaithfulnessSettings, ReflectSettings


def _config(s: FaithfulnessSettings | ReflectSettings, judge_spec: str, opts: dict[str, str]) -> Any:
    from media.evidence import EvidenceConfig
    from murgat.pipeline.config import JudgeSpec, ScoreConfig

    js = JudgeSpec(spec=judge_spec, options=opts)
    gen = s.generate_config()
    return ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js, generate=gen, evidence_text=s.evidence_text,
                       evidence=EvidenceConfig(fps=s.fps, max_frames=s.max_frames))


def _select(items: list[Any], s: FaithfulnessSettings | ReflectSettings) -> list[Any]:
    from murgat.engine.guards import select_items

    return select_items(items, s.ids, s.limit)


def _pct(iv: dict[str, Any] | None) -> str:
    from murgat.pipeline.report import fmt

    return fmt(iv, ".1%")
