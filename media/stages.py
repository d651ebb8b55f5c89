"""Stage lines: one line on stderr when a phase that can take more than a second begins (loading the
speech, text or sound model, transcribing a file, the judge probes), so a cold run is never silent.

Off unless a command line turns it on (:func:`enable`; ``murgat`` does unless ``--quiet`` or
``--json``), so the Python API and the tests print nothing. The lines are plain text, written
whether or not stderr is a terminal (a log file shows the same stages), each once per process.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

_sink: Callable[[str], None] | None = None
_said: set[str] = set()
_lock = threading.Lock()


def _to_stderr(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed: a stage line is never worth a failure
        pass


def enable(sink: Callable[[str], None] | None = _to_stderr) -> None:
    """Turn the stage lines on (to ``sink``; stderr by default), or off with ``None``."""
    global _sink
    with _lock:
        _sink = sink
        _said.clear()


def stage(line: str, *, once: str | None = None) -> None:
    """Announce a phase. ``once``: a key said at most once per process (a model loads once)."""
    with _lock:
        sink = _sink
        if sink is None or (once is not None and once in _said):
            return
        if once is not None:
            _said.add(once)
    sink(line)
