"""May this command write there? The one "never write over what you do not own" rule, and the one writer.

Why: commands used to decide this each on their own, and several did not: ``export --out
RUN/results.jsonl`` replaced a run's records, ``export --out /dev/stdout`` (as root) replaced the
device link with a regular file, ``view`` wrote through a ``report.html`` symlink into a file
outside the run folder, ``ground --out`` over a score run replaced its ``results.jsonl`` and
``config.json``. Every output path a user names (``--out``, a page, an export, a gold file, and
for the run commands ``--cache`` and ``--record``) is claimed here first, with one call::

    claim = claim_output(path, role="file", inputs=[...])      # refused -> OutputRefused, exit 2
    claim.write_text(page)                                        # failed  -> ResultsWriteError, exit 5

Rules, checked before any work (a refusal touches nothing and names the path and the reason):

1. **Inputs.** The output is never one of the command's own input files (same path, or the
   same file through a link: compared by device and inode).
2. **Run state.** Inside a run folder (:func:`~murgat.engine.folder.read_kind` names it) the
   files the run resumes from — ``config.json``, ``results.jsonl``, ``summary.json``,
   ``cache.sqlite``, ``responses.jsonl``, ``traces.jsonl``, ``.lock``, … (:data:`RUN_STATE`) —
   are written by that run's command only (a folder claim of the same kind owns them), whether
   they exist yet or not. A run's ``cache.sqlite`` may be named as another run's ``--cache``:
   sharing a cache is safe by design.
3. **Murgat data of another sort.** An existing file that murgat recognises (:func:`content_of`:
   a SQLite database, a replay cassette, run results or traces, model responses, human labels,
   gold evidence) is replaced only by a command that writes that sort (``replaces=``): an
   export never replaces a cassette or a gold file, ``--cache`` never takes over a JSONL file,
   ``--record`` appends only to a cassette.
4. **Non-regular targets.** A character device or FIFO (``/dev/null``, a named pipe) and the
   process's own descriptors (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``,
   ``/proc/self/fd/N``) are *streamed into* by a whole-file output (``role="file"``: an export,
   a page, a gold file) and never replaced; the status line then goes to stderr. Every other
   role refuses them (a database or a cassette must be a file), and so does every role for a
   block device, a socket or a folder where a file is meant.
5. **Symlinks.** An output that is a symbolic link is written at its target only when the
   target lies inside the folder that holds the link (``RUN/report.html`` → ``RUN/pages/x.html``
   keeps working); a link out of that folder is refused rather than written through.
6. **Other commands' folders.** A folder claim (``role="folder"``, ``kind=`` what the command
   writes) refuses a folder that holds a run of another kind, or, when nothing says what it
   holds, any of the files the command would write (``files=``); a plain output folder
   (``kind=None``: ``media evidence``) refuses every run folder.
7. **Writable.** The folder is made if needed and must take a file (a folder claim: the 64 KiB
   probe of :func:`~murgat.engine.folder.check_writable_dir`); an unwritable place is refused
   here, not found out by a traceback after the work.

Writing (:meth:`Claim.write`): a regular file is made anew through a temporary file in the same
folder, fsync'd and moved into place with ``os.replace`` — a reader, a crash or a file-size
limit sees the old file or the new one, never half a page; the old file's permissions are kept
(a new file gets the umask's). A failure while writing (disk full, ``RLIMIT_FSIZE``) removes the
temporary file and raises :class:`~murgat.core.jsonl.ResultsWriteError` (exit 5: "what was written is
intact"). A stream target is opened and written in place (a descriptor is written through a
duplicate of it, so a shell's ``>>`` is respected).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from murgat.core.jsonl import ResultsWriteError, loads_line
from murgat.engine.folder import NotWritable, RunConfigMismatch, check_writable_dir, read_kind
from murgat.media import safewrite

Role = Literal["file", "folder", "cache", "cassette"]

#: files a run resumes from or locks: written only by the run's own command
RUN_STATE = frozenset({
    "config.json", "results.jsonl", "results.corrupt.jsonl", "summary.json", "cache.sqlite", "cache.sqlite-wal",
    "cache.sqlite-shm", "cache.sqlite-journal", "responses.jsonl", "responses.corrupt.jsonl", "traces.jsonl",
    "traces.corrupt.jsonl", "program.json", "variants.json", "sweep.json", ".lock",
})
#: a run's cache files, which another run may share as its --cache
_CACHE_FILES = frozenset({"cache.sqlite"})
_CACHE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: the process's own descriptors, written through (never replaced)
_DESCRIPTOR = re.compile(r"^/(?:dev/(?:stdout|stderr|fd/(\d+))|proc/self/fd/(\d+))$")
_STD_FD = {"/dev/stdout": 1, "/dev/stderr": 2}
_SNIFF_BYTES = 1 << 20

#: what :func:`content_of` recognises, as the refusals name it
CONTENT = {
    "sqlite": "a SQLite database (a judge cache)",
    "cassette": "a replay cassette (recorded judge answers)",
    "results": "a run's results",
    "traces": "a run's traces",
    "labels": "human labels",
    "gold": "a gold evidence file",
    "responses": "model responses (an input murgat scores)",
}


class OutputRefused(RunConfigMismatch, NotWritable):
    """murgat will not write this output (not its to write, or not writable); nothing was touched.

    A :class:`~murgat.engine.folder.RunConfigMismatch` so that the command line turns it into
    ``error: …`` and exit 2 wherever it is raised, and a
    :class:`~murgat.engine.folder.NotWritable` for the code that already catches that."""


def content_of(path: str | os.PathLike[str]) -> str | None:
    """Which sort of murgat data an existing regular file holds (a :data:`CONTENT` key), or ``None``.

    Read from the first 16 bytes (SQLite) or the first JSON line's keys (up to 1 MiB read; a
    longer first line is read by its key names); a line that is no JSON object is no murgat data.
    Blank lines before it are passed over, as every murgat JSONL reader passes over them (a
    hand-written cassette opening with an empty line is still a cassette), and so is a UTF-8 byte
    order mark (a responses file saved by an editor); a JSON list is read by its first object
    (responses in the authors' format)."""
    try:
        with open(path, "rb") as f:
            head = f.read(_SNIFF_BYTES)
    except OSError:
        return None
    if head.startswith(_SQLITE_MAGIC):
        return "sqlite"
    keys = _first_keys(head.decode("utf-8", "replace").lstrip("\ufeff"))
    if keys is None:
        return None
    if "output" in keys and keys & {"match", "key"}:
        return "cassette"
    if {"case", "scores"} <= keys or "steps" in keys:
        return "results"
    if "trace" in keys:
        return "traces"
    if "annotator" in keys:
        return "labels"
    if "evidence" in keys and "id" in keys:
        return "gold"
    if keys & {"response", "model_generation", "original_full_generation"}:  # murgat's and the authors' spellings
        return "responses"
    return None


def _first_keys(text: str) -> set[str] | None:
    """The keys of the first record of a JSONL text, or of the first object of a JSON list (the
    authors' format of model responses), or ``None`` when the text is no JSON record."""
    body = text.lstrip()
    if body.startswith("["):
        try:
            doc = loads_line(body)
            first = doc[0] if isinstance(doc, list) and doc else None
            return set(first) if isinstance(first, dict) else None
        except ValueError:  # longer than what was read: its first object's key names
            start = body.find("{")
            return set(re.findall(r'"([A-Za-z_]+)"\s*:', body[start:body.find("}", start) + 1 or None])) \
                if start >= 0 else None
    line = next((ln for ln in body.split("\n") if ln.strip()), "").strip()
    if not line.startswith("{"):
        return None
    try:
        doc = loads_line(line)
        return set(doc) if isinstance(doc, dict) else set()
    except ValueError:
        return set(re.findall(r'"([A-Za-z_]+)"\s*:', line))  # a first line longer than what was read


@dataclass
class Claim:
    """An output this command may write: ``path`` as the user named it, ``target`` what is written
    (a link's target inside its folder, else ``path``), and ``stream``: a device, FIFO or descriptor
    written in place. A folder claim hands out the claims of the files inside (:meth:`file`)."""

    path: Path
    target: Path
    role: Role
    stream: bool = False
    fd: int | None = None
    inputs: tuple[Path, ...] = ()
    kind: str | None = None
    _files: dict[str, Claim] = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- a folder's files

    def file(self, name: str, replaces: Sequence[str] = ()) -> Claim:
        """The claim of ``name`` inside this folder (checked by the file rules; the folder's own
        run-state files are this command's to write)."""
        if self.role != "folder":
            raise ValueError("file() is for folder claims")
        if name not in self._files:
            self._files[name] = _claim_file(self.target / name, "file", self.inputs, tuple(replaces),
                                            boundary=self.target, own=True, what=str(self.path / name))
        return self._files[name]

    # ---------------------------------------------------------------- writing

    def write(self, fill: Callable[[IO[bytes]], object]) -> Path:
        """Make the file with ``fill(binary_file)``: atomically for a regular file, in place for a
        stream. Returns the path written (as named). Raises ResultsWriteError on a failed write."""
        if self.role != "file":
            raise ValueError(f"a {self.role} claim is opened by its owner, not written here")
        if self.stream:
            self._write_stream(fill)
        else:
            _replace(self.target, fill, self.path)
        return self.path

    def write_text(self, text: str) -> Path:
        data = text.encode("utf-8")
        return self.write(lambda f: f.write(data))

    def write_bytes(self, data: bytes) -> Path:
        return self.write(lambda f: f.write(data))

    def copy_from(self, source: str | os.PathLike[str]) -> Path:
        """A copy of ``source`` (a regular file), whole or not at all."""
        def fill(f: IO[bytes]) -> None:
            with open(source, "rb") as src:
                shutil.copyfileobj(src, f, 1 << 20)

        return self.write(fill)

    def append_bytes(self, data: bytes) -> None:
        """Append ``data`` in place (a cassette, a log), durable on return, never through a link
        out of the file's folder. Raises ResultsWriteError on a failed write."""
        if self.role not in ("cassette", "file") or self.stream:
            raise ValueError(f"a {self.role} claim is not appended to")
        try:
            safewrite.append_bytes(self.target, data)
        except OSError as exc:
            raise _write_error(self.path, exc) from exc

    def _write_stream(self, fill: Callable[[IO[bytes]], object]) -> None:
        try:
            if self.fd is not None:
                for s in (sys.stdout, sys.stderr):  # what Python has buffered for the descriptor comes first
                    try:
                        s.flush()
                    except (OSError, ValueError):
                        pass
                with safewrite.dup_stream(self.fd) as f:
                    fill(f)
            else:
                with safewrite.open_stream(self.target) as f:
                    fill(f)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _write_error(self.path, exc) from exc


def is_stream(path: str | os.PathLike[str]) -> bool:
    """Whether an output at ``path`` is streamed into (a descriptor of this process, a character
    device, a FIFO) rather than made as a file: where a command's status line must not go."""
    p = Path(path)
    if _descriptor(p) is not None:
        return True
    try:
        mode = os.stat(p).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _write_error(path: Path, exc: OSError) -> ResultsWriteError:
    err = ResultsWriteError(f"cannot write {path}: {exc.strerror or exc}")
    err.errno = exc.errno
    return err


def _replace(target: Path, fill: Callable[[IO[bytes]], object], named: Path) -> None:
    """``target`` anew through the write gateway (:func:`murgat.media.safewrite.replace`: a random
    temporary name beside it, fsync'd, ``os.replace``; the old file's permissions kept)."""
    try:
        safewrite.replace(target, fill)
    except OSError as exc:
        raise _write_error(named, exc) from exc


# ---------------------------------------------------------------- the rule


def claim_output(path: str | os.PathLike[str], *, role: Role = "file",
                 inputs: Iterable[str | os.PathLike[str] | None] = (), kind: str | None = None,
                 files: Sequence[str] = (), replaces: Sequence[str] = (), what: str | None = None) -> Claim:
    """Check that this command may write ``path`` (module docstring, rules 1-7) and return its claim.

    ``role``: ``file`` (written whole: a page, an export, a gold file), ``folder`` (a folder the
    command fills: ``kind`` is the run kind it writes, or ``None`` for a plain output folder;
    ``files`` the names it writes there, checked now), ``cache`` (a SQLite database opened in
    place) or ``cassette`` (JSONL appended in place). ``inputs``: the command's input files
    (``None`` entries are skipped). ``replaces``: the :data:`CONTENT` sorts a ``file`` output may
    replace (a gold import replaces ``gold``). ``what`` names the output in messages (default:
    the path). Raises :class:`OutputRefused`."""
    p = Path(path)
    ins = tuple(Path(i) for i in inputs if i is not None and str(i) != "")
    label = what or str(p)
    if role == "folder":
        return _claim_folder(p, kind, tuple(files), ins, label)
    if kind is not None or files:
        raise ValueError("kind and files are for folder claims")
    return _claim_file(p, role, ins, tuple(replaces), boundary=None, own=False, what=label)


def _refuse(what: str, why: str) -> OutputRefused:
    return OutputRefused(f"{what}: {why}")


def _descriptor(p: Path) -> int | None:
    text = os.path.normpath(os.path.abspath(p))
    if text in _STD_FD:
        return _STD_FD[text]
    m = _DESCRIPTOR.match(text)
    if m is None:
        return None
    return int(m.group(1) or m.group(2))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _claim_descriptor(p: Path, fd: int, role: Role, inputs: tuple[Path, ...], what: str) -> Claim:
    """Rule 4 for the process's own descriptors: streamed into by a whole-file output only."""
    if role != "file":
        raise _refuse(what, f"is a descriptor of this process; a {role} must be a regular file")
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        raise _refuse(what, f"descriptor {fd} is not open") from None
    if flags & os.O_ACCMODE not in (os.O_WRONLY, os.O_RDWR):
        raise _refuse(what, f"descriptor {fd} is not open for writing")
    return Claim(path=p, target=p, role=role, stream=True, fd=fd, inputs=inputs)


def _lstat(p: Path, what: str) -> os.stat_result | None:
    try:
        return os.lstat(p)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _refuse(what, f"cannot be written ({exc.strerror or exc})") from None


def _follow_link(p: Path, folder: Path, what: str) -> tuple[Path, os.stat_result | None]:
    """Rule 5: a symbolic link is written at its target only inside ``folder``."""
    real = os.path.realpath(p)
    if not _inside(real, str(folder)):
        raise _refuse(what, f"is a symbolic link to {real}, outside {folder}; murgat does not write through it "
                            "(name the file itself, or remove the link)")
    target = Path(real)
    try:
        return target, os.stat(target)
    except FileNotFoundError:
        return target, None
    except OSError as exc:  # a loop of links (ELOOP) or a target that cannot be looked at
        raise _refuse(what, f"is a symbolic link that cannot be followed ({exc.strerror or exc}); "
                            "name the file itself, or remove the link") from None


def _check_run_state(target: Path, role: Role, own: bool, what: str) -> None:
    """Rule 2: a run's resume files are written by that run's command only."""
    name, parent = target.name, target.parent
    if role == "cache" and name.endswith(safewrite.SQLITE_SIDES):
        raise _refuse(what, f"is a name SQLite gives the file beside a database ({name}); opening it as a "
                            "cache would delete that database's unsaved answers — name the database itself")
    if not own and name in RUN_STATE and not (role == "cache" and name in _CACHE_FILES):
        k = read_kind(parent) if parent.is_dir() else None
        if k is not None:
            raise _refuse(what, f"is part of the '{k}' run in {parent} ({name}); only that run's command writes it "
                                "— choose another output")


def _check_existing(target: Path, st: os.stat_result, role: Role, replaces: tuple[str, ...], what: str) -> bool:
    """Rules 3 and 4 for a file that exists: what it is may refuse it; ``True`` when it is a
    character device or FIFO that a whole-file output streams into."""
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise _refuse(what, f"is a folder; a {role} must be a file")
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        if role != "file":
            raise _refuse(what, f"is a device or pipe, not a regular file; a {role} must be a regular file")
        if not os.access(target, os.W_OK):
            raise _refuse(what, "cannot be written (permission denied)")
        return True
    if not stat.S_ISREG(mode):
        raise _refuse(what, "is not a regular file (a block device or socket); murgat writes only files, "
                            "character devices and pipes")
    sort = content_of(target)
    if role == "file" and sort is not None and sort not in replaces:
        raise _refuse(what, f"holds {CONTENT[sort]}; murgat does not replace it with this output "
                            "— choose another file")
    if role == "cache" and sort != "sqlite" and st.st_size > 0:
        if sort is not None or not target.name.endswith(_CACHE_SUFFIXES):
            held = CONTENT[sort] if sort else "a file that is not a SQLite database"
            raise _refuse(what, f"holds {held}; a cache must be a SQLite database (or a new file)")
    if role == "cassette" and sort != "cassette" and st.st_size > 0:
        held = CONTENT[sort] if sort else "a file that is not a replay cassette"
        raise _refuse(what, f"holds {held}; cassette lines are appended only to a cassette (or a new file)")
    return False


def _check_writable(target: Path, boundary: Path | None, folder: Path, what: str) -> None:
    """Rule 7: the folder takes a file (inside a folder claim: reached through no link out of it)."""
    if boundary is None:
        _probe_folder(target.parent, what)
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _refuse(what, f"cannot be written ({exc.strerror or exc})") from None
    if not _inside(os.path.realpath(target.parent), str(folder)):
        raise _refuse(what, f"is reached through a symbolic link out of {folder}; murgat does not write through it")


def _claim_file(p: Path, role: Role, inputs: tuple[Path, ...], replaces: tuple[str, ...], *, boundary: Path | None,
                own: bool, what: str) -> Claim:
    """The file rules (module docstring) in order; ``boundary``: the folder claim it lies in."""
    fd = _descriptor(p)
    if fd is not None:
        return _claim_descriptor(p, fd, role, inputs, what)
    target = p
    folder = Path(os.path.realpath(boundary if boundary is not None else (p.parent if str(p.parent) else Path("."))))
    st = _lstat(p, what)
    if st is not None and stat.S_ISLNK(st.st_mode):
        target, st = _follow_link(p, folder, what)
    for i in inputs:  # 1. inputs
        if _same_file(i, target):
            raise _refuse(what, f"is an input of this command ({i}) and would be overwritten; choose another output")
    _check_run_state(target, role, own, what)
    if st is not None and _check_existing(target, st, role, replaces, what):
        return Claim(path=p, target=target, role=role, stream=True, inputs=inputs)
    _check_writable(target, boundary, folder, what)
    return Claim(path=p, target=target, role=role, inputs=inputs)


def _probe_folder(folder: Path, what: str) -> None:
    """Make ``folder`` (and what is missing above it) and prove a file can be made in it; a
    refusal removes the folders it made."""
    made: list[Path] = []
    probe = folder
    while not probe.exists() and probe != probe.parent:
        made.append(probe)
        probe = probe.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        safewrite.remove(safewrite.temp_file(folder, prefix=".write-test-", suffix=""))
    except OSError as exc:
        for d in made:
            try:
                d.rmdir()
            except OSError:
                break
        reason = "read-only file system" if exc.errno == errno.EROFS else (
            f"{exc.filename} is not a folder" if exc.errno in (errno.ENOTDIR, errno.EEXIST) and exc.filename
            else exc.strerror or str(exc))
        raise _refuse(what, f"cannot be written ({reason})") from None


def _claim_folder(p: Path, kind: str | None, files: tuple[str, ...], inputs: tuple[Path, ...], what: str) -> Claim:
    if _descriptor(p) is not None or (p.exists() and not p.is_dir()):
        raise _refuse(what, "is not a folder; this output is a folder")
    for i in inputs:
        if p.exists() and _same_file(i, p):
            raise _refuse(what, "is an input folder of this command; choose another output folder")
    if p.is_dir():
        k = read_kind(p)
        if kind is None and k is not None:
            raise _refuse(what, f"is a murgat '{k}' run folder; choose another output folder")
        if kind is not None and k is not None and k != kind:
            raise _refuse(what, f"holds a '{k}' run, not '{kind}'; use a new --out folder")
        if kind is not None and k is None:
            theirs = [n for n in files if (p / n).exists()]
            if theirs:
                raise _refuse(what, f"holds {', '.join(theirs)}, which no murgat {kind} run wrote; "
                                    "use a new --out folder")
    try:
        check_writable_dir(p, "the output folder")
    except NotWritable as exc:
        raise OutputRefused(str(exc)) from None
    claim = Claim(path=p, target=Path(os.path.realpath(p)), role="folder", inputs=inputs, kind=kind)
    for n in files:
        claim.file(n)
    return claim
