"""Content-addressed on-disk cache for decoded media, clips, transcripts and OCR.

Key recipe: ``sha256(namespace, file digest, sorted parameters)``, where the file digest
is the SHA-256 of the file's *bytes* — never its path — so a renamed or copied video hits
the same entries and an edited one misses. Two entries are keyed by the file's path and
*stat identity* instead (device, inode, size, modification and change times in ns): ffprobe's
answers (namespace ``probe``, see :mod:`murgat.media.streams`) and the file digest itself (namespace
``digest``, see :func:`file_digest`), because hashing a large video to look either up would
cost more than what is looked up.

Crash and concurrency safety: every entry is written to a temporary file in the same
folder and moved into place with ``os.replace`` (atomic on POSIX), so readers see either
nothing or a whole entry, and two processes producing the same entry at once simply
race to an identical result. Reads touch the entry's mtime; when the cache grows past
``max_bytes`` the least recently used entries are removed under a file lock.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from murgat.media import safewrite
from murgat.media.errors import MediaUnwritable
from murgat.media.locks import FileLock

DEFAULT_MAX_BYTES = 5 * 1024**3
#: a file changed less than this long ago gets no stat-keyed entry (probe, digest): file times
#: tick in steps of a few milliseconds, so a second write within the same tick could otherwise
#: leave the stat identity unchanged
RACY_NS = 2_000_000_000
_DIGESTS: dict[tuple[int, ...], str] = {}
_DIGEST_LOCK = threading.Lock()
#: bumped if the digest recipe ever changes (it is SHA-256 of the bytes; the value is what every
#: other cache key is built from, so it must never change for the same bytes)
_DIGEST_V = 1


def murgat_cache_home() -> Path:
    """``$XDG_CACHE_HOME/murgat``, or ``~/.cache/murgat`` when it is unset (or, as the XDG base
    directory rules say, not an absolute path): where the environment, the models and the media
    cache go by default, so a user who moves their caches off the home volume moves murgat's too."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "murgat"


def cache_root() -> Path:
    """``$MURGAT_CACHE_DIR``, else ``murgat_cache_home()/cache`` (``~/.cache/murgat/cache``)."""
    env = os.environ.get("MURGAT_CACHE_DIR")
    return Path(env) if env else murgat_cache_home() / "cache"


def stat_identity(st: os.stat_result) -> tuple[int, ...]:
    """Device, inode, size, modification and change times (ns): any write to the file changes
    the change time, which a user cannot set back."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of the file's bytes, computed once per file identity and kept.

    The value is exactly the SHA-256 of the bytes, as it always was, so every cache key built
    from it is unchanged. What changed is how often it is computed: hashing a one-hour video
    (1–3 GB) took seconds on every run, for every process. Now it is memoised in this process
    and kept in the media cache (namespace ``digest``) under the file's real path and
    :func:`stat_identity`, as the probe is; concurrent callers for one file wait for one
    hash (single-flight).

    What it protects is unchanged: an edited file gets a new digest, because any write changes
    the file's change time (which a user cannot set back) and a replaced file has a new inode,
    so its stat identity — the lookup key — differs and the bytes are hashed again. A file
    changed less than :data:`RACY_NS` ago is hashed but not kept (two writes within one tick of
    the file clock could leave the identity unchanged). The one case it does not cover is a
    filesystem that does not maintain change times (raw block writes, some network mounts):
    there an in-place edit that restores size and mtime would keep the old digest; such media
    should live on a normal local disk, or ``MURGAT_CACHE_DIR`` be emptied after editing.
    """
    from murgat.media.singleflight import lock_for

    st = os.stat(path)
    memo = stat_identity(st)
    with _DIGEST_LOCK:
        if memo in _DIGESTS:
            return _DIGESTS[memo]
    with lock_for(("digest", memo)):
        with _DIGEST_LOCK:
            if memo in _DIGESTS:
                return _DIGESTS[memo]
        cache = default_cache()
        key = make_key("digest", "stat:" + ":".join(map(str, memo)), path=os.path.realpath(path), v=_DIGEST_V)
        found = cache.get_json("digest", key)
        digest = found.get("sha256") if isinstance(found, dict) else None
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            digest = h.hexdigest()
            if time.time_ns() - memo[4] > RACY_NS:
                cache.put_json("digest", key, {"sha256": digest, "size": memo[2]})
        with _DIGEST_LOCK:
            _DIGESTS[memo] = digest
        return digest


