"""``murgat faithfulness`` on the command line: the parser made from
:class:`~murgat.settings.faithfulness.FaithfulnessSettings`, run by the Python API."""

from __future__ import annotations

import argparse

from murgat import api
from murgat.settings.faithfulness import FaithfulnessSettings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    api.add_run_command(sub, FaithfulnessSettings, "label reasoning steps as perception/reasoning and check perception "
                                                   "steps against the media (UPR)")
