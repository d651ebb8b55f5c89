"""``murgat generate`` and ``murgat sweep`` on the command line: parsers made from
:mod:`murgat.settings.generate`, run by the Python API."""

from __future__ import annotations

import argparse

from murgat import api
from murgat.settings.generate import GenerateSettings
from murgat.settings.sweep import SweepSettings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    api.add_run_command(sub, GenerateSettings, "generate (cited) answers with an omni/vision model")
    api.add_run_command(sub, SweepSettings, "generate and score at several reasoning efforts")
