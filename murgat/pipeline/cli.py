"""Deprecated: :mod:`murgat.score.cli`."""

from murgat.score.cli import register

__all__ = ["register"]
