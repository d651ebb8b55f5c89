"""``murgat generate`` and ``murgat sweep`` on the command line: parsers made from
:mod:`murgat.generation.settings`, and the call into the Python API."""

from __future__ import annotations

import argparse


def _cmd_generate(args: argparse.Namespace) -> int:
    from murgat.api import execute
    from murgat.generation.settings import GenerateSettings

    return execute(GenerateSettings.from_args(args))


def _cmd_sweep(args: argparse.Namespace) -> int:
    from murgat.api import execute
    from murgat.generation.settings import SweepSettings

    return execute(SweepSettings.from_args(args))


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from murgat.engine.options import add_settings
    from murgat.generation.settings import GenerateSettings, SweepSettings

    p = sub.add_parser("generate", help="generate (cited) answers with an omni/vision model")
    add_settings(p, GenerateSettings)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser("sweep", help="generate and score at several reasoning efforts")
    add_settings(p, SweepSettings)
    p.set_defaults(func=_cmd_sweep)
