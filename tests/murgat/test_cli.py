"""The command line skeleton: exact command names and JSON shapes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
