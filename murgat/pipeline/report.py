"""Deprecated: :mod:`murgat.score.report`."""

from typing import Any

from murgat.score import report as _moved


def __getattr__(name: str) -> Any:
    return getattr(_moved, name)
