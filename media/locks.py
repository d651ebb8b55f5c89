"""The one file lock of murgat: ``fcntl.flock`` on a lock file, shared by the media cache (its
eviction) and the engine's run-folder lock (``murgat.engine.runlock`` builds on it; media is a
leaf, so the primitive lives here and the engine imports it, never the other way).

Why flock: the kernel drops the lock when its holder exits in any way (return, exception,
``kill -9``), so a leftover lock file of a dead process is simply locked again and never has to
be cleaned up by hand; it is in the standard library, so no package is needed for it. A lock is
advisory and local to one host (network file systems may not share ``flock`` between hosts).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from murgat.media import safewrite

#: how often a waiting :meth:`FileLock.acquire` tries again
_POLL_S = 0.05


class FileLock:
    """An exclusive ``flock`` on ``path`` (created if missing): :meth:`try_acquire` without waiting,
    :meth:`acquire` waiting up to a timeout, or ``with FileLock(path, timeout=60):``."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float | None = None) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False (and nothing held) when another holder has it."""
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = safewrite.open_fd(self.path, "r+", perms=0o644)  # a lock file planted as a link out is never opened
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def acquire(self, timeout: float | None = None) -> FileLock:
        """Wait for the lock (``timeout`` seconds at most, this lock's own when None; forever when
        both are None); :class:`TimeoutError` when it stays taken."""
        limit = self.timeout if timeout is None else timeout
        deadline = None if limit is None else time.monotonic() + limit
        while not self.try_acquire():
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"{self.path} stayed locked for {limit} s")
            time.sleep(_POLL_S)
        return self

    def write(self, text: str) -> None:
        """Replace the lock file's content (who holds it) while holding the lock."""
        if self._fd is None:
            raise RuntimeError(f"{self.path} is not held")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, text.encode(), 0)

    def release(self, *, clear: bool = False) -> None:
        """Let the lock go (a no-op when not held); ``clear`` empties the file first, so what it
        said about the holder is not read as current."""
        if self._fd is None:
            return
        try:
            if clear:
                os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FileLock:
        return self.acquire()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.release()
