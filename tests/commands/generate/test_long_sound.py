"""An answering model watching a long file through an OpenAI-compatible server hears its sound track
in part, and is told so: an hour of 16 kHz WAV is 115 MB in one request, which no server takes.
A short file's track is sent whole, exactly as before. The server is the stand-in
(``tests/standin.py``: the real Chat Completions wire format, murgat's real HTTP client)."""

from __future__ import annotations

import base64
import io
import json
import wave
from pathlib import Path

import pytest

from murgat.cli import main
from tests.standin import StandIn


def _seconds(b64: str) -> float:
    with wave.open(io.BytesIO(base64.b64decode(b64))) as w:
        return w.getnframes() / w.getframerate()


def _generate(tmp: Path, media: Path, server: StandIn) -> list[dict]:
    q = tmp / "q.jsonl"
    q.write_text(json.dumps({"id": "q", "media": media.name, "question": "What is heard?"}) + "\n")
    out = tmp / "responses.jsonl"
    assert main(["generate", str(q), "--model", "openai:m", "-M", f"base_url={server.base_url}", "--media-root",
                 str(media.parent), "--out", str(out), "--quiet", "--json", "--max-frames", "4"]) == 0
    return [json.loads(x) for x in out.read_text().splitlines()]


def test_a_long_sound_track_goes_as_labelled_excerpts_and_the_record_says_so(tmp_path: Path, long_tone: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with StandIn() as server:
        (rec,) = _generate(tmp_path, long_tone, server)
        (body,) = server.requests
    content = body["messages"][0]["content"]
    heard = [_seconds(p["input_audio"]["data"]) for p in content if p["type"] == "input_audio"]
    assert len(heard) == 20 and sum(heard) == pytest.approx(600.0)  # 10:00 of the 12:00, in 0:30 excerpts
    texts = [p["text"] for p in content if p["type"] == "text"]
    assert any(t.startswith("(the sound track, in part: 12:00 of audio cited; 10:00 sent") for t in texts)
    assert "(sound 0:00-0:30)" in texts and "(sound 11:30-12:00)" in texts
    (note,) = rec["evidence_notes"]
    assert note["kind"] == "audio_sampled" and note["sent_s"] == pytest.approx(600.0)


def test_a_short_sound_track_is_sent_whole_as_before(tmp_path: Path, example_media: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with StandIn() as server:
        (rec,) = _generate(tmp_path, example_media / "friday.mp4", server)
        (body,) = server.requests
    content = body["messages"][0]["content"]
    (audio,) = [p for p in content if p["type"] == "input_audio"]
    assert _seconds(audio["input_audio"]["data"]) == pytest.approx(6.153, abs=0.01)
    assert {"type": "text", "text": "(the sound track of the whole video)"} in content
    assert "evidence_notes" not in rec
