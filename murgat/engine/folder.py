"""The run folder every command writes: ``config.json``, ``results.jsonl``, ``cache.sqlite``,
``summary.json``, ``report.html``.

What a folder holds is named by its ``kind`` (``score``, ``faithfulness``, ``reflect``,
``program``, ``generate``, ``sweep``), written in ``config.json`` next to the settings
fingerprint; ``view`` and ``summarize`` dispatch on it (:func:`read_kind` also recognises
folders written before the kind was recorded). ``config.json`` is written atomically
(temporary file, then ``os.replace``); a folder whose fingerprint differs from the settings
of this invocation is refused (:class:`RunConfigMismatch`) unless ``--overwrite``
(:meth:`RunFolder.reset`) starts it again.

Each record may carry ``input_digest``: a digest of what was scored (the item's response,
question, options, media identity). A record whose digest differs from the item's digest
now is stale — the input was edited — and the item is done again (the engine counts them);
records written before digests existed have none and are kept.

``results.jsonl`` is append-only: each finished item is one line, written with a single
``write`` then ``flush`` + ``fsync``, so a crash loses at most the items in flight. On
open, a torn last line (a crash mid-write) is cut off, and any other line that does not
decode as a result (a disk fault, a hand edit) is moved to ``results.corrupt.jsonl`` with
a notice; those items are scored again. Re-running the same command skips every id
already in the file. One process at a time holds the folder (:class:`~murgat.engine.runlock.RunLock`).
"""

from __future__ import annotations

import errno
import json
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from murgat.core.jsonl import (
    BadLine,
    ResultsWriteError,
    append_lines,
    cut_torn_tail,
    dumps,
    loads_line,
    quarantine_lines,
    read_records,
)
from murgat.core.redact import redact
from murgat.core.schema import ResponseResult, RunSummary
from murgat.engine.errors import SettingsError
from murgat.engine.fingerprint import without_transport
from murgat.media import safewrite

#: what a run folder can hold; ``config.json`` says which
KINDS = ("score", "faithfulness", "reflect", "program", "generate", "sweep", "ground")
# (a program run's variant subfolder reads as "program-variant": view and summarize point to the run)


class RunConfigMismatch(SettingsError):
    """The run folder was made with settings that change the work (or by another command, or it
    lost the record of its settings); refuse to mix them (exit 2)."""


class NotWritable(SettingsError):
    """An output location cannot be written; raised before any work starts (exit 2)."""


PROBE_BYTES = 64 * 1024  # about what a run writes before its first result: lock, config.json, an empty cache