def install_folder(target: Path, ready: tuple[str, ...], fill: Callable[[Path], None]) -> Path:
    """``target``, built once by ``fill(tmp)`` in a temporary folder beside it and moved into
    place with one ``os.replace``: readers see no folder or a whole one, and two processes
    installing at once race to the same result. ``ready`` names the files that mark it done."""
    if all((target / name).exists() for name in ready):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        fill(tmp)
        try:
            safewrite.move(tmp, target)
        except OSError:
            if not all((target / name).exists() for name in ready):
                raise  # not another process having won the race
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def make_key(namespace: str, digest: str, **params: Any) -> str:
    blob = json.dumps({"ns": namespace, "digest": digest, "params": params}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class MediaCache:
    """A folder of immutable entries addressed by key."""

    def __init__(self, root: str | os.PathLike[str] | None = None, max_bytes: int | None = DEFAULT_MAX_BYTES,
                 evict_every: int = 64) -> None:
        self.root = Path(root) if root is not None else cache_root()
        self.max_bytes = max_bytes
        self.evict_every = max(1, evict_every)  # a size check walks the whole tree: not on every write
        self.hits = 0
        self.misses = 0
        self._writes = 0
        self._warned = False
        self._fallback: Path | None = None

    def path(self, namespace: str, key: str, suffix: str) -> Path:
        return self.root / namespace / key[:2] / f"{key}{suffix}"

    def _touch(self, p: Path) -> None:
        with contextlib.suppress(OSError):
            os.utime(p)

    def lookup(self, namespace: str, key: str, suffix: str) -> Path | None:
        p = self.path(namespace, key, suffix)
        if p.exists():
            self.hits += 1
            self._touch(p)
            return p
        self.misses += 1
        return None

    def get_or_create(self, namespace: str, key: str, suffix: str, produce: Callable[[Path], object]) -> Path:
        """Return the entry, producing it with ``produce(tmp_path)`` when missing.

        When the cache folder cannot be written (read-only, full, not a folder) the entry is
        made in a private temporary folder instead and a warning is printed once: a broken
        cache slows a run down but never fails it.
        """
        found = self.lookup(namespace, key, suffix)
        if found is not None:
            return found
        try:
            return self._create(self.path(namespace, key, suffix), produce)
        except OSError as exc:
            self._warn(exc, "decoded media are kept in a temporary folder for this process only")
            last = exc
        try:
            if self._fallback is None:
                self._fallback = Path(tempfile.mkdtemp(prefix="murgat-nocache-"))
            fb = self._fallback / namespace / key[:2] / f"{key}{suffix}"
            return fb if fb.exists() else self._create(fb, produce, evict=False)
        except OSError as exc:  # the same limit there (ulimit -f holds for every folder): the item's error
            last = exc
        why = "the file-size limit (ulimit -f)" if last.errno == errno.EFBIG else (last.strerror or str(last))
        raise MediaUnwritable(str(self.path(namespace, key, suffix)),
                              f"a decoded {namespace} entry must be a file and cannot be written ({why})") from None

    def keep(self, namespace: str, key: str, suffix: str, produce: Callable[[Path], object]) -> Path | None:
        """Keep an entry whose content the caller already holds in memory (a decoded track, a
        transcript): best effort. When the cache cannot take it (full, read-only, a file-size
        limit: ``EFBIG`` as ``ENOSPC``) a warning is printed once and ``None`` returned; no
        fallback file is made, since it would meet the same limit and the caller needs none."""
        if self.lookup(namespace, key, suffix) is not None:
            return self.path(namespace, key, suffix)
        try:
            return self._create(self.path(namespace, key, suffix), produce)
        except OSError as exc:
            self._warn(exc, "this run goes on without keeping decoded media")
            return None

    def _warn(self, exc: OSError, then: str) -> None:
        if not self._warned:
            self._warned = True
            why = "file-size limit (ulimit -f)" if exc.errno == errno.EFBIG else (exc.strerror or str(exc))
            print(f"warning: media cache {self.root} cannot be written ({why}); {then}", file=sys.stderr)

    def _create(self, final: Path, produce: Callable[[Path], object], evict: bool = True) -> Path:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = safewrite.temp_file(final.parent, prefix=".tmp-", suffix=final.suffix)
        try:
            produce(tmp)
            safewrite.move(tmp, final)
        finally:
            safewrite.remove(tmp)
        if evict:
            self._writes += 1
            if self._writes % self.evict_every == 0:
                with contextlib.suppress(OSError):
                    self.maybe_evict()
        return final

    def put_bytes(self, namespace: str, key: str, suffix: str, data: bytes) -> Path:
        return self.get_or_create(namespace, key, suffix, _filled(data))

    def get_json(self, namespace: str, key: str) -> Any | None:
        p = self.lookup(namespace, key, ".json")
        if p is None:
            return None
        try:
            return json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            return None

    def put_json(self, namespace: str, key: str, value: Any) -> Path | None:
        """Keep a JSON entry (best effort: :meth:`keep`; the caller holds the value)."""
        data = json.dumps(value, ensure_ascii=False).encode()
        return self.keep(namespace, key, ".json", _filled(data))

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file() and not p.name.startswith(".tmp-"))

    def maybe_evict(self) -> int:
        """Remove least recently used entries until under ``max_bytes``; returns count removed."""
        if self.max_bytes is None or not self.root.exists():
            return 0
        self.root.mkdir(parents=True, exist_ok=True)
        removed = 0
        with FileLock(self.root / ".evict.lock", timeout=60):
            entries = []
            total = 0
            for p in self.root.rglob("*"):
                if p.is_file() and not p.name.startswith("."):
                    st = p.stat()
                    entries.append((st.st_mtime, st.st_size, p))
                    total += st.st_size
            if total <= self.max_bytes:
                return 0
            for _, size, p in sorted(entries):
                if total <= self.max_bytes:
                    break
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
                    total -= size
                    removed += 1
        return removed


def _filled(data: bytes) -> Callable[[Path], None]:
    """A producer writing ``data`` into the temporary file the cache made for the entry."""
    def fill(p: Path) -> None:
        with safewrite.open_file(p, "w") as f:
            f.write(data)

    return fill


_DEFAULT: MediaCache | None = None


def default_cache() -> MediaCache:
    """The process-wide cache (re-created when ``MURGAT_CACHE_DIR`` changes)."""
    global _DEFAULT
    if _DEFAULT is None or _DEFAULT.root != cache_root():
        cap = os.environ.get("MURGAT_CACHE_MAX_BYTES")
        _DEFAULT = MediaCache(max_bytes=int(cap) if cap else DEFAULT_MAX_BYTES)
    return _DEFAULT
