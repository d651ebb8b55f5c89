"""JSONL done one way for the whole project: lines end at ``\\n`` and nowhere else.

Why this module exists: Python's universal line splitting also breaks at U+2028, U+2029, U+0085 (and
\\v, \\f, \\x1c-\\x1e), which JSON allows raw inside strings. A response holding one of them,
written raw and read back that way, tore a line in two and broke a run folder
for good. So every JSONL reader here splits on ``\\n`` only (a ``\\r`` before it is
dropped, for files edited on Windows), and every writer escapes those three characters as
``\\u2028``/``\\u2029``/``\\u0085`` so that other tools' line readers are safe too. Both
forms decode to the same string.

Crash safety: one ``write`` + ``flush`` + ``fsync`` per line, and a torn last line (a
crash mid-write) cut off before the file is read or appended to again. A line that is not
JSON somewhere else (a disk fault, a hand edit) is reported by :func:`read_records` and
can be moved aside with :func:`quarantine_lines` instead of breaking every later command.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from murgat.media import safewrite

#: characters JSON keeps raw in strings but many line readers treat as line ends
_LINE_BREAKERS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"}


class ResultsWriteError(OSError):
    """Appending a finished record failed (disk full, read-only, I/O error)."""


def escape_line(line: str) -> str:
    """``line`` with the JSON-legal line-breaking characters escaped (and no newline)."""
    if "\n" in line:
        raise ValueError("a JSONL record must not contain a raw newline")
    for raw, esc in _LINE_BREAKERS.items():
        if raw in line:
            line = line.replace(raw, esc)
    return line


def dumps(obj: Any) -> str:
    """One JSONL line for ``obj`` (UTF-8 kept readable, line breakers escaped)."""
    return escape_line(json.dumps(obj, ensure_ascii=False, default=str))


def split_lines(text: str) -> list[str]:
    """Lines of a JSONL text, split at ``\\n`` only (a trailing ``\\r`` is dropped)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def iter_lines(path: str | os.PathLike[str], encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for every line of ``path``, split at ``\\n`` only."""
    text = Path(path).read_text(encoding=encoding)
    yield from enumerate(split_lines(text), 1)


@dataclass
class BadLine:
    """A line of a JSONL file that did not decode."""

    lineno: int
    text: str
    reason: str


def loads_line(line: str) -> Any:
    """``json.loads`` that turns absurd nesting into a ``ValueError`` with a reason."""
    try:
        return json.loads(line)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def read_records(path: str | os.PathLike[str]) -> tuple[list[tuple[int, Any]], list[BadLine]]:
    """Decoded records and the lines that are not JSON (blank lines are skipped)."""
    good: list[tuple[int, Any]] = []
    bad: list[BadLine] = []
    p = Path(path)
    if not p.exists():
        return good, bad
    for lineno, line in iter_lines(p):
        if not line.strip():
            continue
        try:
            good.append((lineno, loads_line(line)))
        except ValueError as exc:
            bad.append(BadLine(lineno, line, str(exc)))
    return good, bad


def append_line(path: str | os.PathLike[str], line: str) -> None:
    """Append one line (a trailing newline is added) and make it durable before returning.

    Raises :class:`ResultsWriteError` naming the file when the write or the sync fails;
    whatever was in the file before stays intact (a torn partial line is cut on next open).
    """
    append_lines(path, [line])


def append_lines(path: str | os.PathLike[str], lines: list[str]) -> None:
    """Append several lines with one write and one fsync (group commit), durable on return."""
    data = "".join(escape_line(line) + "\n" for line in lines).encode("utf-8")
    try:
        safewrite.append_bytes(path, data)  # never through a link out of the file's folder
    except OSError as exc:
        raise ResultsWriteError(exc.errno, f"cannot append to {path}: {exc.strerror or exc}") from exc


def cut_torn_tail(path: str | os.PathLike[str]) -> None:
    """Drop a last line that has no newline: it was being written when a process died.

    A last line that is a whole JSON object (the newline alone was lost) is kept.
    """
    p = Path(path)
    if not p.exists():
        return
    size = p.stat().st_size
    if size == 0:
        return
    with open(p, "rb") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        # walk back to the last newline without reading the whole file
        pos = size
        block = 1 << 16
        cut = 0
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                cut = start + i + 1
                break
            pos = start
        f.seek(cut)
        tail = f.read()
    try:
        complete = isinstance(loads_line(tail.decode("utf-8")), dict)
    except (ValueError, UnicodeDecodeError):
        complete = False
    try:
        if complete:  # the process died between the record and its newline: the record is whole
            safewrite.append_bytes(p, b"\n")
        else:
            safewrite.truncate(p, cut)
    except OSError as exc:
        raise ResultsWriteError(exc.errno, f"cannot repair {p}: {exc.strerror or exc}") from exc


def quarantine_lines(path: str | os.PathLike[str], bad: list[BadLine], aside: str | os.PathLike[str]) -> None:
    """Move ``bad`` lines of ``path`` into ``aside`` (appended) and rewrite ``path`` without them.

    The rewrite is atomic (temporary file + ``os.replace``), so a crash leaves either the
    old file or the cleaned one.
    """
    if not bad:
        return
    p = Path(path)
    drop = {b.lineno for b in bad}
    moved = "".join(escape_line(b.text.replace("\n", " ")) + "\n" for b in bad)
    # bytes that are not UTF-8 pass through as they are (surrogateescape): kept lines stay byte-identical
    text = p.read_text(encoding="utf-8", errors="surrogateescape")
    kept = "".join(escape_line(ln) + "\n" for n, ln in enumerate(split_lines(text), 1) if n not in drop and ln.strip())
    try:
        safewrite.append_bytes(aside, moved.encode("utf-8", "surrogateescape"))
        safewrite.write_bytes(p, kept.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        raise ResultsWriteError(exc.errno, f"cannot move corrupt lines of {p} to {aside}: {exc.strerror or exc}") \
            from exc
