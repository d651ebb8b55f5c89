"""The SQLite opener of the write gateway (:func:`murgat.media.safewrite.connect_sqlite`) against a link
swapped in between its check and SQLite's open (a TOCTOU race).

The race is won for the attacker deterministically: ``sqlite3.connect`` is wrapped so that the swap
happens right before SQLite opens the name. Before, the check (``resolve`` and ``lstat``) had passed,
SQLite followed the link, and the cache's first statements wrote a database into the victim file.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from murgat.media import safewrite


def _race(monkeypatch, before_open: Callable[[], None], after_open: Callable[[], None] = lambda: None) -> None:
    real = sqlite3.connect

    def connect(*a, **kw):
        before_open()
        try:
            return real(*a, **kw)
        finally:
            after_open()

    monkeypatch.setattr(sqlite3, "connect", connect)


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    run = tmp_path / "run"
    run.mkdir()
    (tmp_path / "outside").mkdir()
    victim = tmp_path / "outside" / "victim.sqlite"
    victim.write_bytes(b"")  # empty: SQLite would make a new database in it
    return run / "cache.sqlite", victim


def _link_in(db: Path, victim: Path) -> Callable[[], None]:
    def swap() -> None:
        if db.exists():
            os.replace(db, db.with_name("kept"))
        db.symlink_to(victim)
    return swap


def test_a_link_swapped_in_before_sqlite_opens_is_refused_and_nothing_is_written(places, monkeypatch) -> None:
    db, victim = places
    _race(monkeypatch, _link_in(db, victim))
    with pytest.raises(safewrite.UnsafePath, match="replaced"):
        safewrite.connect_sqlite(db)
    assert victim.read_bytes() == b""


def test_a_swap_put_back_after_sqlite_opened_is_refused_too(places, monkeypatch) -> None:
    """The name looks right again when checked after the open: only the file SQLite holds tells."""
    db, victim = places
    db.write_bytes(b"")

    def put_back() -> None:
        db.unlink()
        os.replace(db.with_name("kept"), db)

    _race(monkeypatch, _link_in(db, victim), put_back)
    with pytest.raises(safewrite.UnsafePath, match="replaced"):
        safewrite.connect_sqlite(db)
    assert victim.read_bytes() == b"" and not db.is_symlink()


def test_a_link_already_there_is_refused_without_reaching_sqlite(places, monkeypatch) -> None:
    db, victim = places
    db.symlink_to(victim)
    _race(monkeypatch, lambda: pytest.fail("SQLite must not be asked to open a link"))
    with pytest.raises(safewrite.UnsafePath):
        safewrite.connect_sqlite(db)
    assert victim.read_bytes() == b""


def test_a_directory_or_fifo_at_the_name_is_refused(places) -> None:
    db, _ = places
    db.mkdir()
    with pytest.raises(safewrite.UnsafePath, match="regular file"):
        safewrite.connect_sqlite(db)
    db.rmdir()
    os.mkfifo(db)
    with pytest.raises(safewrite.UnsafePath, match="regular file"):
        safewrite.connect_sqlite(db)  # opened without blocking on the FIFO


def test_an_honest_database_opens_and_a_second_connection_to_it_too(places) -> None:
    """The second connection may be given the first one's descriptor by SQLite: it opens all the same."""
    db, _ = places
    first = safewrite.connect_sqlite(db)
    first.execute("CREATE TABLE t (x)")
    first.execute("INSERT INTO t VALUES (1)")
    first.commit()
    second = safewrite.connect_sqlite(db)
    assert second.execute("SELECT x FROM t").fetchall() == [(1,)]
    first.close()
    second.close()
    third = safewrite.connect_sqlite(db)
    assert third.execute("SELECT COUNT(*) FROM t").fetchone() == (1,)
    third.close()
