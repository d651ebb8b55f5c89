"""``murgat diff RUN_A RUN_B``: what differs between two run folders (:mod:`murgat.engine.differences`).

Exit status as ``diff(1)``: 0 nothing differs, 1 something does, 2 a folder is not a run folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from murgat.engine.differences import print_diff, run_differences
from murgat.engine.options import add_command
from murgat.settings.diff import DiffSettings


def _cmd_diff(args: DiffSettings) -> int:
    for path in (args.run_a, args.run_b):
        if not (Path(path) / "config.json").exists():
            print(f"error: {path} is not a run folder (no config.json)", file=sys.stderr)
            return 2
    diff = run_differences(args.run_a, args.run_b)
    if args.print_json:
        print(diff.model_dump_json(indent=2))
    else:
        print_diff(diff)
    return 0 if diff.same else 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_command(sub, DiffSettings, _cmd_diff,
                help="what differs between two runs: settings, prompts, judges, probes, versions, verdicts")
