"""A run on disk: ``config.json``, ``results.jsonl``, ``cache.sqlite``, ``summary.json``.

``results.jsonl`` is append-only: each finished item is one line, written with a single
``write`` then ``flush`` + ``fsync``, so a crash loses at most the items in flight. On
open, a torn last line (a crash mid-write) is cut off, and any other line that does not
decode as a result (a disk fault, a hand edit) is moved to ``results.corrupt.jsonl`` with
a notice; those items are scored again. Re-running the same command skips every id
already in the file. One process at a time holds the folder (:class:`~murgat.runlock.RunLock`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from murgat.jsonl import BadLine, ResultsWriteError, append_lines, cut_torn_tail, loads_line, quarantine_lines
from murgat.schema import ResponseResult, RunSummary


class RunConfigMismatch(RuntimeError):
    """The run folder was made with settings that change scores; refuse to mix them."""


class NotWritable(RuntimeError):
    """An output location cannot be written; raised before any work starts."""


PROBE_BYTES = 64 * 1024  # about what a run writes before its first result: lock, config.json, an empty cache


def check_writable_dir(path: str | os.PathLike[str], what: str) -> None:
    """Create ``path`` if needed and prove ``PROBE_BYTES`` can be written in it, or raise :class:`NotWritable`.

    An empty file is not proof: a full disk still has inodes, so it passes and the run then
    fails on its first real write. Random bytes, because a compressing file system stores
    zeros in no space at all; written to the end, because a nearly full disk writes short."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".write-test-", dir=p)
        try:
            left = memoryview(os.urandom(PROBE_BYTES))
            while left:
                n = os.write(fd, left)
                if n <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                left = left[n:]
        finally:
            os.close(fd)
            os.unlink(tmp)
    except OSError as exc:
        reason = "read-only file system" if exc.errno == errno.EROFS else (exc.strerror or str(exc))
        raise NotWritable(f"cannot write to {what} {p}: {reason}") from None


