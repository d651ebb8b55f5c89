"""Scale-out on Ray (optional extra ``murgat[ray]``): ``--run-on ray`` for ``score`` and the
other item-by-item commands.

Nothing in the core imports Ray: this package imports it only when a command runs with
``--run-on ray``. What is shared and how (see :mod:`murgat.scaleout.driver` and
:mod:`murgat.scaleout.services`): the driver alone writes the run folder; one cache service
and one limit service, both on the driver's node, serve every worker; workers do the media
work (probe, decode, evidence, ASR/OCR/sound tags) and the judge calls for one media file's
items at a time and stream results back.
"""

from __future__ import annotations

import argparse


class _OldExecutorSpelling(argparse.Action):
    """``--executor local|ray`` was where-to-run in some commands; ``--executor`` now names only the
    program's executing model, so the old spelling gets a one-line hint instead of a second meaning."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        parser.error(f"--executor {values}: where to run is --run-on local|ray; "
                     "--executor names the model that executes programs in 'murgat program'")


def add_executor_options(p: argparse.ArgumentParser, *, executor_flag: bool = True) -> None:
    """``--run-on local|ray`` and the Ray settings, the same in every command. ``executor_flag``:
    also catch the old ``--run-on ray`` spelling (not in ``program``, whose ``--executor`` is a model)."""
    g = p.add_argument_group("scale-out (Ray)")
    g.add_argument("--run-on", dest="run_on", choices=("local", "ray"), default="local",
                   help="local: this process; ray: Ray tasks grouped by media file (pip install 'murgat[ray]')")
    if executor_flag:
        g.add_argument("--executor", action=_OldExecutorSpelling, help=argparse.SUPPRESS)
    g.add_argument("--ray-address", default=None,
                   help="an existing cluster (auto, ray://host:10001); default: start a local Ray instance")
    g.add_argument("--ray-cpus", type=int, default=None, help="CPUs of a local Ray instance (default: all)")
    g.add_argument("--ray-group-size", type=int, default=32,
                   help="most items of one media file in one task (a file with more questions is split)")
    g.add_argument("--ray-task-cpus", type=float, default=None,
                   help="CPUs each task reserves (default: as many as ASR threads when the run transcribes, else 1)")
    g.add_argument("--ray-task-retries", type=int, default=3,
                   help="times a group whose worker died is resubmitted with the items not yet returned")
