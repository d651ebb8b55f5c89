"""What ``murgat faithfulness`` and ``murgat reflect`` declare and build alike: the labelling options,
the judge settings they imply, the item selection and the percentage format."""

from __future__ import annotations

import argparse
from typing import Any

from murgat.cliutil import add_model_options


def _common(p: argparse.ArgumentParser, *, segmentation: bool = True) -> None:
    """``segmentation=False``: reflect always walks murgat's sentences (its steps are regenerated one by one)."""
    from murgat.engine import options

    options.add(p, options.Place)
    options.add(p, options.Selection)
    options.add(p, options.Folder, only=("print_json", "quiet"))
    p.add_argument("--variant", choices=["vanilla", "grounding", "grounding+rationale"], default="grounding",
                   help="labelling prompt: grounding = the judge first describes the media (cached per media)")
    p.add_argument("--granularity", choices=["chain", "step"], default="chain",
                   help="one labelling call per chain (cheap) or per step with its own evidence (precise)")
    if segmentation:
        p.add_argument("--segmentation", choices=["sentences", "judge"], default="sentences",
                       help="steps = murgat's citation-aware sentences (deterministic) or the judge's split")
    p.add_argument("--fps", type=float, default=1.0)
    p.add_argument("--max-frames", type=int, default=16, help="frames sampled across the whole video when a step cites nothing")
    p.add_argument("--evidence-text", action="store_true", help="also send ASR/OCR text with the media")
    add_model_options(p)
    p.add_argument("--bootstrap", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)


def _config(args: argparse.Namespace, judge_spec: str, opts: dict[str, str]) -> Any:
    from media.evidence import EvidenceConfig
    from murgat.engine.options import Requests, build
    from murgat.pipeline.config import JudgeSpec, ScoreConfig

    js = JudgeSpec(spec=judge_spec, options=opts)
    gen = build(Requests, args).generate_config()
    return ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js, generate=gen, evidence_text=args.evidence_text,
                       evidence=EvidenceConfig(fps=args.fps, max_frames=args.max_frames))


def _select(items: list[Any], args: argparse.Namespace) -> list[Any]:
    from murgat.cliutil import select_items

    return select_items(items, args.ids, args.limit)


def _pct(iv: dict[str, Any] | None) -> str:
    from murgat.pipeline.report import fmt

    return fmt(iv, ".1%")
