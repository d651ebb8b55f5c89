"""murgat: check that what a multimodal model says about a video is grounded in the
exact video and audio segments it cites (MURGAT-S), and tools to produce better-grounded
answers."""

import sys
import types

__version__ = "0.1.0"

#: the Python API (see :mod:`murgat.api`); loaded on first use so ``murgat`` starts fast
_API = ("score", "faithfulness", "reflect", "program", "generate", "sweep", "load_run", "RunResult", "RunError")


def __getattr__(name: str) -> object:
    if name in _API:
        from murgat import api

        return getattr(api, name)
    raise AttributeError(f"module 'murgat' has no attribute {name!r}")


class _CommandPackage(types.ModuleType):
    """A subpackage named as an API function (``murgat.faithfulness``), callable as that function."""

    def __call__(self, *args: object, **kwargs: object) -> object:
        from murgat import api

        return getattr(api, self.__name__.rpartition(".")[2])(*args, **kwargs)


class _Murgat(types.ModuleType):
    """The ``murgat`` package. Importing a subpackage makes it an attribute of its parent, and
    ``murgat.faithfulness`` is both a subpackage and the API function ``murgat.faithfulness(...)``:
    once anything imported the subpackage (the first call does), the attribute was the module and
    every later call failed ("'module' object is not callable"). The subpackage stays a package
    (``murgat.faithfulness.settings`` and the like) and is made callable as the function."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _API and isinstance(value, types.ModuleType) and type(value) is types.ModuleType:
            value.__class__ = _CommandPackage
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Murgat
