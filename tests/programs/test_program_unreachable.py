"""A model that cannot be reached at all stops a ``program`` run (exit 4) with the cause, before any
item's program is recorded as failed — as it stops ``score``. Before, each item's program caught
the error and became an ``internal_error`` record, after the retries of every item."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.engine.folder import RunFolder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_planner_stops_the_run_with_exit_4(tmp_path: Path, example_media: Path, capsys,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{k}", "media": "friday.mp4", "question": "What mood is he in?",
                                        "options": ["happy", "sad"]}) + "\n" for k in range(2)))
    url = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    out = tmp_path / "p"
    code = main(["program", str(data), "--media-root", str(example_media), "--variant", "logic-declarative",
                 "--planner", "openai:m", "-P", f"base_url={url}", "--retries", "0", "--out", str(out), "--quiet",
                 "--json"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 4 and "cannot be reached" in last and url in last, last
    stream = out / "logic-declarative"
    assert not stream.exists() or RunFolder(stream).latest_results() == []
