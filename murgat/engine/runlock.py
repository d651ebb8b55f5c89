"""An exclusive lock on a run folder (or an output file), so two processes never share one.

Why: two ``murgat score`` runs on one ``--out`` scored every item twice, paid every judge
call twice and, with ``--overwrite``, mixed two configurations in one results file.

How: murgat's one file lock (:class:`murgat.media.locks.FileLock`, an ``fcntl.flock``) on
``<folder>/.lock`` (``<file>.lock`` for a single output file), taken without waiting. The
kernel releases the lock when the holder exits in any way (return, exception, ``kill -9``),
so a lock is never left stale: a leftover ``.lock`` file of a dead process is simply locked
again. The file holds the holder's PID, host and start time so the refusal can name them.
Locks are advisory and local; on network file systems whose ``flock`` is not shared between
hosts, do not point two hosts at one folder.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from types import TracebackType

from murgat.engine.errors import SettingsError
from murgat.media.locks import FileLock


class RunLocked(SettingsError):
    """Another live process holds the lock (exit 2: the run is refused before any work)."""


class RunLock:
    """``with RunLock(path):`` — hold the folder's lock for the block (or call acquire/release)."""

    def __init__(self, target: str | os.PathLike[str], *, is_dir: bool = True) -> None:
        t = Path(target)
        self.path = t / ".lock" if is_dir else t.with_name(t.name + ".lock")
        self.target = t
        self._lock = FileLock(self.path)

    def holder(self) -> dict[str, object]:
        try:
            doc: dict[str, object] = json.loads(self.path.read_text(encoding="utf-8") or "{}")
            return doc
        except (OSError, ValueError):
            return {}

    def acquire(self) -> RunLock:
        if not self._lock.try_acquire():
            h = self.holder()
            who = f"PID {h.get('pid', '?')} on host {h.get('host', '?')}"
            since = h.get("started")
            when = (f", since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))}"
                    if isinstance(since, int | float) else "")
            raise RunLocked(f"{self.target} is in use by another murgat process ({who}{when}); "
                            "wait for it to finish or use another output")
        self._lock.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}))
        return self

    def release(self) -> None:
        self._lock.release(clear=True)

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
