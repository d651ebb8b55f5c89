"""The one place a file is opened for writing, made, moved or removed: murgat's write gateway.

Why: each writer used to open its own files, and several followed a link planted where a run
writes — ``RUN/summary.json.tmp``, ``RUN/config.json.tmp``, ``RUN/results.jsonl.tmp`` (fixed
temporary names), ``RUN/cache.sqlite``, ``RUN/results.corrupt.jsonl`` — into a file outside the
folder. Here every write:

* opens its final name with ``O_NOFOLLOW`` (a link there is resolved first, and followed only
  when it stays inside ``boundary``: by default the folder that holds it — a link out is
  :class:`UnsafePath`, never written through);
* checks the folder it writes in: when a ``boundary`` is given (a run folder), the real path of
  the file's folder must lie inside it (``RUN/sub`` being a link out is refused);
* makes a temporary file under a random name with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (nothing an
  attacker planted under a name is ever opened), fsyncs it and moves it into place with
  ``os.replace`` relative to the folder's descriptor (``openat``-style: the folder checked is the
  folder written).

This module is a leaf (standard library only): :mod:`media` may not import :mod:`murgat`, and
both use it. The rule on *whose* file a path is (an input, another run's state, a cassette) is
:mod:`murgat.engine.outputs`, which writes through these functions. A test walks the source and
fails on any write outside this module (``tests/test_write_gateway.py``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import sqlite3

Mode = Literal["w", "a", "r+", "x"]
_FLAGS: dict[str, int] = {
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "r+": os.O_RDWR | os.O_CREAT,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
}
_PY_MODE = {"w": "wb", "a": "ab", "r+": "r+b", "x": "wb"}
#: SQLite's files beside a database: opened by SQLite under the database's name plus these
SQLITE_SIDES = ("-wal", "-shm", "-journal")


class UnsafePath(OSError):
    """murgat will not write here: the name is a link out of its folder, or the folder is reached
    through one, or it is not a regular file. Nothing was written."""

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        super().__init__(errno.ELOOP, why, str(path))
        self.why = why

    def __str__(self) -> str:
        return f"{self.filename}: {self.why}"


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def resolve(path: str | os.PathLike[str], boundary: str | os.PathLike[str] | None = None) -> Path:
    """The path to write for ``path``: itself, or a link's target when the target lies inside
    ``boundary`` (default: the folder holding the link). Raises :class:`UnsafePath` for a link out,
    and, with a ``boundary``, for a file whose folder is reached through a link out of it."""
    p = Path(path)
    parent = os.path.realpath(p.parent if str(p.parent) else ".")
    fence = os.path.realpath(boundary) if boundary is not None else parent
    if boundary is not None and not _inside(parent, fence):
        raise UnsafePath(p, f"its folder is reached through a symbolic link out of {fence}; murgat does not "
                            "write through it")
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return Path(parent) / p.name
    if not stat.S_ISLNK(st.st_mode):
        return Path(parent) / p.name
    real = os.path.realpath(p)
    if not _inside(real, fence):
        raise UnsafePath(p, f"is a symbolic link to {real}, outside {fence}; murgat does not write through it "
                            "(remove the link)")
    return Path(real)


def _open_in(folder_fd: int, name: str, flags: int, perms: int, shown: Path) -> int:
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, perms, dir_fd=folder_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link appeared after resolve(): never followed
            raise UnsafePath(shown, "became a symbolic link while being opened; murgat does not write through it") \
                from None
        raise


@contextlib.contextmanager
def _folder(path: Path) -> Iterator[int]:
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield fd
    finally:
        os.close(fd)


def open_fd(path: str | os.PathLike[str], mode: Mode = "w", *, boundary: str | os.PathLike[str] | None = None,
            perms: int = 0o666) -> int:
    """A descriptor on ``path`` opened for writing (``mode`` as for :func:`open`, binary), never
    through a link out of ``boundary``; the umask applies to a new file's ``perms``."""
    target = resolve(path, boundary)
    with _folder(target) as dfd:
        fd = _open_in(dfd, target.name, _FLAGS[mode], perms, Path(path))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePath(path, "is not a regular file")
    return fd


def open_file(path: str | os.PathLike[str], mode: Mode = "w", *,
              boundary: str | os.PathLike[str] | None = None) -> IO[bytes]:
    """:func:`open_fd` as a binary file object."""
    return os.fdopen(open_fd(path, mode, boundary=boundary), _PY_MODE[mode])


