"""``murgat program`` on the command line: the parser made from
:class:`~programs.settings.ProgramSettings`, run by the Python API."""

from __future__ import annotations

import argparse

from murgat import api
from programs.settings import ProgramSettings


def register(sub: argparse._SubParsersAction) -> None:
    api.add_run_command(sub, ProgramSettings, "plan-then-execute answers (find / describe / synthesize), grounded by "
                                              "construction")
