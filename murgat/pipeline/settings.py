"""Deprecated: :mod:`murgat.score.settings`."""

from murgat.score.settings import ScoreSettings

__all__ = ["ScoreSettings"]