def _sync(f: IO[bytes]) -> None:
    f.flush()
    os.fsync(f.fileno())


def append_bytes(path: str | os.PathLike[str], data: bytes, *, boundary: str | os.PathLike[str] | None = None,
                 sync: bool = True) -> None:
    """Append ``data`` with one write (durable on return with ``sync``)."""
    with open_file(path, "a", boundary=boundary) as f:
        f.write(data)
        if sync:
            _sync(f)


def temp_file(folder: str | os.PathLike[str], *, prefix: str = ".tmp-", suffix: str = ".tmp") -> Path:
    """A new, empty file under a random name in ``folder`` (``O_EXCL | O_NOFOLLOW``): for a producer
    that writes by path (ffmpeg, ``np.save``). The caller moves it into place or :func:`remove`\\ s it."""
    folder = Path(folder)
    for _ in range(16):
        p = folder / f"{prefix}{secrets.token_hex(8)}{suffix}"
        try:
            os.close(os.open(p, _FLAGS["x"] | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
        except FileExistsError:
            continue
        return p
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def _mode_of(path: Path) -> int | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def replace(path: str | os.PathLike[str], fill: Callable[[IO[bytes]], object], *,
            boundary: str | os.PathLike[str] | None = None) -> Path:
    """Make ``path`` anew: ``fill(binary_file)`` writes a temporary file under a random name beside
    it, which is fsync'd and moved into place (a reader or a crash sees the old file or the new
    one). A link at ``path`` inside ``boundary`` is replaced at its target; an old file's
    permissions are kept. On any failure the temporary file is removed and the error raised."""
    target = resolve(path, boundary)
    keep = _mode_of(target)
    with _folder(target) as dfd:
        for _ in range(16):
            tmp = f".{target.name}.{secrets.token_hex(6)}.tmp"
            try:
                fd = _open_in(dfd, tmp, _FLAGS["x"], 0o666, target)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(errno.EEXIST, "no free temporary name", str(target.parent))
        try:
            with os.fdopen(fd, "wb") as f:
                if keep is not None:
                    os.fchmod(f.fileno(), keep)
                fill(f)
                _sync(f)
            os.replace(tmp, target.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    return target


def write_bytes(path: str | os.PathLike[str], data: bytes, *, boundary: str | os.PathLike[str] | None = None) -> Path:
    """``data`` as the whole new content of ``path`` (see :func:`replace`)."""
    return replace(path, lambda f: f.write(data), boundary=boundary)


def write_text(path: str | os.PathLike[str], text: str, *, boundary: str | os.PathLike[str] | None = None) -> Path:
    """``text`` (UTF-8) as the whole new content of ``path``."""
    return write_bytes(path, text.encode("utf-8"), boundary=boundary)


def truncate(path: str | os.PathLike[str], size: int, *, boundary: str | os.PathLike[str] | None = None) -> None:
    """Cut ``path`` to ``size`` bytes in place (a torn last line)."""
    fd = open_fd(path, "r+", boundary=boundary)
    try:
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


def move(src: str | os.PathLike[str], dst: str | os.PathLike[str], *,
         boundary: str | os.PathLike[str] | None = None) -> None:
    """Rename ``src`` to ``dst`` (atomic, same file system). A link at ``dst`` is replaced itself,
    never written through; with a ``boundary`` both lie inside it."""
    if boundary is not None:
        for p in (src, dst):
            resolve(Path(p).parent / ".", boundary)  # the folders, not the names: a link at src moves as a link
    os.replace(src, dst)


def remove(path: str | os.PathLike[str]) -> None:
    """Remove ``path`` (a link itself, never its target); a missing file is no error."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def connect_sqlite(path: str | os.PathLike[str], *, boundary: str | os.PathLike[str] | None = None,
                   **kw: Any) -> sqlite3.Connection:
    """A connection on the database at ``path``, on the file that was checked and on no other.

    SQLite follows links and opens ``<name>-wal``, ``-shm`` and ``-journal`` beside the name it is
    given: the database is resolved by :func:`resolve` (a link out of its folder is refused) and SQLite
    is given the real name, and a side file that is a link is refused (it would carry the writes
    elsewhere). SQLite opens by name, without ``O_NOFOLLOW``, and Python's ``sqlite3`` cannot ask it to:
    a link swapped in between that check and SQLite's open (a TOCTOU race) would still be followed. So
    the file is first opened here with ``O_NOFOLLOW | O_CREAT`` relative to its folder's descriptor
    (:func:`_pinned`: a link there now is refused, and the descriptor holds *that* file), and after
    SQLite's open — before any statement, so nothing was read or written — the file SQLite holds must be
    the same one (:func:`_opened_as`); a swap in between is :class:`UnsafePath` and the connection is
    closed unused."""
    target = resolve(path, boundary)
    for side in SQLITE_SIDES:
        s = target.with_name(target.name + side)
        if s.is_symlink():
            raise UnsafePath(s, "is a symbolic link beside a SQLite database; SQLite would write through it "
                                "(remove the link)")
    import sqlite3  # only a cache opens one: not loaded on every start

    pin = _pinned(target, path)
    try:
        ident = os.fstat(pin)
        before = _descriptors_of(ident, pin)
        conn: sqlite3.Connection = sqlite3.connect(str(target), **kw)
        if not _opened_as(target, ident, pin, before):
            conn.close()
            raise UnsafePath(path, "was replaced (by a symbolic link or another file) while SQLite opened it; "
                                   "murgat does not write through it")
    finally:
        os.close(pin)
    return conn


def _pinned(target: Path, shown: str | os.PathLike[str]) -> int:
    """A read descriptor on the database file itself (made empty when missing: SQLite takes an empty file
    as a new database), opened without following a link; a directory or device is refused."""
    try:
        with _folder(target) as dfd:  # O_NONBLOCK: a FIFO planted there must not block the open
            fd = _open_in(dfd, target.name, os.O_RDONLY | os.O_CREAT | os.O_NONBLOCK, 0o644, Path(shown))
    except IsADirectoryError:
        raise UnsafePath(shown, "is not a regular file; a SQLite database must be one") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePath(shown, "is not a regular file; a SQLite database must be one")
    return fd


def _descriptors_of(ident: os.stat_result, but: int) -> set[int] | None:
    """This process's open descriptors (``but`` apart) on the file ``ident`` names; ``None`` where the
    system does not list them (neither ``/proc/self/fd`` nor ``/dev/fd``)."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(listing)
        except OSError:
            continue
        found: set[int] = set()
        for name in names:
            fd = int(name)
            with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
                st = os.fstat(fd)
                if fd != but and (st.st_dev, st.st_ino) == (ident.st_dev, ident.st_ino):
                    found.add(fd)
        return found
    return None


def _opened_as(target: Path, ident: os.stat_result, pin: int, before: set[int] | None) -> bool:
    """Whether the file SQLite just opened at ``target`` is the pinned one: a descriptor on it that was not
    open before the connection is SQLite's. Where none is new but one was open already (another
    connection of this process, whose descriptor SQLite may reuse), or descriptors cannot be listed, the
    name must still be that file (``lstat``: a narrower check, as a swap and a swap back between the
    open and this look pass it)."""
    after = _descriptors_of(ident, pin)
    if after is not None and before is not None and after - before:
        return True
    if after is not None and before is not None and not before:
        return False
    try:
        st = os.lstat(target)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == (ident.st_dev, ident.st_ino)


def devnull_fd() -> int:
    """A descriptor writing to the null device (where output goes after the reader left)."""
    return os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)


def dup_stream(fd: int) -> IO[bytes]:
    """A binary file writing through a duplicate of this process's descriptor ``fd`` (``>>`` kept)."""
    return os.fdopen(os.dup(fd), "wb")


def open_stream(path: str | os.PathLike[str]) -> IO[bytes]:
    """A character device or FIFO opened for writing in place (never created, never a link)."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        os.close(fd)
        raise UnsafePath(path, "is not a device or pipe")
    return os.fdopen(fd, "wb")


def copy(src: str | os.PathLike[str], dst: str | os.PathLike[str], *,
         boundary: str | os.PathLike[str] | None = None) -> Path:
    """A whole copy of the regular file ``src`` at ``dst`` (see :func:`replace`)."""
    def fill(f: IO[bytes]) -> None:
        with open(src, "rb") as s:
            while chunk := s.read(1 << 22):
                f.write(chunk)

    return replace(dst, fill, boundary=boundary)


def anonymous_file() -> IO[bytes]:
    """A temporary file with no name (removed on close): where a descriptor's output is kept aside."""
    import tempfile

    return tempfile.TemporaryFile(mode="w+b")
