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


def test_caches_follow_xdg_cache_home_unless_murgat_says_otherwise(tmp_path, monkeypatch) -> None:
    """XDG_CACHE_HOME was ignored: the models and the media cache went to ~/.cache/murgat regardless."""
    from murgat.media.asr import models_dir
    from murgat.media.cache import cache_root

    monkeypatch.delenv("MURGAT_CACHE_DIR", raising=False)
    monkeypatch.delenv("MURGAT_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "murgat" / "cache"
    assert models_dir() == tmp_path / "xdg" / "murgat" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored, as the XDG rules say
    assert cache_root() == Path.home() / ".cache" / "murgat" / "cache"
    monkeypatch.setenv("MURGAT_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("MURGAT_MODEL_DIR", str(tmp_path / "models"))
    assert cache_root() == tmp_path / "mine" and models_dir() == tmp_path / "models"


def test_bootstrap_puts_the_environment_under_xdg_cache_home(tmp_path) -> None:
    """The environment's default place, read from the script as bash runs it (up to the VENV line)."""
    import subprocess

    script = (Path(__file__).resolve().parents[2] / "scripts" / "bootstrap.sh").read_text()
    lines = script.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('case "${XDG_CACHE_HOME'))
    snippet = "\n".join(lines[start:start + 2]) + '\necho "$VENV"'
    env = {"HOME": str(tmp_path / "home"), "KEY": "k", "PATH": "/usr/bin:/bin"}
    got = subprocess.run(["bash", "-c", snippet], env={**env, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
                         capture_output=True, text=True, check=True).stdout.strip()
    assert got == f"{tmp_path}/xdg/murgat/venv-k"
    got = subprocess.run(["bash", "-c", snippet], env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert got == f"{tmp_path}/home/.cache/murgat/venv-k"
    mine = subprocess.run(["bash", "-c", snippet], env={**env, "MURGAT_VENV": "/opt/v"}, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert mine == "/opt/v"
