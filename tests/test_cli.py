"""The command line skeleton: exact command names and JSON shapes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from murgat import __version__
from murgat.cli import main


def test_version(capsys) -> None:
    try:
        main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert __version__ in capsys.readouterr().out


def test_citations_json(capsys) -> None:
    assert main(["citations", "He waves. (visual, 0:12) A bell rings (audio, 0:20-0:18).", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    s0, s1 = doc["sentences"]
    assert s0["index"] == 0 and s0["citations"][0] == {
        "modality": "visual", "start": 12.0, "end": 12.0, "valid": True, "reason": None, "raw": "visual, 0:12"}
    assert s1["citations"][0]["valid"] is False and "before start" in s1["citations"][0]["reason"]


def test_citations_table_runs(capsys) -> None:
    assert main(["citations", "He waves (visual, 0:12)."]) == 0
    assert "visual" in capsys.readouterr().out


def test_validate_checks_durations(tmp_path: Path, capsys, example_media: Path) -> None:
    p = tmp_path / "r.jsonl"
    rows = [
        {"id": "ok", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."},
        {"id": "late", "media": "friday.mp4", "response": "Something (visual, 0:30)."},
        {"id": "noaudio", "media": "bikes.mp4", "response": "A bell (audio, 0:01)."},
        {"id": "missing", "media": "nope.mp4", "response": "x (visual, 0:01)."},
        {"id": "empty", "media": "friday.mp4", "response": ""},
    ]
    p.write_text("\n".join(json.dumps(r) for r in rows))
    assert main(["validate", str(p), "--media-root", str(example_media), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by = {i["id"]: i for i in doc["items"]}
    assert by["ok"]["ok"] and by["ok"]["durations"]["visual"] > 6
    assert "past the end" in by["late"]["problems"][0]["reason"]
    assert "no audio stream" in by["noaudio"]["problems"][0]["reason"]
    assert "not found" in by["missing"]["media_error"]
    assert by["empty"]["empty_response"]
    assert doc["n_with_problems"] == 4
    assert main(["validate", str(p), "--media-root", str(example_media), "--strict", "--json"]) == 1


def test_console_script_entry_point() -> None:
    out = subprocess.run([sys.executable, "-m", "murgat", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"murgat {__version__}"


def test_program_exit_flushes_output_runs_exit_handlers_and_keeps_the_status(tmp_path: Path) -> None:
    """``murgat`` leaves with os._exit after main returns (skipping the ~0.1 s teardown): a
    large JSON document on a pipe still arrives whole, atexit handlers and non-daemon threads
    still finish, and the exit status is main's."""
    text = " ".join(f"Sentence {k} happens (visual, 0:{k % 60:02d})." for k in range(3000))
    out = subprocess.run([sys.executable, "-m", "murgat", "citations", text, "--json"], capture_output=True, text=True)
    assert out.returncode == 0 and len(out.stdout) > 200_000  # far more than a pipe buffer
    assert len(json.loads(out.stdout)["sentences"]) == 3000
    bad = subprocess.run([sys.executable, "-m", "murgat", "validate", str(tmp_path / "none.jsonl")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "none.jsonl" in bad.stderr
    marker = tmp_path / "thread-finished"
    script = (
        "import atexit, sys, threading, time\n"
        "from murgat.cli import run\n"
        "atexit.register(lambda: print('exit handler ran', file=sys.stderr))\n"
        f"threading.Thread(target=lambda: (time.sleep(0.3), open({str(marker)!r}, 'w').close())).start()\n"
        "sys.argv = ['murgat', 'citations', 'He waves (visual, 0:01).']\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and "exit handler ran" in done.stderr and marker.exists()
    assert "visual" in done.stdout


def test_a_share_threshold_above_one_is_refused(capsys) -> None:
    """calibrate's --threshold is a similarity share (0–1): 2 matched nothing and was accepted."""
    try:
        main(["calibrate", "--human", "h.jsonl", "--run", "r", "--threshold", "2"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("--threshold 2 was accepted")
    assert "--threshold" in capsys.readouterr().err


_HELD_IMPORT = """
import importlib.abc, sys, time

class Hold(importlib.abc.MetaPathFinder):
    # stands for a slow import (numpy, pydantic on a cold disk): says so, then waits to be interrupted
    def find_spec(self, name, path, target=None):
        if name == {module!r}:
            print("importing", flush=True)
            while True:
                time.sleep(0.01)
        return None

sys.meta_path.insert(0, Hold())
sys.argv = ["murgat", "--version"]
from murgat.__main__ import entry
entry()
"""


@pytest.mark.parametrize("module", ["murgat.engine.errors", "murgat.commands.validate.check"])
def test_ctrl_c_while_importing_is_one_line_and_exit_130(module: str) -> None:
    """A Ctrl-C sent while the command line is still importing (the point the child says it reached,
    not a guessed delay) ends it with exit 130 and one line, never a traceback."""
    import signal

    from tests.processes import ctrl_c_as_at_a_terminal

    child = subprocess.Popen([sys.executable, "-c", _HELD_IMPORT.format(module=module)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_as_at_a_terminal)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "importing"
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "interrupted while starting: nothing was done"
