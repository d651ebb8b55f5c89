"""A disk that is already full (or fills up before the first result) when a run starts.

Three real ways to refuse writes, no mock of the write path itself: a per-process file size
limit (``RLIMIT_FSIZE``: writes past it fail with ``EFBIG``, works for any user), a full
tmpfs in a private mount namespace (``ENOSPC``, needs root), and SQLite's own ``SQLITE_FULL``
(a page limit). Only the config.json test injects its failure, because it must pass the
probe first.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.engine.folder import PROBE_BYTES, NotWritable, check_writable_dir
from tests.commands.reflect.test_reflect import setup

ROOT = Path(__file__).resolve().parents[3]


def _commands(tmp: Path, media: Path, out: Path) -> dict[str, list[str]]:
    q, start, cas = setup(tmp)
    inp = tmp / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}) + "\n")
    return {"score": ["score", str(inp), "--media-root", str(media), "--judge", f"replay:{cas}", "--out",
                      str(out / "score"), "--quiet"],
            "reflect": ["reflect", str(q), "--media-root", str(media), "--model", f"replay:{cas}", "--detector",
                        f"replay:{cas}", "--from", str(start), "--ids", "c1", "--out", str(out / "reflect"), "--quiet"]}


def _murgat(args: list[str], preexec=None, wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([*(wrap or []), sys.executable, "-m", "murgat", *args], capture_output=True, text=True,
                          env=env, preexec_fn=preexec, cwd=ROOT)


def _clean_refusal(r: subprocess.CompletedProcess, out: Path, reason: str) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot write to --out {out}") and reason in lines[0], lines
    assert "Traceback" not in r.stderr and "AttributeError" not in r.stderr
    assert not list(out.glob("cache.sqlite*")) and not (out / "config.json").exists()  # nothing moved aside as corrupt


@pytest.mark.skipif(sys.platform == "win32", reason="needs RLIMIT_FSIZE (POSIX)")
def test_room_for_a_few_bytes_only_is_refused_before_any_work(tmp_path, example_media) -> None:
    """3,000 bytes of room: an empty probe file passed, then the cache was the first real write;
    reflect moved its fresh cache aside as corrupt and died in atexit with an AttributeError."""
    import resource

    def tiny_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))  # Python ignores SIGXFSZ: writes fail with EFBIG

    out = tmp_path / "out"
    for name, args in _commands(tmp_path, example_media, out).items():
        r = _murgat(args, preexec=tiny_files)
        _clean_refusal(r, out / name, "File too large")


def _unshare_ok() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-m", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _unshare_ok(), reason="needs a private mount namespace (root) for a full file system")
def test_full_file_system_is_refused_before_any_work(tmp_path, example_media) -> None:
    full = tmp_path / "full"
    full.mkdir()
    cmds = _commands(tmp_path, example_media, full)
    for name, args in cmds.items():
        fill = (f"mount -t tmpfs -o size=64k tmpfs {full} && mkdir {full / name} && "
                f"(dd if=/dev/zero of={full}/fill bs=4k 2>/dev/null; true) && exec \"$0\" \"$@\"")
        r = _murgat(args, wrap=["unshare", "-m", "sh", "-c", fill])
        assert r.returncode == 2 and "No space left on device" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and "AttributeError" not in r.stderr and len(r.stderr.splitlines()) == 1


def test_probe_writes_real_bytes(tmp_path, monkeypatch) -> None:
    """An empty file proves nothing on a full disk; the probe must get PROBE_BYTES onto it."""
    real_write = os.write
    written = {"n": 0}

    def room_for_100(fd, data):  # a disk with 100 bytes left: a short write, then ENOSPC
        if written["n"] >= 100:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = min(len(data), 100 - written["n"])
        written["n"] += n
        return real_write(fd, bytes(data[:n]))

    monkeypatch.setattr(os, "write", room_for_100)
    with pytest.raises(NotWritable, match="No space left on device"):
        check_writable_dir(tmp_path / "run", "--out")
    monkeypatch.setattr(os, "write", real_write)
    check_writable_dir(tmp_path / "run", "--out")
    assert PROBE_BYTES >= 16 * 1024 and list((tmp_path / "run").iterdir()) == []  # the probe leaves nothing


def test_config_json_that_cannot_be_written_is_the_exit_5_path(tmp_path, example_media, capsys, monkeypatch) -> None:
    """The disk fills between the probe and config.json: one line, exit 5, as when results fail."""
    args = _commands(tmp_path, example_media, tmp_path / "out")["score"]
    from murgat.media import safewrite

    real = safewrite._open_in

    def full_for_config(folder_fd, name, *a, **k):  # the run folder's writes go through the write gateway
        if name.startswith(".config.json."):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(folder_fd, name, *a, **k)

    monkeypatch.setattr(safewrite, "_open_in", full_for_config)
    assert main(args) == 5
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "config.json: No space left on device" in err[0]
    assert "free space" in err[0] and not list((tmp_path / "out" / "score").glob(".config.json.*"))


def test_cache_that_cannot_be_written_is_not_called_corrupt(tmp_path, monkeypatch) -> None:
    """SQLite's own SQLITE_FULL on a fresh cache: the error is raised as it is, nothing is moved
    aside, and a good cache on a full disk would keep its answers."""
    from murgat.judges import cache as cache_mod

    real_connect = sqlite3.connect

    def one_page(*a, **k):  # the database may not grow past its header page
        conn = real_connect(*a, **k)
        conn.execute("PRAGMA max_page_count=1")
        return conn

    monkeypatch.setattr(cache_mod.sqlite3, "connect", one_page)
    with pytest.raises(sqlite3.OperationalError, match="full"):
        cache_mod.ResponseCache(tmp_path / "cache.sqlite")
    assert not list(tmp_path.glob("*.corrupt-*"))
