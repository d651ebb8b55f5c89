"""murgat: check that what a multimodal model says about a video is grounded in the
exact video and audio segments it cites (MURGAT-S), and tools to produce better-grounded
answers."""

__version__ = "0.1.0"

#: the Python API (see :mod:`murgat.api`); loaded on first use so ``murgat`` starts fast
_API = ("score", "faithfulness", "reflect", "program", "generate", "sweep", "load_run", "RunResult", "RunError")


def __getattr__(name: str) -> object:
    if name in _API:
        from murgat import api

        return getattr(api, name)
    raise AttributeError(f"module 'murgat' has no attribute {name!r}")
