"""Deprecated: :mod:`murgat.score.command` (``build_config`` is :func:`~murgat.score.command.score_config`)."""

from murgat.score.command import ScoreCommand, score_config, score_fingerprint
from murgat.score.dryrun import DryRunJudge

build_config = score_config

__all__ = ["DryRunJudge", "ScoreCommand", "build_config", "score_config", "score_fingerprint"]
