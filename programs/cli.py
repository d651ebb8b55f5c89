"""``murgat program`` on the command line: the parser made from
:class:`~programs.settings.ProgramSettings`, and the call into the Python API."""

from __future__ import annotations

import argparse


def _cmd_program(args: argparse.Namespace) -> int:
    from murgat.api import execute
    from programs.settings import ProgramSettings

    return execute(ProgramSettings.from_args(args))


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from murgat.engine.options import add_settings
    from programs.settings import ProgramSettings

    p = sub.add_parser("program", help="plan-then-execute answers (find / describe / synthesize), grounded by construction")
    add_settings(p, ProgramSettings)
    p.set_defaults(func=_cmd_program)
