"""One place to make rich consoles: wide enough for the tables when output is not a TTY
(rich would fall back to 80 columns and truncate ids and CIs)."""

from __future__ import annotations

import shutil
import sys

from rich.console import Console


def console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=max(140, shutil.get_terminal_size((140, 40)).columns))
