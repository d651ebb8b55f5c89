"""Deprecated: :mod:`murgat.score.config`."""

from murgat.score.config import (
    DEFAULT_MAX_CITATIONS_PER_FACT,
    DEFAULT_MAX_EVIDENCE_S,
    TRANSPORT_OPTIONS,
    JudgeSpec,
    ScoreConfig,
)

__all__ = ["DEFAULT_MAX_CITATIONS_PER_FACT", "DEFAULT_MAX_EVIDENCE_S", "TRANSPORT_OPTIONS", "JudgeSpec", "ScoreConfig"]
