"""murgat's one file lock (murgat.media.locks): exclusive between holders, waits up to its timeout,
and lets go on release so the next holder gets it."""

from __future__ import annotations

from pathlib import Path

import pytest

from murgat.media.locks import FileLock


def test_second_holder_is_refused_until_the_first_releases(tmp_path: Path) -> None:
    first, second = FileLock(tmp_path / "x.lock"), FileLock(tmp_path / "x.lock")
    assert first.try_acquire() and first.held
    assert not second.try_acquire() and not second.held
    first.release()
    assert second.try_acquire()
    second.release()


def test_waiting_acquire_gives_up_after_its_timeout(tmp_path: Path) -> None:
    with FileLock(tmp_path / "x.lock"), pytest.raises(TimeoutError):
        FileLock(tmp_path / "x.lock", timeout=0.1).acquire()


def test_release_with_clear_empties_what_the_holder_wrote(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "x.lock")
    lock.acquire()
    lock.write('{"pid": 1}')
    assert (tmp_path / "x.lock").read_text() == '{"pid": 1}'
    lock.release(clear=True)
    assert (tmp_path / "x.lock").read_text() == "" and not lock.held


def test_writing_without_holding_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        FileLock(tmp_path / "x.lock").write("x")
