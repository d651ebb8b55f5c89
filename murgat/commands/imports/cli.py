"""``murgat import inspect LOG.eval --out DIR``: evaluations run elsewhere as murgat inputs.

``import`` takes a source (only ``inspect`` today: inspect_ai logs) so that other harnesses' logs
can join without another top-level command. inspect_ai is imported only when the command runs.
"""

from __future__ import annotations

import argparse

from murgat.engine.options import add_command
from murgat.settings.imports import ImportInspectSettings, ImportLmmsSettings


def _cmd_import_inspect(args: ImportInspectSettings) -> int:
    from murgat.commands.imports.inspect_log import run_import

    return run_import(args.log, args.out)


def _cmd_import_lmms(args: ImportLmmsSettings) -> int:
    from murgat.commands.imports.lmms_log import run_import as run_lmms_import

    return run_lmms_import(args.samples, args.out)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("import", help="turn another harness's evaluation log into a murgat input (inspect_ai logs)")
    src = p.add_subparsers(dest="source", metavar="SOURCE", required=True)
    add_command(src, ImportInspectSettings, _cmd_import_inspect,
                help="an inspect_ai log's answered samples → DIR/responses.jsonl (then murgat score DIR)",
                description="Each answered sample whose metadata names its media (every sample of the "
                            "murgat_cited_qa task) becomes one murgat item; samples left out are listed with "
                            "the reason. Needs inspect_ai: pip install 'murgat[inspect]'.")
    add_command(src, ImportLmmsSettings, _cmd_import_lmms,
                help="an lmms-eval samples log of murgat's task → DIR/responses.jsonl (then murgat score DIR)",
                description="Each sample of murgat's lmms-eval task (python -m murgat.integrations.lmms_eval task) "
                            "becomes one murgat item per answer; an answer lmms-eval never got (a failed request) is "
                            "left out and named. Needs no lmms-eval.")
