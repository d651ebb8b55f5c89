"""The run-folder lock: exclusive, names its holder, never stale after the holder dies."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from murgat.engine.runlock import RunLock, RunLocked

HOLD = """
import sys, time
from murgat.engine.runlock import RunLock
RunLock(sys.argv[1]).acquire()
print("held", flush=True)
time.sleep(60)
"""


def _holder(folder: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
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
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(example_media),
                            "--judge", "embedded", "--out", str(out), "--quiet"], capture_output=True, text=True)
        assert r.returncode == 2 and f"PID {proc.pid}" in r.stderr and "in use" in r.stderr
        assert time.monotonic() - t0 < 30 and not (out / "results.jsonl").exists()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def test_generate_output_file_is_locked(tmp_path: Path) -> None:
    target = tmp_path / "responses.jsonl"
    with RunLock(target, is_dir=False), pytest.raises(RunLocked):
        RunLock(target, is_dir=False).acquire()
