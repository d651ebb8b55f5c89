"""``murgat score`` on the command line: the parser made from
:class:`~murgat.settings.score.ScoreSettings`, and the call into the Python API."""

from __future__ import annotations

import argparse

from murgat import api
from murgat.settings.score import ScoreSettings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    api.add_run_command(sub, ScoreSettings, "score responses with MURGAT-S")
