"""murgat: check that what a multimodal model says about a video is grounded in the
exact video and audio segments it cites (MURGAT-S), and tools to produce better-grounded
answers.

The names below are the Python API (:mod:`murgat.api`): one function per run command, each taking
the fields of that command's settings model as keyword arguments. They are loaded on first use,
so ``import murgat`` (and ``murgat --help``) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = ["RunError", "RunResult", "__version__", "faithfulness", "generate", "load_run", "program", "reflect", "score",
           "sweep"]

if TYPE_CHECKING:
    from murgat.api import RunError, RunResult, faithfulness, generate, load_run, program, reflect, score, sweep


def __getattr__(name: str) -> object:
    if name in __all__:
        from murgat import api

        return getattr(api, name)
    raise AttributeError(f"module 'murgat' has no attribute {name!r}")
