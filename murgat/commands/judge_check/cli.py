"""``murgat judge check`` on the command line: the parser made from
:class:`~murgat.commands.judge_check.check.JudgeCheckSettings`, then :func:`~murgat.commands.judge_check.check.run_judge_check`."""

from __future__ import annotations

import argparse

from murgat.commands.judge_check.check import run_judge_check
from murgat.engine.options import add_command
from murgat.settings.judge_check import JudgeCheckSettings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("judge", help="check a judge: does it see and hear what murgat sends? (murgat judge check)")
    judge_sub = p.add_subparsers(dest="judge_command", metavar="SUBCOMMAND")

    def usage(_args: object) -> int:
        p.print_help()
        return 0

    p.set_defaults(func=usage)
    add_command(
        judge_sub, JudgeCheckSettings, run_judge_check,
        help="ask the judge a dozen questions about a clip murgat makes, whose answers murgat knows",
        description="Probes: a word said at a known time, numbers shown at known times; the judge must hear the "
                    "word, see the number, see only the cited moment and only the cited modality, and see frames in "
                    "order. Asked through the same path as a run (evidence builder, prompts, provider options, "
                    "endpoint, cache). Exit 1 when a probe fails.")
