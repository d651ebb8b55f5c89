"""``murgat program`` on the command line: the parser made from
:class:`~murgat.settings.program.ProgramSettings`, run by the Python API."""

from __future__ import annotations

import argparse

from murgat import api
from murgat.settings.program import ProgramSettings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    api.add_run_command(sub, ProgramSettings, "plan-then-execute answers (find / describe / synthesize), grounded by "
                                              "construction")
