"""Deprecated: the MURGAT-S stages are :mod:`murgat.score.stages`; the call pool, item context,
evidence parts, sentences and the entailment question are :mod:`murgat.judging`."""

from __future__ import annotations

from typing import Any

from murgat.judges.evidence import evidence_parts
from murgat.judging import entail as _entail
from murgat.judging.context import ItemContext
from murgat.judging.pool import CallPool
from murgat.judging.sentences import sentences_of
from murgat.schema import AtomicFact, JudgeCall, Verdict
from murgat.score import stages as _stages
from murgat.score.stages import StageJudges

#: the score stages' judges (the name of earlier versions)
Judges = StageJudges


async def ask_entailment(pool: CallPool, judge: Any, fact: AtomicFact, subset: frozenset[int], cfg: Any,
                         ctx: ItemContext, **kw: Any) -> tuple[Verdict, JudgeCall]:
    """The signature of earlier versions (the prompt variant read from ``cfg``): see
    :func:`murgat.judging.entail.ask_entailment`."""
    kw.setdefault("variant", getattr(cfg, "entail_variant", "simple"))
    return await _entail.ask_entailment(pool, judge, fact, subset, ctx, **kw)


def __getattr__(name: str) -> Any:
    """Every other name of the stages module of earlier versions: :mod:`murgat.score.stages`."""
    return getattr(_stages, name)


__all__ = ["CallPool", "ItemContext", "Judges", "ask_entailment", "evidence_parts", "sentences_of"]