def check_writable_dir(path: str | os.PathLike[str], what: str) -> None:
    """Create ``path`` if needed and prove ``PROBE_BYTES`` can be written in it, or raise :class:`NotWritable`.

    An empty file is not proof: a full disk still has inodes, so it passes and the run then
    fails on its first real write. Random bytes, because a compressing file system stores
    zeros in no space at all; written to the end, because a nearly full disk writes short."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        tmp = safewrite.temp_file(p, prefix=".write-test-", suffix="")
        fd = safewrite.open_fd(tmp, "w")
        try:
            left = memoryview(os.urandom(PROBE_BYTES))
            while left:
                n = os.write(fd, left)
                if n <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                left = left[n:]
        finally:
            os.close(fd)
            safewrite.remove(tmp)
    except OSError as exc:
        reason = "read-only file system" if exc.errno == errno.EROFS else (exc.strerror or str(exc))
        if p.is_symlink() and not p.exists():  # mkdir says "File exists" of a dangling link or a loop
            reason = f"it is a symbolic link that leads to no folder ({os.readlink(p)}): a loop or a missing target"
        raise NotWritable(f"cannot write to {what} {p}: {reason}") from None


def canonical_json(value: Any) -> Any:
    """JSON values only, with sets turned into sorted lists (no Python reprs on disk)."""
    if isinstance(value, dict):
        return {str(k): canonical_json(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, set | frozenset):
        return sorted(canonical_json(v) for v in value)
    if isinstance(value, list | tuple):
        return [canonical_json(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    return str(value)


#: what a slim record leaves out (the per-sentence and per-step detail), in both readings of a line
_SLIM_DROPS = ("sentences", "steps")


def _slim_dict(rec: dict[str, Any]) -> None:
    """Drop :data:`_SLIM_DROPS` from a decoded record, in place; a record from before ``n_time_like``
    gets its count from the sentences first (summaries need it)."""
    sents = rec.get("sentences")
    if sents and "n_time_like" not in rec:
        rec["n_time_like"] = sum(len((s.get("sentence") or {}).get("time_like") or []) for s in sents if isinstance(s, dict))
    for name in _SLIM_DROPS:
        rec.pop(name, None)


class RunFolder:
    """One run folder. ``repair=True`` (the lock holder, i.e. ``score``) cuts a torn tail and
    moves corrupt lines aside; readers such as ``summarize`` pass ``repair=False`` and only
    skip such lines, because a live run may be writing the file at that moment."""

    def __init__(self, path: str | Path, repair: bool = True, record: type[Any] | None = ResponseResult,
                 results: str | Path = "results.jsonl", required: frozenset[str] | None = None) -> None:
        self.path = Path(path)
        self.repair = repair
        #: the record model (pydantic); ``None`` keeps records as JSON objects (``generate``'s responses)
        self.record = record
        #: keys every record of this stream was written with: a line without them (a bare ``{"id": …}``,
        #: a hand edit) is not a finished item — it is moved aside and the item done again
        self.required = required if required is not None else _REQUIRED.get(record, frozenset())
        self._results = self.path / results
        if repair:
            self.path.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.notices: list[str] = []
        self._slim: list[Any] = []
        self._slim_stamp: tuple[int, int] | None = (-1, -1)
        self._last_line: dict[str, int] = {}  # id -> line of its latest record, from the slim scan
        if repair:
            cut_torn_tail(self.results_path)
        self.load_results(slim=True)

    @property
    def results_path(self) -> Path:
        return self._results

    @property
    def corrupt_path(self) -> Path:
        return self._results.with_name(self._results.stem + ".corrupt.jsonl")

    @property
    def cache_path(self) -> Path:
        return self.path / "cache.sqlite"

    def _scan(self, slim: bool = False, want: set[str] | None = None, lines: bool = False) -> Any:
        """Load every result (one line at a time); lines that do not decode are moved aside (once)
        with a notice. ``slim`` drops the per-sentence detail (what summaries need, at a fraction
        of the memory); ``want`` keeps only those ids."""
        out: list[Any] = []
        bad: list[BadLine] = []
        last: dict[str, int] = {}
        if self.results_path.exists():
            with open(self.results_path, encoding="utf-8", errors="surrogateescape", newline="") as f:
                for lineno, line in enumerate(_lines(f), 1):
                    if not line.strip():
                        continue
                    if not _is_utf8(line):  # bytes that are not UTF-8 (read as lone surrogates): a bad line
                        bad.append(BadLine(lineno, line.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
                                           "not UTF-8"))
                        continue
                    fast = self._parse_finished(line, slim)
                    if fast is not None:  # the common line: a finished record, read in one step
                        rid = record_id(fast)
                        if want is None or rid in want:
                            out.append(fast)
                            last[rid] = lineno
                        continue
                    try:
                        rec = loads_line(line)
                    except ValueError as exc:
                        bad.append(BadLine(lineno, line, str(exc)))
                        continue
                    try:
                        self._check_required(rec)  # before slim drops the heavy fields
                    except ValueError as exc:
                        bad.append(BadLine(lineno, line, str(exc)))
                        continue
                    if want is not None and isinstance(rec, dict) and str(rec.get("id")) not in want:
                        continue
                    if slim and isinstance(rec, dict):
                        _slim_dict(rec)
                    try:
                        out.append(self._validate(rec))
                        last[record_id(out[-1])] = lineno
                    except ValidationError as exc:
                        bad.append(BadLine(lineno, json.dumps(rec, ensure_ascii=False),
                                           f"not a result record ({exc.errors()[0]['msg']})"))
                    except ValueError as exc:
                        bad.append(BadLine(lineno, json.dumps(rec, ensure_ascii=False), str(exc)))
        if bad and not self.repair:
            if not self.notices:
                self.notices.append(f"{self.results_path}: {len(bad)} line(s) that are not results were skipped "
                                    f"(line {bad[0].lineno}: {bad[0].reason})")
        elif bad:
            quarantine_lines(self.results_path, bad, self.corrupt_path)
            where = ", ".join(str(b.lineno) for b in bad[:10]) + (" …" if len(bad) > 10 else "")
            self.notices.append(
                f"{self.results_path}: {len(bad)} corrupt line(s) (line {where}: {bad[0].reason}) moved to "
                f"{self.corrupt_path.name}; those items will be scored again"
            )
        return (out, last) if lines else out

    def iter_latest(self, want: set[str]) -> Iterator[Any]:
        """Full records of the ``want`` ids (the latest of each), one at a time in file order.

        The viewer of a 10,000-item run shows thousands of items in full detail; holding them all
        as records doubled the run's peak memory. One pass, nothing kept but the current record."""
        self.load_results(slim=True)  # refreshes the id -> latest line map if the file changed;
        self.load_results(slim=True)  # again, in case that scan moved corrupt lines aside
        lines = {n for i, n in self._last_line.items() if i in want}
        if not lines or not self.results_path.exists():
            return
        with open(self.results_path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            for lineno, line in enumerate(_lines(f), 1):
                if lineno not in lines:
                    continue
                fast = self._parse_finished(line, slim=False)
                if fast is not None:
                    yield fast
                    continue
                try:
                    yield self._validate(loads_line(line))
                except (ValueError, ValidationError):
                    continue  # the slim scan already reported (or moved aside) this line

    def _parse_finished(self, line: str, slim: bool) -> Any | None:
        """The record of a line that is a finished record of this stream, validated straight from its
        text (pydantic's JSON parser: about three times faster than ``json.loads`` and validating the
        objects it made, which was most of a 100,000-item run's summary time); ``None`` for any other
        line — the step-by-step reading then says why the line is not a record, in its own words.

        ``slim`` drops what :meth:`_scan` drops (sentences, steps) as if they had not been written, and a
        record from before ``n_time_like`` gets its count from the sentences first."""
        if self.record is None:
            return None
        try:
            rec = self.record.model_validate_json(line)
        except ValidationError:
            return None
        given = rec.model_fields_set
        if not self.required <= given:
            return None
        if slim:
            if getattr(rec, "sentences", None) and "n_time_like" not in given and "n_time_like" in type(rec).model_fields:
                rec.n_time_like = sum(len(s.sentence.time_like) for s in rec.sentences)
            for name in _SLIM_DROPS:
                if name in given:
                    setattr(rec, name, [])
                    given.discard(name)
        return rec

    def _check_required(self, rec: Any) -> None:
        missing = sorted(k for k in self.required if not isinstance(rec, dict) or k not in rec)
        if missing:
            raise ValueError(f"not a finished record (no {', '.join(missing)})")

    def _validate(self, rec: Any) -> Any:
        if self.record is None:
            if not isinstance(rec, dict) or rec.get("id") in (None, ""):
                raise ValueError("not a record (a JSON object with an id)")
            rec["id"] = str(rec["id"])
            return rec
        return self.record.model_validate(rec)

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    def reset(self) -> None:
        """``--overwrite``: forget the earlier run (records, config, summary, report). The response
        cache stays: answers already paid for are still valid for the new settings' requests."""
        for p in (self.results_path, self.corrupt_path, self.config_path, self.path / "summary.json",
                  self.path / "report.html"):
            safewrite.remove(p)
        self._slim_stamp = (-1, -1)
        self._slim, self._last_line = [], {}

    def check_config(self, fingerprint: dict[str, Any], full: dict[str, Any], kind: str | None = None) -> None:
        """Refuse a folder made with other settings (or by another command), else record these
        (atomically, before the run's first record). A folder whose ``config.json`` is gone or
        unreadable while it holds records of this engine (stamped with ``input_digest``) is refused
        too: what made them cannot be checked, and a rerun with other settings would mix two runs
        under one summary. (Folders of versions before ``config.json`` or digests are adopted.)"""
        cfg = self.config_path
        # no key or URL password in any run file; no option that only changes how answers are fetched
        fingerprint = without_transport(redact(canonical_json(fingerprint)))
        doc: Any = None
        if cfg.exists():
            try:
                doc = loads_line(cfg.read_text(encoding="utf-8"))  # absurd nesting: unreadable, not a crash
            except (OSError, ValueError):
                doc = None
        if isinstance(doc, dict):
            self._same_settings(doc, fingerprint, kind)
        if not (isinstance(doc, dict) and isinstance(doc.get("fingerprint"), dict)):
            self._lost_config(cfg.exists())
        out = {"fingerprint": fingerprint, "config": redact(canonical_json(full))}
        if kind is not None:
            out["kind"] = kind
        write_atomic(cfg, json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False))

    def _lost_config(self, exists: bool) -> None:
        made = sum(1 for r in self.latest_results(slim=True) if record_field(r, "input_digest"))
        if made:
            how = "cannot be read" if exists else "is missing"
            raise RunConfigMismatch(f"{self.config_path} {how} but {self.path} holds {made} record(s): the settings "
                                    "that made them cannot be checked; use a new --out folder, or --overwrite to "
                                    "start again")
        if exists:
            self.notices.append(f"{self.config_path}: unreadable; written again")

    def _same_settings(self, doc: dict[str, Any], fingerprint: dict[str, Any], kind: str | None) -> None:
        # a folder written before redaction, or with a transport option recorded: compared as written now
        old, old_kind = without_transport(redact(doc.get("fingerprint"))), doc.get("kind")
        if kind is not None and old_kind is not None and old_kind != kind:
            raise RunConfigMismatch(f"{self.path} holds a '{old_kind}' run, not '{kind}'; use a new --out folder")
        if isinstance(old, dict) and old != fingerprint:
            changed = sorted(k for k in set(old) | set(fingerprint) if old.get(k) != fingerprint.get(k))
            raise RunConfigMismatch(
                f"{self.path} holds a run with different scoring settings ({', '.join(changed)}); "
                "use a new --out folder, or --overwrite to start again"
            )

    def load_results(self, slim: bool = False, want: set[str] | None = None) -> list[Any]:
        if not slim:
            scanned: list[Any] = self._scan(slim, want)
            return scanned
        # a resumed run asks for the finished items several times before it starts (open,
        # earlier failures, progress, the runner), and its end again (compaction, the summary, the
        # page): one scan serves them while the file is unchanged; ``want`` filters what it read
        try:
            st = self.results_path.stat()
            stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            stamp = None
        if stamp is None or stamp != self._slim_stamp:
            self._slim, self._last_line = self._scan(slim=True, lines=True)
            self._slim_stamp = stamp
        if want is None:
            return list(self._slim)
        return [r for r in self._slim if record_id(r) in want]

    def append(self, result: Any) -> None:
        self.append_many([result])

    def append_many(self, results: list[Any]) -> None:
        """Append finished results with one write and one fsync (all or, on a fault, none counted)."""
        lines = []
        for result in results:
            if isinstance(result, ResponseResult) and result.error is not None and result.case != "error":
                result = result.model_copy(update={"case": "error", "scores": result.scores.model_copy(
                    update={"coverage": None, "precision": None, "recall": None, "f1": None, "murgat_s": None})})
            lines.append(dumps(result) if isinstance(result, dict) else result.model_dump_json())
        with self._lock:
            append_lines(self.results_path, lines)

    def latest_results(self, slim: bool = False, want: set[str] | None = None,
                       order: Sequence[str] | None = None) -> list[Any]:
        """One result per id (the last line wins, so a retried error replaces the old one).

        Records are appended as items finish, so the file's order depends on timing; ``order``
        (the input's ids) gives every reader the same order whatever the timing was (ids not in
        it follow, in file order)."""
        by_id: dict[str, Any] = {}
        for r in self.load_results(slim, want):
            by_id[record_id(r)] = r
        if order is None:
            return list(by_id.values())
        ranked = [by_id.pop(i) for i in dict.fromkeys(order) if i in by_id]
        return ranked + list(by_id.values())

    def compact(self, order: Sequence[str] | None = None) -> None:
        """Rewrite the results stream with one line per id (its latest), in input order, atomically:
        two runs of one input give the same file whatever order items finished in, and retried
        items leave no old lines. Lines are copied as they are (records are not re-serialised, so
        they stay byte-identical) by their offsets: memory stays O(number of ids), not file size."""
        # maps id -> latest line (served from the last scan while the file is unchanged); when that scan
        # moved corrupt lines aside the file changed, so the second call scans the cleaned file
        self.load_results(slim=True)
        self.load_results(slim=True)
        if not self.results_path.exists():
            return
        latest = dict(self._last_line)  # id -> line number
        ranked = [i for i in dict.fromkeys(order or []) if i in latest]
        first = set(ranked)
        ranked += [i for i in sorted(latest, key=latest.__getitem__) if i not in first]
        wanted = {latest[i] for i in ranked}
        offsets: dict[int, tuple[int, int]] = {}
        with open(self.results_path, "rb") as f:
            pos, lineno = 0, 0
            for raw in f:  # numbered as the scan numbers them: every line split at b"\n"
                lineno += 1
                if lineno in wanted:
                    offsets[lineno] = (pos, len(raw.rstrip(b"\r\n")))
                pos += len(raw)

            def copy(out: Any) -> None:
                for i in ranked:
                    start, size = offsets[latest[i]]
                    f.seek(start)
                    out.write(f.read(size) + b"\n")

            replace_atomically(self.results_path, copy)
        self._after_compaction(ranked, sum(offsets[latest[i]][1] + 1 for i in ranked))

    def _after_compaction(self, ranked: list[str], size: int) -> None:
        """The slim scan's records, made true of the compacted file without reading it again: it holds
        the latest line of each id, in ``ranked`` order, byte for byte (reading 100,000 lines again
        was a second of every big run's end). A file that is not the ``size`` just written is scanned."""
        self._slim_stamp = (-1, -1)
        try:
            st = self.results_path.stat()
        except FileNotFoundError:
            return
        if st.st_size != size:
            return
        latest = {record_id(r): r for r in self._slim}  # the scan's order is the file's: the last one wins
        self._slim = [latest[i] for i in ranked]
        self._last_line = {i: k for k, i in enumerate(ranked, 1)}
        self._slim_stamp = (st.st_size, st.st_mtime_ns)

    def export(self, order: Sequence[str] | None = None) -> None:
        """What readers read, rewritten in input order at the end of a run (:meth:`compact`)."""
        self.compact(order)

    def write_summary(self, summary: Any, name: str = "summary.json") -> Path:
        p = self.path / name
        text = summary.model_dump_json(indent=2) if hasattr(summary, "model_dump_json") else json.dumps(
            canonical_json(summary), indent=2, sort_keys=True, ensure_ascii=False)
        write_atomic(p, text)
        return p

    def summary(self) -> RunSummary:
        """The folder's ``summary.json`` as a score run's summary (:func:`score_summary`)."""
        return score_summary(self.path)


