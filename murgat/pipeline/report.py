"""Deprecated: :mod:`murgat.score.report`."""

from murgat.score.report import *  # noqa: F403
