"""SQLite response cache shared by every judge provider.

Key recipe (:func:`request_key`): SHA-256 over a canonical JSON of

* provider name and model id;
* the rendered request — text of every text part, in order, plus the system prompt;
* a content digest of every media part (image pixels, audio samples, the video file's
  bytes with its time range and sampled frame indices), in order — or, for evidence built
  by ``score`` (``JudgeRequest.key_hint``), its recipe instead: SHA-256 of the media file's
  bytes, each segment's modality and cited/effective times in evidence order, and every
  evidence setting (pad, fps, frame cap, image size/format, clip or frames, point windows,
  evidence text and the ASR/OCR settings behind it). The recipe determines the parts, so the
  key is computed without decoding a frame: a rerun whose answers are cached decodes nothing;
* the answer schema;
* the output-affecting generation settings only (temperature, max tokens, samples,
  reasoning effort, seed) — not concurrency, timeouts or retries, which change how an
  answer is fetched, not what it is;
* provider options that change answers (e.g. how visual evidence is sent).

Write order: a row is queued only after the provider returned a complete, successful
answer; a background thread commits queued rows in batches (one transaction of
``INSERT OR REPLACE`` + ``COMMIT``), and :meth:`ResponseCache.close` writes what is left.
Queued rows are served to ``get`` before they are committed. A crash loses at most the
answers queued in the last half second (they are asked again on the rerun). The database runs in
WAL mode with ``synchronous=NORMAL``: a killed process loses at most the answer it was
writing and never leaves a torn row; several processes can read while one writes, and
writers wait on ``busy_timeout`` instead of failing. Errors are never cached, so a rerun
asks again.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import sqlite3
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from murgat.judges.types import JudgeOutput, JudgeRequest, TextPart
from murgat.media import safewrite

SCHEMA_VERSION = 2

# SQLite primary result codes that say the file could not be written or reached, not that it is
# damaged: FULL (disk full), IOERR, READONLY, CANTOPEN, PERM, BUSY, LOCKED, NOMEM. A database that
# fails with one of these is left where it is (moving it aside would throw away good answers).
_NOT_CORRUPTION = {13, 10, 8, 14, 3, 5, 6, 7}


def request_key(provider: str, model: str, req: JudgeRequest, options: dict[str, Any] | None = None) -> str:
    parts: list[Any] = []
    if req.key_hint is not None:
        # the media parts are named by their recipe, not by their decoded content (see module doc)
        parts = [["text", p.text] for p in req.parts if isinstance(p, TextPart)] + [["media", req.key_hint]]
    else:
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
        # a sized answer cap keys as the configured cap (JudgeRequest.key_config: the same answer either way)
        "config": (req.key_config or req.config).cache_fields(),
        "options": options or {},
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


def _close_at_exit(ref: weakref.ref[ResponseCache]) -> None:
    cache = ref()
    if cache is not None:
        cache.close()


class ResponseCache:
    """A thread-safe handle on one cache database (one connection per handle).

    Faults never cost a run its work: a database that is not SQLite or fails its
    integrity check on open is moved aside to ``<name>.corrupt-<time>`` and a fresh one is
    made (``notices`` says so); a read that fails counts as a miss; a write that fails
    (disk full, I/O error) is reported once on stderr and the run goes on uncached.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        #: this handle made the database (a run refused before any work removes it again: :meth:`discard`)
        self.created = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.notices: list[str] = []
        self.write_errors = 0
        self.read_errors = 0
        self._writes_disabled = False
        self._pending: dict[str, tuple[str, str, str]] = {}
        self._pending_lock = threading.Lock()
        self._wake = threading.Event()
        self._writer: threading.Thread | None = None
        self._closing = False
        self._known: set[str] | None = None
        self._version = 0
        self._checked = 0.0
        self._stale = False
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
                raise
            if ((getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF) in _NOT_CORRUPTION:
                raise  # disk full, I/O error, read-only...: not corruption (the caller says it cannot open the cache)
            aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            safewrite.move(self.path, aside)
            for suffix in ("-wal", "-shm"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    safewrite.move(side, aside.with_name(aside.name + suffix))
            self.notices.append(f"{self.path}: not a usable SQLite cache ({exc}); moved to {aside.name}, starting empty")
            self._conn = self._open()
        # registered once there is a connection: a cache that failed to open has nothing to close at exit
        ref = weakref.ref(self)
        atexit.register(_close_at_exit, ref)  # queued answers are never lost on exit
        self._load_keys()

    def _load_keys(self) -> None:
        """Keep the set of stored keys in memory (up to 2M) so misses need no query; when another
        process sharing the file has committed since (``PRAGMA data_version`` moved), misses
        are checked in the database again."""
        n = int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        self._known = {r[0] for r in self._conn.execute("SELECT key FROM responses")} if n <= 2_000_000 else None
        self._version = self._data_version()

    def _data_version(self) -> int:
        with self._lock:
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _others_wrote(self) -> bool:
        now = time.monotonic()
        if now - self._checked < 0.5:  # look at most twice a second
            return self._stale
        self._checked = now
        try:
            self._stale = self._data_version() != self._version
        except sqlite3.Error:
            self._stale = True
        return self._stale

    def _open(self) -> sqlite3.Connection:
        conn = safewrite.connect_sqlite(self.path, timeout=60, check_same_thread=False, isolation_level=None)
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
        pending = self._pending.get(key)
        if pending is not None:
            return JudgeOutput.model_validate_json(pending[2])
        if self._known is not None and key not in self._known and not self._others_wrote():
            return None  # a miss answered from memory: no SQLite query on the event loop
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
        """Queue an answer for writing; it is readable at once (``get`` sees pending rows) and
        committed by a background thread in batches, so the event loop never waits on SQLite."""
        if out.error is not None or self._writes_disabled:
            return
        payload = out.model_copy(update={"cached": False, "deduplicated": False}).model_dump_json()
        with self._pending_lock:
            self._pending[key] = (provider, model, payload)
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name="murgat-cache-writer", daemon=True)
                self._writer.start()
        self._wake.set()

    def _write_loop(self) -> None:
        while True:
            self._wake.wait(timeout=0.5)
            self._wake.clear()
            self._flush_pending()
            if self._closing:
                return

    def _flush_pending(self) -> None:
        with self._pending_lock:
            if self._writes_disabled:
                self._pending.clear()
            if not self._pending:
                return
            batch = list(self._pending.items())
        rows = [(k, p, m, time.time(), payload) for k, (p, m, payload) in batch]
        with self._lock:
            if self._writes_disabled:
                return
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(
                    "INSERT OR REPLACE INTO responses (key, provider, model, created, output) VALUES (?, ?, ?, ?, ?)", rows)
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                # SQLite may already have rolled back (e.g. on SQLITE_FULL): a second
                # rollback would raise and hide the real error
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                self.write_errors += 1
                self._writes_disabled = True
                if self.write_errors == 1:  # reported once, whoever hit it first (writer thread or close)
                    print(f"warning: response cache {self.path} cannot be written ({exc}); "
                          "the run goes on without caching new answers", file=sys.stderr)
        if self._known is not None and not self._writes_disabled:
            self._known.update(k for k, _ in batch)
        with self._pending_lock:
            for k, v in batch:
                if self._pending.get(k) is v:
                    del self._pending[k]

    def flush(self) -> None:
        """Write every pending answer now (called by :meth:`close`)."""
        self._flush_pending()

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def discard(self, remove_files: bool | None = None) -> None:
        """Close; with ``remove_files`` (default: when this handle created it) also delete the database
        and its ``-wal``/``-shm`` files — a run refused before any work (a bad judge spec) must not
        leave a cache behind."""
        self.close()
        if self.created if remove_files is None else remove_files:
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    safewrite.remove(self.path.with_name(self.path.name + suffix))

    def close(self) -> None:
        if self._closing and self._writer is None and not self._pending:
            return
        self._closing = True
        self._wake.set()
        if self._writer is not None:
            self._writer.join(timeout=30)
        self.flush()
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
