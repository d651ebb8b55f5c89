"""The file digest: SHA-256 of the bytes as always, hashed once per file identity and kept."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path

import pytest

import murgat.media.cache as mc
from murgat.media.cache import file_digest


@pytest.fixture()
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("MURGAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(mc, "RACY_NS", 0)  # the copies below are brand new: allow keeping them at once
    mc._DIGESTS.clear()
    return tmp_path


def _count_reads(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[int]:
    """Every ``open`` of ``path`` from now on appends to the returned list."""
    reads: list[int] = []
    real_open = open

    def counting_open(p: object, *a: object, **k: object) -> object:
        if isinstance(p, (str, os.PathLike)) and os.fspath(p) == str(path):
            reads.append(1)
        return real_open(p, *a, **k)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", counting_open)
    return reads


def test_digest_is_sha256_of_bytes_and_kept_across_processes(fresh: Path, friday: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    video = fresh / "v.mp4"
    shutil.copy(friday, video)
    want = hashlib.sha256(video.read_bytes()).hexdigest()  # the value every cache key is built from
    reads = _count_reads(monkeypatch, video)
    d = file_digest(video)
    assert d == want and len(reads) == 1
    mc._DIGESTS.clear()  # a new process: nothing in memory
    assert file_digest(video) == d
    assert len(reads) == 1  # kept: the bytes were not read again


def test_an_edited_file_is_hashed_again(fresh: Path, friday: Path) -> None:
    video = fresh / "v.mp4"
    shutil.copy(friday, video)
    d = file_digest(video)
    with open(video, "ab") as f:
        f.write(b"\0")
    mc._DIGESTS.clear()
    assert file_digest(video) != d == file_digest(friday)


def test_a_file_changed_just_now_is_not_kept(fresh: Path, friday: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mc, "RACY_NS", 3600 * 10**9)
    video = fresh / "v.mp4"
    shutil.copy(friday, video)
    file_digest(video)
    assert not list((fresh / "cache").rglob("*.json"))


def test_concurrent_callers_hash_once(fresh: Path, friday: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    video = fresh / "v.mp4"
    shutil.copy(friday, video)
    reads = _count_reads(monkeypatch, video)
    out: list[str] = []
    threads = [threading.Thread(target=lambda: out.append(file_digest(video))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(out)) == 1 and len(out) == 8
    assert len(reads) == 1