class RunUnreadable(SettingsError, ValueError):
    """A file a run writes whole (``summary.json``, ``sweep.json``) is there but cannot be read: cut
    short or damaged. Said with the file and the way out, never read as an empty summary. A
    :class:`~murgat.engine.errors.SettingsError` (exit 2, rendered once by the command line) and
    still a ``ValueError`` for callers of :func:`~murgat.engine.runs.load_run` that caught one."""


def read_summary(folder: str | Path, name: str = "summary.json") -> dict[str, Any]:
    """``folder/name`` as a JSON object; ``{}`` when the run has not written it (yet); raises
    :class:`RunUnreadable` naming the file when it is there but not a JSON object."""
    p = Path(folder) / name
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise RunUnreadable(f"{p}: cannot be read ({exc}); run the run's command again to rewrite it") from None
    try:
        doc = loads_line(text)
    except ValueError as exc:
        raise RunUnreadable(f"{p}: not valid JSON ({exc}; cut short?); run the run's command again to rewrite it "
                            "(finished records are kept)") from None
    if not isinstance(doc, dict):
        raise RunUnreadable(f"{p}: not a summary (a JSON {type(doc).__name__}, not an object)")
    return doc


def absent_folder(run: Path) -> str | None:
    """Why ``run`` is not a run folder at all (it does not exist, or is a file), else ``None``: "has no
    summary.json" for a path that is not there sends people looking inside a folder that is not."""
    if not run.exists():
        return f"{run}: the folder does not exist (a typo, or a run not made yet?)"
    if not run.is_dir():
        return f"{run}: is a file, not a run folder"
    return None


