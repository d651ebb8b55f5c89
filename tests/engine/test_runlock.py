"""The run-folder lock: exclusive, names its holder, never stale after the holder dies."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from murgat.engine.runlock import RunLock, RunLocked

HOLD = """
import sys
from murgat.engine.runlock import RunLock
RunLock(sys.argv[1]).acquire()
print("held", flush=True)
sys.stdin.read()  # holds the lock until it is killed, however slowly the test goes
"""


def _holder(folder: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_second_holder_is_refused_with_pid_and_host_then_lock_is_free_after_kill(tmp_path: Path) -> None:
    proc = _holder(tmp_path)
    try:
        with pytest.raises(RunLocked) as err:
            RunLock(tmp_path).acquire()
        assert f"PID {proc.pid}" in str(err.value) and socket.gethostname() in str(err.value)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    with RunLock(tmp_path):  # the kernel released the dead holder's lock: nothing stale
        pass


def test_score_refuses_a_folder_in_use(tmp_path: Path, example_media: Path) -> None:
    out = tmp_path / "run"
    proc = _holder(out)
    try:
        inp = tmp_path / "in.jsonl"
        inp.write_text('{"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}\n')
        # the holder never lets go: a score that waited for the lock would run into this timeout, which
        # is far past any start-up time on a loaded machine
        r = subprocess.run([sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(example_media),
                            "--judge", "embedded", "--out", str(out), "--quiet"], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 2 and f"PID {proc.pid}" in r.stderr and "in use" in r.stderr
        assert not (out / "results.jsonl").exists()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def test_generate_output_file_is_locked(tmp_path: Path) -> None:
    target = tmp_path / "responses.jsonl"
    with RunLock(target, is_dir=False), pytest.raises(RunLocked):
        RunLock(target, is_dir=False).acquire()
