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

import hashlib
import json
import sqlite3
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
    """A thread-safe handle on one cache database (one connection per handle)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=60000")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, provider TEXT, model TEXT, "
            "created REAL, output TEXT NOT NULL)"
        )

    def get(self, key: str) -> JudgeOutput | None:
        with self._lock:
            row = self._conn.execute("SELECT output FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return JudgeOutput.model_validate_json(row[0])
        except ValueError:
            return None

    def put(self, key: str, provider: str, model: str, out: JudgeOutput) -> None:
        if out.error is not None:
            return
        payload = out.model_copy(update={"cached": False}).model_dump_json()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(
                    "INSERT OR REPLACE INTO responses (key, provider, model, created, output) VALUES (?, ?, ?, ?, ?)",
                    (key, provider, model, time.time(), payload),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