def score_summary(folder: str | Path) -> RunSummary:
    """``folder/summary.json`` as a :class:`~murgat.core.schema.RunSummary`, or :class:`RunUnreadable`
    naming the file and why (missing, cut short, not a score run's summary) — what ``summarize``,
    ``view`` and ``program --score`` read, never a traceback."""
    run = Path(folder)
    missing = absent_folder(run)
    if missing:
        raise RunUnreadable(missing)
    doc = read_summary(run)
    if not doc:
        raise RunUnreadable(f"{run} has no summary.json (run murgat score first)")
    try:
        return RunSummary.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise RunUnreadable(f"{run / 'summary.json'}: not a score run's summary ({where}: {err['msg']}); "
                            "run murgat score again on the folder to rewrite it") from None


def _is_utf8(line: str) -> bool:
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _lines(f: Any) -> Iterator[str]:
    """Lines of an open text file split at ``\n`` only (see :mod:`murgat.core.jsonl`).

    Each chunk read is searched once, from where the last line ended: the text of a line that
    spans many chunks is kept as pieces and joined once, when its break arrives. (Splitting the
    whole pending text after every chunk searched a 64 MiB line without a break 64 times over.)"""
    pending: list[str] = []
    while chunk := f.read(1 << 20):
        start = 0
        while (at := chunk.find("\n", start)) >= 0:
            pending.append(chunk[start:at])
            line = "".join(pending)
            pending.clear()
            yield line[:-1] if line.endswith("\r") else line
            start = at + 1
        if start < len(chunk):
            pending.append(chunk[start:])
    if pending:
        line = "".join(pending)
        yield line[:-1] if line.endswith("\r") else line


