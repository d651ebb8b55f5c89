"""Stage lines: one line on stderr when a phase that can take more than a second begins (loading the
speech, text or sound model, transcribing a file, the judge probes), so a cold run is never silent.

Off unless a command line turns it on (:func:`enable`; ``murgat`` does unless ``--quiet`` or
``--json``), so the Python API and the tests print nothing. Before that, while the program still
imports, :func:`notice_start` says ``murgat COMMAND: starting`` if the start takes over a second. The lines are plain text, written
whether or not stderr is a terminal (a log file shows the same stages), each once per process.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence

_sink: Callable[[str], None] | None = None
_said: set[str] = set()
_lock = threading.Lock()
_notice: threading.Timer | None = None

#: a command whose first stage line has not come this long after the process started says it is starting
#: (a cold start spends seconds importing numpy, pydantic, the judges before a command can say anything)
START_NOTICE_S = 1.0
#: what keeps a command line quiet (:func:`murgat.cli.main` reads them the same way from the settings)
_QUIET_FLAGS = ("--quiet", "-q", "--json", "--help", "-h", "--version")


def _to_stderr(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed: a stage line is never worth a failure
        pass


def enable(sink: Callable[[str], None] | None = _to_stderr) -> None:
    """Turn the stage lines on (to ``sink``; stderr by default), or off with ``None``."""
    global _sink
    if sink is None:
        cancel_notice()
    with _lock:
        _sink = sink
        _said.clear()


def notice_start(argv: Sequence[str], after_s: float = START_NOTICE_S) -> None:
    """At the very start of the ``murgat`` program, before its imports: unless the command line asks
    for quiet (``--quiet``, ``--json``) or help, ``murgat COMMAND: starting`` goes to stderr if no
    stage line came within ``after_s`` seconds, so a cold start that spends seconds importing is not
    silent either; a quick command never shows it. The first stage line (or the end) cancels it."""
    global _notice
    command = next((a for a in argv[1:2] if not a.startswith("-")), None)
    if command is None or any(a in _QUIET_FLAGS or a.startswith("--json") for a in argv[1:]):
        return
    timer = threading.Timer(after_s, _to_stderr, args=(f"murgat {command}: starting",))
    timer.daemon = True
    with _lock:
        _notice = timer
    timer.start()


def cancel_notice() -> None:
    """No ``starting`` notice after all (the command line asked for quiet, or the program is ending)."""
    global _notice
    with _lock:
        timer, _notice = _notice, None
    if timer is not None:
        timer.cancel()


def stage(line: str, *, once: str | None = None) -> None:
    """Announce a phase. ``once``: a key said at most once per process (a model loads once)."""
    if _notice is not None:
        cancel_notice()
    with _lock:
        sink = _sink
        if sink is None or (once is not None and once in _said):
            return
        if once is not None:
            _said.add(once)
    sink(line)
