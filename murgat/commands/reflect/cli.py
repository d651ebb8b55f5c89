"""``murgat reflect`` on the command line: the parser made from
:class:`~murgat.settings.faithfulness.ReflectSettings`, run by the Python API."""

from __future__ import annotations

import argparse

from murgat import api
from murgat.settings.reflect import ReflectSettings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    api.add_run_command(sub, ReflectSettings, "self-reflection: regenerate the first unfaithful perception step (≤ K "
                                              "tries), continue, repeat (Algorithm 2)")