def record_field(r: Any, name: str, default: Any = None) -> Any:
    """A field of a record, whether the stream keeps pydantic models or JSON objects."""
    return r.get(name, default) if isinstance(r, dict) else getattr(r, name, default)


def record_id(r: Any) -> str:
    return str(record_field(r, "id"))


def needs_retry(r: Any) -> bool:
    """An item ``--retry-errors`` does again: an error record (``error`` or ``generation_error``), or
    judge errors, unreadable answers or unusable decompositions (none of them cached, so a recovered
    judge is asked again) left something undetermined."""
    causes = record_field(r, "undetermined_causes") or {}
    return (record_field(r, "error") is not None or bool(record_field(r, "generation_error"))
            or (record_field(r, "n_judge_errors", 0) or 0) > 0
            or bool(causes.get("unparseable")) or bool(causes.get("decomposition")))


def replace_atomically(path: Path, write: Any) -> None:
    """Make ``path`` anew through a temporary file under a random name (``write(binary_file)`` fills it), fsync and
    ``os.replace``: a reader (or a crash) sees the old file or the new one, never half of one. A
    failure (disk full) leaves the old file and raises :class:`~murgat.core.jsonl.ResultsWriteError`."""
    try:
        safewrite.replace(path, write)  # a random temporary name: a link planted at NAME.tmp is never opened
    except OSError as exc:
        raise ResultsWriteError(f"cannot write {path}: {exc.strerror or exc}") from exc


