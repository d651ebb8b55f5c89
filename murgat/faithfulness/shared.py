"""What ``murgat faithfulness`` and ``murgat reflect`` build alike: the judge settings their
labelling options imply, the item selection and the percentage format (their options are
:mod:`murgat.faithfulness.settings`)."""

from __future__ import annotations

from typing import Any


def _config(args: Any, judge_spec: str, opts: dict[str, str]) -> Any:
    from media.evidence import EvidenceConfig
    from murgat.engine.options import Requests, build
    from murgat.pipeline.config import JudgeSpec, ScoreConfig

    js = JudgeSpec(spec=judge_spec, options=opts)
    gen = build(Requests, args).generate_config(args.effort)
    return ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js, generate=gen, evidence_text=args.evidence_text,
                       evidence=EvidenceConfig(fps=args.fps, max_frames=args.max_frames))


def _select(items: list[Any], args: Any) -> list[Any]:
    from murgat.engine.guards import select_items

    return select_items(items, args.ids, args.limit)


def _pct(iv: dict[str, Any] | None) -> str:
    from murgat.pipeline.report import fmt

    return fmt(iv, ".1%")
