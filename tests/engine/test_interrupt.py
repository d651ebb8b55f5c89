"""Ctrl-C with items in flight: a real ``murgat score`` child, interrupted once the judge has its
first request (an event the stand-in server sets, not a guessed delay), ends with exit 130 and one
line, and what was written stays a readable run folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.processes import ctrl_c_as_at_a_terminal
from tests.standin import StandIn

ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_c_with_items_in_flight_is_exit_130_and_one_line(tmp_path: Path, example_media: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"id": f"a{k}", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:02)."})
                           + "\n" for k in range(4)))
    asked = threading.Event()

    def hang(prompt: str, body: dict) -> str:
        asked.set()
        return "hang"  # the item stays in flight until the server is closed

    with StandIn() as server:
        server.wire, server.hang_s = hang, 600
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        child = subprocess.Popen([sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(example_media),
                                  "--judge", "openai:m", "-J", f"base_url={server.base_url}", "-J", "api_key=x",
                                  "--probes", "off", "--out", str(tmp_path / "run"), "--quiet"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                                 preexec_fn=ctrl_c_as_at_a_terminal)
        try:
            assert asked.wait(300), "the judge was never asked"
            child.send_signal(signal.SIGINT)
            _, err = child.communicate(timeout=120)
        finally:
            child.kill()
            server.kill()
    assert child.returncode == 130, err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == [
        "interrupted: what was written is kept; run the same command again to resume"]
    assert (tmp_path / "run").is_dir()