def write_atomic(path: Path, text: str) -> None:
    """``text`` (UTF-8) as the new content of ``path`` (see :func:`replace_atomically`)."""
    replace_atomically(path, lambda f: f.write(text.encode("utf-8")))


def _holds_any(p: Path) -> bool:
    """Whether the folder holds anything (an empty folder is no run: ``program --score``'s new
    ``OUT/baseline-run`` is not a variant of the program run around it)."""
    try:
        return next(p.iterdir(), None) is not None
    except OSError:
        return False


def read_kind(path: str | Path) -> str | None:
    """What a run folder holds: ``config.json``'s ``kind``, or (folders from before kinds were
    recorded) a guess from the files: ``traces.jsonl`` = reflect, a ``program.json`` = program,
    results with ``steps`` = faithfulness, other results = score. ``None``: not a run folder."""
    p = Path(path)
    try:
        kind = loads_line((p / "config.json").read_text(encoding="utf-8")).get("kind")
        if kind in KINDS:
            return str(kind)
    except (OSError, ValueError, AttributeError):
        pass
    if (p / "program.json").exists() or (p / "variants.json").exists():
        return "program"
    if (p.parent / "config.json").exists() and read_kind(p.parent) == "program" and _holds_any(p):
        return "program-variant"  # OUT/VARIANT/ of a program run: its parent is the run folder
    if (p / "traces.jsonl").exists() and (p / "responses.jsonl").exists():
        return "reflect"
    if (p / "sweep.json").exists():
        return "sweep"
    res = p / "results.jsonl"
    if res.exists():
        with open(res, encoding="utf-8", errors="replace") as f:
            first = f.readline()
        try:
            keys = set(loads_line(first))
        except (ValueError, TypeError):
            keys = set()
        return "faithfulness" if "steps" in keys and "scores" not in keys else "score"
    if (p / "summary.json").exists():
        try:
            doc = loads_line((p / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return "faithfulness" if isinstance(doc, dict) and "upr" in doc else "score"
    return None


#: what every record of a stream carries (see RunFolder.required); filled in below for the record models
_REQUIRED: dict[Any, frozenset[str]] = {ResponseResult: frozenset({"case", "scores"})}

class PairFolder(RunFolder):
    """A run whose item has two parts people read as two files: ``program``'s (and ``reflect``'s)
    ``responses.jsonl`` (``murgat score`` input) and ``traces.jsonl`` (what happened).

    Appending each item to two files could be cut in between by a crash, leaving an item in one
    file and not the other (reflect then reported "FAILED: -1 of 12" forever). So one line per
    item goes to ``results.jsonl`` — ``{"id", "record", "trace"}`` — the only file the engine
    appends to and resumes from; :meth:`export` rewrites the two readable files from it
    (atomically, in input order) at the end of every run. A folder written before this layout
    (the two files, no ``results.jsonl``) is adopted on first open: ids present in both files
    become results, the others are done again."""

    def __init__(self, path: str | Path, repair: bool = True) -> None:
        path = Path(path)
        if repair and not (path / "results.jsonl").exists() and (path / "responses.jsonl").exists():
            _adopt_pairs(path)
        super().__init__(path, repair=repair, record=None, required=frozenset({"record", "trace"}))

    def export(self, order: Sequence[str] | None = None) -> None:
        self.compact(order)  # results.jsonl in input order too (what load_run(...).records lists)
        rows = self.latest_results(order=order)
        write_atomic(self.path / "responses.jsonl", "".join(dumps(r["record"]) + "\n" for r in rows if "record" in r))
        write_atomic(self.path / "traces.jsonl", "".join(dumps(r["trace"]) + "\n" for r in rows if "trace" in r))


def pair_record(item_id: str, record: dict[str, Any], trace: dict[str, Any]) -> dict[str, Any]:
    """One ``results.jsonl`` line of a :class:`PairFolder`; ``error`` (and ``error_kind``) mirror the
    record's failure so ``--retry-errors`` finds it and summaries count it."""
    row: dict[str, Any] = {"id": item_id, "record": record, "trace": trace}
    err = record.get("generation_error")
    if err:
        row["error"] = str(err)
        kind = record.get("error_kind")
        if kind:
            row["error_kind"] = kind
    return row


def _adopt_pairs(path: Path) -> None:
    def latest(name: str) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        if (path / name).exists():
            for _, rec in read_records(path / name)[0]:
                if isinstance(rec, dict) and rec.get("id") not in (None, ""):
                    out[str(rec["id"])] = rec
        return out

    records, traces = latest("responses.jsonl"), latest("traces.jsonl")
    rows = [pair_record(i, rec, traces[i]) for i, rec in records.items() if i in traces]
    write_atomic(path / "results.jsonl", "".join(dumps(r) + "\n" for r in rows))
