"""The ``murgat`` command line.

Each command registers itself (its ``cli.py``'s ``register``); every command's parser is made the one
way, from its settings model (:func:`murgat.engine.options.add_command`: flags, help, defaults,
choices and bounds are the model's fields), so this module only wires them together. Output meant for
programs goes to stdout as one JSON document (``--json``); tables and progress go to
stderr/stdout via rich for people.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import NoReturn

from murgat import __version__
from murgat.core.jsonl import ResultsWriteError
from murgat.core.terminal import for_terminal
from murgat.engine.errors import CommandError
from murgat.media import interrupt, safewrite, stages

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="murgat", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="murgat checks whether what a multimodal model says about a video is grounded in the exact video "
                    "and audio it cites.\nIt scores cited answers with MURGAT-S (coverage × attribution F1), generates "
                    "and program-grounds answers, checks step faithfulness and calibrates judges against humans.",
        epilog="examples:\n"
               "  murgat validate responses.jsonl --media-root videos/\n"
               "  murgat score responses.jsonl --media-root videos/ --judge gemini:gemini-2.5-flash --out runs/flash\n"
               "  murgat view runs/flash runs/qwen          # side by side in the browser\n\n"
               "murgat COMMAND --help lists every option of a command with its default.")
    parser.add_argument("--version", action="version", version=f"murgat {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for mod in ("murgat.commands.citations.cli", "murgat.commands.validate.cli", "murgat.commands.media.cli",
                "murgat.commands.score.cli", "murgat.commands.summarize.cli", "murgat.commands.generate.cli",
                "murgat.programs.cli", "murgat.commands.faithfulness.cli", "murgat.commands.reflect.cli",
                "murgat.commands.calibrate.cli", "murgat.commands.view.cli", "murgat.commands.gold.cli",
                "murgat.commands.ground.cli", "murgat.commands.export.cli", "murgat.commands.annotate.cli",
                "murgat.commands.imports.cli", "murgat.commands.judge_check.cli", "murgat.commands.diff.cli"):
        try:
            module = __import__(mod, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name and (exc.name == mod or mod.startswith(exc.name + ".")):
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:  # building the parser imports every command's settings: a Ctrl-C there is a Ctrl-C, not a traceback
        parser = build_parser()
    except KeyboardInterrupt:
        print("\ninterrupted while starting: nothing was done", file=sys.stderr)
        return 130
    try:
        args = parser.parse_args(argv)
    except SystemExit:  # a usage error or --help: no "starting" notice after it (murgat.__main__)
        stages.cancel_notice()
        raise
    if not getattr(args, "func", None):
        stages.cancel_notice()
        parser.print_help()
        return 0
    # stage lines (models loading, a file transcribed, the probes) unless the output is to stay quiet;
    # off again when the command returns (main may be called in process, before the Python API)
    if not any(getattr(args, k, False) for k in ("quiet", "json", "print_json")):  # the settings call --json print_json
        stages.enable()
    else:
        stages.cancel_notice()
    # how every command ends on a refusal or a stop, in one place: the error's one line and its exit status
    try:
        with interrupt.sigint_raises():  # a Ctrl-C takes effect wherever the main thread is (murgat.media.interrupt)
            return int(args.func(args) or 0)
    except CommandError as exc:  # bad input or settings (2), a replay miss (3), the run folder not writable (5)
        print(for_terminal(f"error: {exc.message}"), file=sys.stderr)
        return exc.code
    except ResultsWriteError as exc:  # a write of a run folder outside any command's run (none should be left)
        print(for_terminal(f"error: {exc}"), file=sys.stderr)
        return 5
    except BrokenPipeError:  # `murgat … --json | head`: the reader left; no traceback
        with contextlib.suppress(OSError):
            os.dup2(safewrite.devnull_fd(), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        # every record already written is durable (appended and fsync'd): say so instead of a traceback
        print("\ninterrupted: what was written is kept; run the same command again to resume", file=sys.stderr)
        return 130
    finally:
        stages.enable(None)


def _join_threads(within_s: float) -> None:
    """Wait for the non-daemon threads, at most ``within_s`` seconds in all: after a Ctrl-C, a thread
    finishing a write finishes, one deep in a model's C code is left to ``os._exit``."""
    deadline = time.monotonic() + within_s
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))


def run() -> NoReturn:
    """The ``murgat`` program: :func:`main`, then a quick exit.

    The interpreter's teardown (freeing every module, pydantic schema and decoder) takes
    ~0.1 s after a run; nothing of ours needs it. So after ``main`` returns this does what
    an orderly exit does that matters — waits for non-daemon threads and runs the ``atexit``
    handlers (caches close, Ray shuts down, logging flushes) — flushes stdout and stderr and
    leaves with ``os._exit``. An exception still takes the normal path (traceback, exit 1).
    The full teardown is kept under a profiler or tracer (cProfile, coverage write their
    reports then) and with ``MURGAT_FULL_EXIT=1`` (leak checkers). Tests call :func:`main`,
    which returns.
    """
    code = main()
    shutdown = getattr(threading, "_shutdown", None)
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    watched = sys.getprofile() is not None or sys.gettrace() is not None  # cProfile, coverage: they report at exit
    if os.environ.get("MURGAT_FULL_EXIT") or watched or shutdown is None or run_exitfuncs is None:
        raise SystemExit(code)
    if code == 130:  # a Ctrl-C: work still running in a thread (a transcription) must not hold the exit,
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # and a second Ctrl-C while leaving is no traceback
        _join_threads(interrupt.GRACE_S)
    else:
        shutdown()  # what the interpreter does first at exit: join non-daemon threads, stop executors
    run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 120  # the status Python itself exits with when stdout cannot be flushed
    os._exit(code)
