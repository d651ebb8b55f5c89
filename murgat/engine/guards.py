"""What every command does around its run, in one place: select the items, check where the run
will write (:func:`check_outputs`), and hold its outputs — writable, locked, and removed again
when the run is refused before any work (:func:`held`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from murgat.core.schema import Item
from murgat.engine.errors import CommandError, SettingsError
from murgat.engine.folder import check_writable_dir
from murgat.engine.outputs import Claim, OutputRefused, claim_output
from murgat.engine.runlock import RunLock


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
    #: folders :func:`check_outputs` made while proving the outputs writable (removed again, as
    #: :func:`held`'s own, when the run is refused before any work)
    made: list[Path] = field(default_factory=list)

    @property
    def run_folder(self) -> Path:
        """The folder that holds the run (a scratch folder's parent: ``score --dry-run`` works in
        ``OUT/.dry-run`` for the run in ``OUT``)."""
        return self.folder.parent if self.scratch else self.folder


#: what a run's own appended files may hold already (:data:`~murgat.engine.outputs.CONTENT` sorts):
#: records, which a rerun appends to or adopts (``generate`` checks whose responses they are) —
#: never a cache, a cassette, labels or gold evidence
_RECORDS = ("responses", "results", "traces")


def input_file(spec: str | Path) -> Path:
    """The file an input names: ``videommmu:PATH``, ``nextgqa:PATH`` name ``PATH`` (a path that exists
    as written is that path); a folder (a ``generate`` run, ``import inspect``'s output) is read as its
    ``responses.jsonl``, the input file — the folder itself may hold the run (``score DIR --out DIR``)."""
    text = str(spec)
    path = Path(text.split(":", 1)[1]) if ":" in text and not Path(text).exists() else Path(text)
    return path / "responses.jsonl" if path.is_dir() else path


def replay_cassettes(s: Any) -> list[Path]:
    """Every cassette the run replays from: each ``replay:PATH`` role (``--judge``, ``--model``,
    ``--planner``, …) and each ``path=`` option of ``-J``/``-M``/``-P`` (how a replay judge may be
    pointed at its cassette). Inputs like any other: never a cache or a recording."""
    found: list[Path] = []
    for name in type(s).model_fields:
        value = getattr(s, name)
        if isinstance(value, str) and value.lower().startswith("replay:") and value[7:]:
            found.append(Path(value[7:]))
        elif name.endswith("_option") and isinstance(value, list):
            found += [Path(v.split("=", 1)[1]) for v in value if isinstance(v, str) and v.startswith("path=")]
    return found


def check_outputs(s: Any, outputs: Outputs, kind: str | None = None) -> None:
    """The one place the output paths of a run command are checked, before anything is written
    (each refusal is exit 2 and names the path and why; nothing is touched):

    * no output is one of the run's inputs (the input file, ``--from``/``--base``/``--baseline``,
      a replayed cassette);
    * ``--out``: claimed as a folder of this command's ``kind`` (not another command's run), and
      each file the run writes outside its folder's streams (``generate --out FILE.jsonl``, each
      variant's files) as this run's own, by the rule of :mod:`murgat.engine.outputs`;
    * ``--cache``: a SQLite database or a new file, never an input, a run's records or another
      run's files (another run's ``cache.sqlite`` may be shared);
    * ``--record``: a cassette or a new file, never an input, the cache or a run's files.

    Before, ``--cache in.jsonl`` moved the input aside as ``in.jsonl.corrupt-<time>`` and put a
    database in its place, and ``--record in.jsonl`` appended cassette lines to the input."""
    inputs = [input_file(i) for i in outputs.inputs if i] + replay_cassettes(s)
    top = outputs.run_folder
    places = [top, *(w for w, _ in outputs.writable),
              *(Path(p).parent for p in (getattr(s, "cache", None), getattr(s, "record", None)) if p)]
    firsts = {m for m in (_first_missing(p) for p in places) if m is not None}
    try:
        for where, what in [(top, "--out"), *outputs.writable]:  # the reason a place cannot be written, first
            check_writable_dir(where, what)
        folder = claim_output(top, role="folder", kind=kind, inputs=inputs, what=f"--out {top}")
        own = [top / "results.jsonl", *outputs.files]
        _own_file(folder, outputs.folder / "results.jsonl", inputs)  # never an input (a hard link to one either)
        for f in outputs.files:
            _appended(_own_file(folder, Path(f), inputs), f)
        claim_judge_files(s, [*inputs, *own])
    except SettingsError:
        for m in firsts:
            if m.is_dir():
                _remove_made(m)
        raise
    outputs.made += [m for m in firsts if m.exists()]


def claim_judge_files(s: Any, inputs: Sequence[Path]) -> None:
    """``--cache`` (a SQLite database or a new file, never an input, a run's records, a responses
    file or SQLite's ``-wal``/``-shm`` beside another database) and ``--record`` (a cassette or a
    new file, never an input or the cache): every command that asks a judge — the run commands
    and ``judge check`` — claims them here before anything is opened."""
    if getattr(s, "cache", None):
        claim_output(s.cache, role="cache", inputs=inputs, what=f"--cache {s.cache}")
    if getattr(s, "record", None):
        claim_output(s.record, role="cassette", inputs=[*inputs, s.cache_path()], what=f"--record {s.record}")


def _own_file(folder: Claim, path: Path, inputs: list[Path]) -> Claim:
    """The claim of a file the run appends to: through the folder's claim when it lies inside it,
    else as a file of its own (``generate --out FILE.jsonl``)."""
    replaces = _RECORDS
    try:
        rel = path.absolute().relative_to(folder.path.absolute())
    except ValueError:
        return claim_output(path, role="file", replaces=replaces, inputs=inputs, what=f"--out {path}")
    return folder.file(str(rel), replaces=replaces)


def _appended(claim: Claim, path: Path) -> None:
    """A file the run appends records to must be a regular file (a device or pipe would be replaced
    by the compaction at the end of the run)."""
    if claim.stream:
        raise OutputRefused(f"--out {path}: is a device, pipe or descriptor; the run appends records to a regular "
                            "file (name a file)")


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
    state = Held(made=[*(m for m in firsts if m is not None), *outputs.made],
                 new_locks=[lk for lk in lock_files if not lk.exists()])
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