def canonical_json(value: Any) -> Any:
    """JSON values only, with sets turned into sorted lists (no Python reprs on disk)."""
    if isinstance(value, dict):
        return {str(k): canonical_json(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, set | frozenset):
        return sorted(canonical_json(v) for v in value)
    if isinstance(value, list | tuple):
        return [canonical_json(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    return str(value)


class RunDir:
    """One run folder. ``repair=True`` (the lock holder, i.e. ``score``) cuts a torn tail and
    moves corrupt lines aside; readers such as ``summarize`` pass ``repair=False`` and only
    skip such lines, because a live run may be writing the file at that moment."""

    def __init__(self, path: str | Path, repair: bool = True, record: type[Any] = ResponseResult) -> None:
        self.path = Path(path)
        self.repair = repair
        self.record = record
        if repair:
            self.path.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.notices: list[str] = []
        self._slim: list[Any] = []
        self._slim_stamp: tuple[int, int] | None = (-1, -1)
        self._last_line: dict[str, int] = {}  # id -> line of its latest record, from the slim scan
        if repair:
            cut_torn_tail(self.results_path)
        self.load_results(slim=True)

    @property
    def results_path(self) -> Path:
        return self.path / "results.jsonl"

    @property
    def corrupt_path(self) -> Path:
        return self.path / "results.corrupt.jsonl"

    @property
    def cache_path(self) -> Path:
        return self.path / "cache.sqlite"

    def _scan(self, slim: bool = False, want: set[str] | None = None, lines: bool = False) -> Any:
        """Load every result (one line at a time); lines that do not decode are moved aside (once)
        with a notice. ``slim`` drops the per-sentence detail (what summaries need, at a fraction
        of the memory); ``want`` keeps only those ids."""
        out: list[Any] = []
        bad: list[BadLine] = []
        last: dict[str, int] = {}
        if self.results_path.exists():
            with open(self.results_path, encoding="utf-8", newline="") as f:
                for lineno, line in enumerate(_lines(f), 1):
                    if not line.strip():
                        continue
                    try:
                        rec = loads_line(line)
                    except ValueError as exc:
                        bad.append(BadLine(lineno, line, str(exc)))
                        continue
                    if want is not None and isinstance(rec, dict) and str(rec.get("id")) not in want:
                        continue
                    if slim and isinstance(rec, dict):
                        rec.pop("sentences", None)
                        rec.pop("steps", None)
                    try:
                        out.append(self.record.model_validate(rec))
                        last[out[-1].id] = lineno
                    except ValidationError as exc:
                        bad.append(BadLine(lineno, json.dumps(rec, ensure_ascii=False),
                                           f"not a result record ({exc.errors()[0]['msg']})"))
        if bad and not self.repair:
            if not self.notices:
                self.notices.append(f"{self.results_path}: {len(bad)} line(s) that are not results were skipped "
                                    f"(line {bad[0].lineno}: {bad[0].reason})")
        elif bad:
            quarantine_lines(self.results_path, bad, self.corrupt_path)
            where = ", ".join(str(b.lineno) for b in bad[:10]) + (" …" if len(bad) > 10 else "")
            self.notices.append(
                f"{self.results_path}: {len(bad)} corrupt line(s) (line {where}: {bad[0].reason}) moved to "
                f"{self.corrupt_path.name}; those items will be scored again"
            )
        return (out, last) if lines else out

    def iter_latest(self, want: set[str]) -> Iterator[Any]:
        """Full records of the ``want`` ids (the latest of each), one at a time in file order.

        The viewer of a 10,000-item run shows thousands of items in full detail; holding them all
        as records doubled the run's peak memory. One pass, nothing kept but the current record."""
        self.load_results(slim=True)  # refreshes the id -> latest line map if the file changed;
        self.load_results(slim=True)  # again, in case that scan moved corrupt lines aside
        lines = {n for i, n in self._last_line.items() if i in want}
        if not lines or not self.results_path.exists():
            return
        with open(self.results_path, encoding="utf-8", newline="") as f:
            for lineno, line in enumerate(_lines(f), 1):
                if lineno not in lines:
                    continue
                try:
                    yield self.record.model_validate(loads_line(line))
                except (ValueError, ValidationError):
                    continue  # the slim scan already reported (or moved aside) this line

    def check_config(self, fingerprint: dict[str, Any], full: dict[str, Any], force: bool = False) -> None:
        cfg = self.path / "config.json"
        fingerprint = canonical_json(fingerprint)
        if cfg.exists() and not force:
            try:
                old = json.loads(cfg.read_text(encoding="utf-8")).get("fingerprint")
            except (OSError, ValueError, AttributeError):
                old = None
                self.notices.append(f"{cfg}: unreadable; written again")
            if old is not None and old != fingerprint:
                changed = sorted(k for k in set(old) | set(fingerprint) if old.get(k) != fingerprint.get(k))
                raise RunConfigMismatch(
                    f"{self.path} holds a run with different scoring settings ({', '.join(changed)}); "
                    "use a new --out folder, or --overwrite to start again"
                )
        tmp = cfg.with_suffix(".json.tmp")
        try:
            tmp.write_text(json.dumps({"fingerprint": fingerprint, "config": canonical_json(full)}, indent=2,
                                      sort_keys=True, ensure_ascii=False))
            os.replace(tmp, cfg)
        except OSError as exc:  # disk full since the probe: the run's "results could not be written" exit
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise ResultsWriteError(exc.errno, f"cannot write {cfg}: {exc.strerror or exc}") from exc

    def load_results(self, slim: bool = False, want: set[str] | None = None) -> list[Any]:
        if not (slim and want is None):
            return self._scan(slim, want)
        # a resumed run asks for the finished items several times before it starts (open,
        # earlier failures, progress, the runner): one scan serves them while the file is unchanged
        try:
            st = self.results_path.stat()
            stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            stamp = None
        if stamp is None or stamp != self._slim_stamp:
            self._slim, self._last_line = self._scan(slim=True, lines=True)
            self._slim_stamp = stamp
        return list(self._slim)

    def finished_ids(self, retry_errors: bool = False) -> set[str]:
        return {r.id for r in self.latest_results(slim=True) if not (retry_errors and needs_retry(r))}

    def append(self, result: Any) -> None:
        self.append_many([result])

    def append_many(self, results: list[Any]) -> None:
        """Append finished results with one write and one fsync (all or, on a fault, none counted)."""
        lines = []
        for result in results:
            if isinstance(result, ResponseResult) and result.error is not None and result.case != "error":
                result = result.model_copy(update={"case": "error", "scores": result.scores.model_copy(
                    update={"coverage": None, "precision": None, "recall": None, "f1": None, "murgat_s": None})})
            lines.append(result.model_dump_json())
        with self._lock:
            append_lines(self.results_path, lines)

    def latest_results(self, slim: bool = False, want: set[str] | None = None) -> list[Any]:
        """One result per id (the last line wins, so a retried error replaces the old one)."""
        by_id: dict[str, Any] = {}
        for r in self.load_results(slim, want):
            by_id[r.id] = r
        return list(by_id.values())

    def write_summary(self, summary: RunSummary) -> Path:
        p = self.path / "summary.json"
        tmp = p.with_suffix(".json.tmp")
        tmp.write_text(summary.model_dump_json(indent=2))
        os.replace(tmp, p)
        return p

    def summary(self) -> RunSummary:
        return RunSummary.model_validate_json((self.path / "summary.json").read_text(encoding="utf-8"))


def _lines(f: Any) -> Any:
    """Lines of an open text file split at ``\n`` only (see :mod:`murgat.jsonl`)."""
    buf = ""
    while True:
        chunk = f.read(1 << 20)
        if not chunk:
            break
        buf += chunk
        *done, buf = buf.split("\n")
        for ln in done:
            yield ln[:-1] if ln.endswith("\r") else ln
    if buf:
        yield buf[:-1] if buf.endswith("\r") else buf


def needs_retry(r: Any) -> bool:
    """An item ``--retry-errors`` scores again: an error record, or judge errors left it undetermined."""
    return r.error is not None or getattr(r, "n_judge_errors", 0) > 0
