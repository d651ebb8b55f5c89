"""Stage lines: a phase that can take seconds says so once, only when a command line turned them on."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from murgat.media import stages


@pytest.fixture
def lines():  # type: ignore[no-untyped-def]
    got: list[str] = []
    stages.enable(got.append)
    yield got
    stages.enable(None)


def test_stage_lines_are_off_unless_enabled_and_said_once_per_key(lines: list[str]) -> None:
    stages.stage("loading x", once="x")
    stages.stage("loading x", once="x")
    stages.stage("transcribing a.wav")
    stages.stage("transcribing a.wav")
    assert lines == ["loading x", "transcribing a.wav", "transcribing a.wav"]
    stages.enable(None)
    stages.stage("nobody hears this")
    assert lines == ["loading x", "transcribing a.wav", "transcribing a.wav"]


def test_loading_the_asr_model_says_so_once(lines: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Before, a cold run showed "score 0/12" for most of a minute while the model loaded."""
    import murgat.media.asr as asr

    made: list[str] = []
    fake = types.ModuleType("faster_whisper")
    fake.WhisperModel = lambda path, **kw: made.append(path) or object()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "faster_whisper", fake)
    monkeypatch.setattr(asr, "_MODELS", {})
    model = tmp_path / "whisper-base"
    asr._load_faster_whisper(model, "float32", 1)
    asr._load_faster_whisper(model, "float32", 1)
    assert made == [str(model)] and lines == ["loading the speech recognition model (whisper-base)"]


def test_the_command_line_turns_them_on_except_quiet_or_json(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """What ``murgat`` sets up: stage lines on stderr for a plain command, none under --json, and
    off again after the command (the in-process API stays silent)."""
    from murgat.cli import main

    seen: list[object] = []
    real = stages.enable
    monkeypatch.setattr(stages, "enable", lambda sink=stages._to_stderr: (seen.append(sink), real(sink))[1])
    assert main(["citations", "He waves (visual, 0:01)."]) == 0
    assert main(["citations", "He waves (visual, 0:01).", "--json"]) == 0
    assert seen == [stages._to_stderr, None, None]  # on, off at the end; --json: only the off
    assert stages._sink is None
    capsys.readouterr()


def test_a_slow_start_says_starting_unless_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    """Before, a cold ``score`` said nothing while it imported (seconds under load): now a start that
    has not said anything within its second says ``murgat COMMAND: starting``, on stderr."""
    stages.notice_start(["murgat", "score", "in.jsonl"], after_s=0.0)
    timer = stages._notice
    assert timer is not None
    timer.join()
    assert capsys.readouterr().err == "murgat score: starting\n"
    stages.cancel_notice()
    for quiet in (["murgat", "score", "in.jsonl", "--json"], ["murgat", "score", "--quiet"], ["murgat", "--help"],
                  ["murgat"], ["murgat", "summarize", "-h"]):
        stages.notice_start(quiet, after_s=0.0)
        assert stages._notice is None, quiet


def test_the_first_stage_line_cancels_the_starting_notice(lines: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    stages.notice_start(["murgat", "score", "in.jsonl"], after_s=3600.0)
    timer = stages._notice
    assert timer is not None and timer.is_alive()
    stages.stage("score: 3 item(s) read; checking the settings and the media")
    timer.join()
    assert stages._notice is None and capsys.readouterr().err == ""
    assert lines == ["score: 3 item(s) read; checking the settings and the media"]
