"""``murgat faithfulness`` on the command line: the parser made from
:class:`~murgat.faithfulness.settings.FaithfulnessSettings`, and the call into the Python API."""

from __future__ import annotations

import argparse


def _cmd_faithfulness(args: argparse.Namespace) -> int:
    from murgat.api import execute
    from murgat.faithfulness.settings import FaithfulnessSettings

    return execute(FaithfulnessSettings.from_args(args))


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from murgat.engine.options import add_settings
    from murgat.faithfulness.settings import FaithfulnessSettings

    p = sub.add_parser("faithfulness", help="label reasoning steps as perception/reasoning and check perception steps "
                                            "against the media (UPR)")
    add_settings(p, FaithfulnessSettings)
    p.set_defaults(func=_cmd_faithfulness)
