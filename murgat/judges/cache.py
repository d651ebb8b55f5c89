"""SQLite response cache shared by every judge provider.

Key recipe (:func:`request_key`): SHA-256 over a canonical JSON of

* provider name and model id;
* the rendered request — text of every text part, in order, plus the system prompt;
* a content digest of every media part (image pixels, audio samples, the video file's
  bytes with its time range and sampled frame indices), in order;
* the answer schema;
* the output-affecting generation settings only (temperature, max tokens, samples,
  reasoning effort, seed) — not concurrency, timeouts or retries, which change how an
  answer is fetched, not what it is;
* provider options that change answers (e.g. how visual evidence is sent).

Write order: a row is inserted only after the provider returned a complete, successful
answer, inside one transaction (``INSERT OR REPLACE`` + ``COMMIT``). The database runs in
WAL mode with ``synchronous=NORMAL``: a killed process loses at most the answer it was
writing and never leaves a torn row; several processes can read while one writes, and
writers wait on ``busy_timeout`` instead of failing. Errors are never cached, so a rerun
asks again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

from murgat.judges.types import JudgeOutput, JudgeRequest, TextPart

SCHEMA_VERSION = 1


def request_key(provider: str, model: str, req: JudgeRequest, options: dict[str, Any] | None = None) -> str:
    parts: list[Any] = []
    for p in req.parts:
        if isinstance(p, TextPart):
            parts.append(["text", p.text])
        else:
            parts.append([p.kind, getattr(p, "label", ""), p.digest()])
    blob = {
        "v": SCHEMA_VERSION,
        "provider": provider,
        "model": model,
        "system": req.system,
        "parts": parts,
        "schema": req.schema,
        "config": req.config.cache_fields(),
        "options": options or {},
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


class ResponseCache:
    """A thread-safe handle on one cache database (one connection per handle).

    Faults never cost a run its work: a database that is not SQLite or fails its
    integrity check on open is moved aside to ``<name>.corrupt-<time>`` and a fresh one is
    made (``notices`` says so); a read that fails counts as a miss; a write that fails
    (disk full, I/O error) is reported once on stderr and the run goes on uncached.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.notices: list[str] = []
        self.write_errors = 0
        self.read_errors = 0
        self._writes_disabled = False
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
                raise
            aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, aside.with_name(aside.name + suffix))
            self.notices.append(f"{self.path}: not a usable SQLite cache ({exc}); moved to {aside.name}, starting empty")
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, provider TEXT, model TEXT, "
                "created REAL, output TEXT NOT NULL)"
            )
            row = conn.execute("PRAGMA quick_check").fetchone()
            if row is None or row[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {row[0] if row else 'no answer'}")
        except BaseException:
            conn.close()
            raise
        return conn

    def get(self, key: str) -> JudgeOutput | None:
        try:
            with self._lock:
                row = self._conn.execute("SELECT output FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self.read_errors += 1
            if self.read_errors == 1:
                print(f"warning: response cache {self.path} cannot be read ({exc}); asking the judge instead",
                      file=sys.stderr)
            return None
        if row is None:
            return None
        try:
            return JudgeOutput.model_validate_json(row[0])
        except ValueError:
            return None

    def put(self, key: str, provider: str, model: str, out: JudgeOutput) -> None:
        if out.error is not None or self._writes_disabled:
            return
        payload = out.model_copy(update={"cached": False, "deduplicated": False}).model_dump_json()
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute(
                    "INSERT OR REPLACE INTO responses (key, provider, model, created, output) VALUES (?, ?, ?, ?, ?)",
                    (key, provider, model, time.time(), payload),
                )
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                # SQLite may already have rolled back (e.g. on SQLITE_FULL): a second
                # rollback would raise and hide the real error
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                self.write_errors += 1
                self._writes_disabled = True
                print(f"warning: response cache {self.path} cannot be written ({exc}); "
                      "the run goes on without caching new answers", file=sys.stderr)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
