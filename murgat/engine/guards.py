"""What every command does around its run, in one place: select the items, check where the run
will write (:func:`check_outputs`), and hold its outputs — writable, locked, and removed again
when the run is refused before any work (:func:`held`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from murgat.engine.errors import CommandError, SettingsError
from murgat.engine.folder import check_writable_dir, refuse_own_outputs
from murgat.runlock import RunLock
from murgat.schema import Item


def select_items(items: list[Item], ids: str | None, limit: int | None) -> list[Item]:
    """``--ids a,b`` then ``--limit N`` (the settings already refused a negative N). Selecting nothing is a
    settings error: a run of no items would rewrite the folder's summary to nothing."""
    picked = items
    if ids is not None:
        keep = {i.strip() for i in ids.split(",") if i.strip()}
        picked = [i for i in picked if i.id in keep]
    if limit is not None:
        picked = picked[:limit]
    if not picked and (ids is not None or limit is not None):
        raise SettingsError("--ids/--limit select no items")
    return picked


@dataclass
class Outputs:
    """Where a run writes: its run folder, the files it writes outside the folder's own streams
    (``generate --out FILE.jsonl``, each variant's readable files) and what it reads (never one of
    those). ``scratch``: the folder is the run's own working space, removed at its end
    (``score --dry-run``)."""

    folder: Path
    files: list[Path] = field(default_factory=list)
    inputs: list[str | None] = field(default_factory=list)
    #: other places that must be writable before any work: (folder, the option that names it)
    writable: list[tuple[Path, str]] = field(default_factory=list)
    #: files locked besides the folder (a responses file two spellings of ``--out`` can both name)
    locked_files: list[Path] = field(default_factory=list)
    scratch: bool = False


def check_outputs(s: Any, outputs: Outputs) -> None:
    """The one place the output paths of a run command are checked, before anything is written:
    no output may be one of the run's inputs (exit 2, nothing touched)."""
    refuse_own_outputs(outputs.inputs, [outputs.folder / "results.jsonl", *outputs.files])


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (what making it creates), or None."""
    missing = None
    for p in [path.absolute(), *path.absolute().parents]:
        if p.exists():
            break
        missing = p
    return missing


#: what a refused run may have made in a folder it created (anything else there is left alone)
_MADE = frozenset({".lock", "config.json", "cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"})


def _remove_made(top: Path) -> None:
    """Remove the folder ``top`` this run created, and what it made there, bottom up; a file this run
    did not make keeps its folders."""
    for sub in sorted((p for p in [top, *top.rglob("*")] if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        for f in sub.iterdir():
            if f.is_file() and f.name in _MADE:
                f.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            sub.rmdir()


@dataclass
class Held:
    """The outputs of a run while it holds them: the folders and lock files it made (see :func:`held`)."""

    made: list[Path]
    new_locks: list[Path]

    def remove_made(self) -> None:
        for p in self.new_locks:
            with contextlib.suppress(OSError):
                p.unlink()
        for top in self.made:
            if top.is_dir():
                _remove_made(top)


@contextlib.contextmanager
def held(outputs: Outputs) -> Iterator[Held]:
    """Prove the outputs writable and lock them for the block. A run refused before any work (a
    :class:`~murgat.engine.errors.CommandError` of exit 2) leaves nothing it created: the folders it
    made and its lock files go again."""
    firsts = {_first_missing(outputs.folder), *(_first_missing(p.parent) for p in outputs.locked_files),
              *(_first_missing(w) for w, _ in outputs.writable)}
    lock_files = [outputs.folder / ".lock", *(p.with_name(p.name + ".lock") for p in outputs.locked_files)]
    state = Held(made=[m for m in firsts if m is not None], new_locks=[lk for lk in lock_files if not lk.exists()])
    locks: list[RunLock] = []
    try:
        for where, what in [(outputs.folder, "--out"), *outputs.writable]:
            check_writable_dir(where, what)
        locks.append(RunLock(outputs.folder).acquire())
        locks += [RunLock(p, is_dir=False).acquire() for p in outputs.locked_files]
        yield state
    except CommandError as exc:
        _release(locks)
        if exc.code == 2:
            state.remove_made()
        raise
    finally:
        _release(locks)


def _release(locks: Sequence[RunLock]) -> None:
    for lock in reversed(locks):
        lock.release()
