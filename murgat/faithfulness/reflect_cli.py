"""``murgat reflect`` on the command line: the parser made from
:class:`~murgat.faithfulness.settings.ReflectSettings`, and the call into the Python API."""

from __future__ import annotations

import argparse


def _cmd_reflect(args: argparse.Namespace) -> int:
    from murgat.api import execute
    from murgat.faithfulness.settings import ReflectSettings

    return execute(ReflectSettings.from_args(args))


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from murgat.engine.options import add_settings
    from murgat.faithfulness.settings import ReflectSettings

    p = sub.add_parser("reflect", help="self-reflection: regenerate the first unfaithful perception step (≤ K tries), "
                                       "continue, repeat (Algorithm 2)")
    add_settings(p, ReflectSettings)
    p.set_defaults(func=_cmd_reflect)
