"""The ``murgat`` command line.

Subcommands register themselves through small ``add_*`` functions so each feature's
arguments live next to its code; this module only wires them together. Output meant for
programs goes to stdout as one JSON document (``--json``); tables and progress go to
stderr/stdout via rich for people.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NoReturn

from murgat import __version__
from murgat.core.jsonl import ResultsWriteError
from murgat.core.terminal import for_terminal
from murgat.engine.errors import CommandError
from murgat.engine.options import number_parser

Handler = Callable[[argparse.Namespace], int]


#: help for options of the commands without a settings model (those of score, faithfulness, reflect,
#: program, generate and sweep live in their fields), written once; an option keeps its own help when it has one
COMMON_HELP: dict[str, str] = {
    "--json": "print one JSON document instead of tables",
    "--seed": "seed of the bootstrap resampling",
    "--bootstrap": "bootstrap resamples for confidence intervals",
    "--fps": "frames per second sampled inside visual segments",
    "--max-frames": "most frames sent for one visual segment (or the whole video)",
    "--cluster-by-video": "bootstrap resamples whole videos (several questions per video)",
    "--similarity": "fact matching by word overlap (lexical) or MiniLM embeddings",
    "--language": "spoken language code for ASR",
    "--backend": "ASR backend: faster-whisper, or whisperx (optional extra)",
    "file": "a media file (video or audio)",
    "runs": "run folders (the first is the reference)",
}


#: counts of the commands without a settings model (the others are checked by their fields): the
#: smallest value that makes sense; argparse exits 2 below it
COUNT_MINIMUM: dict[str, int] = {"--bootstrap": 1, "--seed": 0, "--max-frames": 1}


#: upper bounds where a larger value only burns time or memory (e.g. --bootstrap 10**9)
COUNT_MAXIMUM: dict[str, int] = {"--bootstrap": 100_000}
#: options that are shares (0–1)
SHARE_OPTIONS = frozenset({"--attributed-threshold", "--recall-threshold"})


def _fill_help(parser: argparse.ArgumentParser) -> None:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sp in a.choices.values():
                _fill_help(sp)
            continue
        flag = a.option_strings[-1] if a.option_strings else ""
        if flag in COUNT_MINIMUM and a.type is int:
            a.type = number_parser(flag.lstrip("-").replace("-", "_"), int, low=COUNT_MINIMUM[flag],
                                   high=COUNT_MAXIMUM.get(flag))
        elif flag and a.type is float:
            share = flag in SHARE_OPTIONS
            a.type = number_parser("number", float, low=0 if share else None, high=1 if share else None)
        if a.help is None and not isinstance(a, argparse._HelpAction):
            key = a.option_strings[0] if a.option_strings else a.dest
            a.help = COMMON_HELP.get(key)
        # a --no-… flag (store_false) defaults to True: "(default: True)" would read as "off by default"
        shown = not (a.default is None or a.default is False or a.default is argparse.SUPPRESS or a.default == []
                     or isinstance(a, argparse._StoreFalseAction))
        if a.help and shown and "%(default)" not in a.help \
                and "default" not in a.help and a.option_strings:
            a.help += " (default: %(default)s)"


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
    _fill_help(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    # how every command ends on a refusal or a stop, in one place: the error's one line and its exit status
    try:
        return int(args.func(args) or 0)
    except CommandError as exc:  # bad input or settings (2), a replay miss (3), the run folder not writable (5)
        print(for_terminal(f"error: {exc.message}"), file=sys.stderr)
        return exc.code
    except ResultsWriteError as exc:  # a write of a run folder outside any command's run (none should be left)
        print(for_terminal(f"error: {exc}"), file=sys.stderr)
        return 5
    except BrokenPipeError:  # `murgat … --json | head`: the reader left; no traceback
        from murgat.media import safewrite

        with contextlib.suppress(OSError):
            os.dup2(safewrite.devnull_fd(), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        # every record already written is durable (appended and fsync'd): say so instead of a traceback
        print("\ninterrupted: what was written is kept; run the same command again to resume", file=sys.stderr)
        return 130


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
    shutdown()  # what the interpreter does first at exit: join non-daemon threads, stop executors
    run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 120  # the status Python itself exits with when stdout cannot be flushed
    os._exit(code)
