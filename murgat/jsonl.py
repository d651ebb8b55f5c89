"""Crash-safe JSONL files: one ``write`` + ``flush`` + ``fsync`` per line, and a torn last
line (a crash mid-write) cut off before the file is read or appended to again."""

from __future__ import annotations

import os
from pathlib import Path


def append_line(path: Path, line: str) -> None:
    """Append one line (a trailing newline is added) and make it durable before returning."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def cut_torn_tail(path: Path) -> None:
    """Drop a last line that has no newline: it was being written when a process died."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
