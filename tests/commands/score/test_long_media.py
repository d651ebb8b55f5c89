"""``murgat score`` over a long file (12 minutes, longer than ``murgat.media.audio.LONG_AUDIO_S``): the
evidence limits reach the judge's requests, every judge call says what they changed (also when its
answer comes from the cache), the summary counts it, the report shows it, and the text channels
are read around the cited windows only.

The remote judge is the stand-in OpenAI-compatible server (``tests/standin.py``: the real Chat
Completions wire format, murgat's real HTTP client).
"""

from __future__ import annotations

import base64
import io
import json
import wave
from pathlib import Path
from typing import Any

import pytest

from murgat.cli import main
from murgat.engine.folder import RunFolder
from tests.standin import StandIn


def _input(tmp: Path, media: Path, response: str) -> Path:
    p = tmp / "in.jsonl"
    p.write_text(json.dumps({"id": "long", "media": media.name, "response": response}) + "\n")
    return p


def _wav_seconds(b64: str) -> float:
    with wave.open(io.BytesIO(base64.b64decode(b64))) as w:
        return w.getnframes() / w.getframerate()


def _calls(rec: Any) -> list[Any]:
    return [c for s in rec.sentences for f in s.verdicts for c in f.calls]


def test_a_long_audio_citation_is_sent_as_noted_excerpts(tmp_path: Path, long_tone: Path, capsys,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp = _input(tmp_path, long_tone, "A tone sounds for six minutes (audio, 0:00-6:00).")
    out = tmp_path / "run"
    args = ["score", str(inp), "--media-root", str(long_tone.parent), "--judge", "openai:m", "--out", str(out),
            "--quiet", "--json", "--save-evidence", "--probes", "off"]  # inspects every request: no probes
    with StandIn() as server:
        assert main([*args, "-J", f"base_url={server.base_url}"]) == 0
        entail = [b for b in server.requests if any(p.get("type") == "input_audio" for p in b["messages"][0]["content"])]
        # the same run again (a new folder, the same cache): nothing sent, and the record says the same
        out2 = tmp_path / "run2"
        n = len(server.requests)
        args2 = [a if a != str(out) else str(out2) for a in args]
        assert main([*args2, "--cache", str(out / "cache.sqlite"), "-J", f"base_url={server.base_url}"]) == 0
        assert len(server.requests) == n
    (body,) = entail  # one citation: the joint question only
    heard = [_wav_seconds(p["input_audio"]["data"]) for p in body["messages"][0]["content"] if p["type"] == "input_audio"]
    assert len(heard) == 10 and sum(heard) == pytest.approx(300.0)  # 5:00 of the 6:00, ten excerpts, never whole
    told = " ".join(p.get("text", "") for p in body["messages"][0]["content"])
    assert "only part of the cited audio is sent" in told
    (rec,) = RunFolder(out).latest_results()
    (call,) = _calls(rec)
    assert [n["kind"] for n in call.evidence_notes] == ["audio_sampled"]
    assert call.evidence_notes[0]["text"].startswith("6:00 of audio cited; 5:00 sent")
    assert rec.evidence_notes == {"audio_sampled": 1}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["evidence_notes"] == {"audio_sampled": 1}
    err = capsys.readouterr().err
    assert "evidence limits changed what the judge was sent (1 audio sampled)" in err
    assert "6:00 of audio cited; 5:00 sent" in (out / "report.html").read_text()  # the viewer shows the note
    saved = sorted((out / "evidence").rglob("*.wav"))
    assert len(saved) == 10  # one WAV per excerpt the judge heard
    (rec2,) = RunFolder(out2).latest_results()
    (call2,) = _calls(rec2)
    assert call2.cached and call2.evidence_notes == call.evidence_notes  # a cached answer's record says the same


def test_refusing_over_the_limit_leaves_the_fact_undetermined_without_a_request(tmp_path: Path, long_tone: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp = _input(tmp_path, long_tone, "A tone sounds for six minutes (audio, 0:00-6:00).")
    out = tmp_path / "run"
    with StandIn() as server:
        code = main(["score", str(inp), "--media-root", str(long_tone.parent), "--judge", "openai:m", "-J",
                     f"base_url={server.base_url}", "-J", "over_limit=refuse", "--out", str(out), "--quiet", "--json",
                     "--probes", "off"])  # no request may carry audio: no probes
        assert not [b for b in server.requests if "input_audio" in json.dumps(b)]
    assert code == 1
    (rec,) = RunFolder(out).latest_results()
    assert rec.undetermined_causes == {"over_limit": 1} and rec.n_judge_errors == 0
    (fv,) = rec.sentences[0].verdicts
    assert fv.status == "undetermined" and "6:00 of audio cited, more than 5:00" in (fv.reason or "")


def test_evidence_text_on_a_long_file_is_heard_around_the_cited_window(tmp_path: Path, long_tone: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded judge reads ASR words: for one citation near the end of the file, ASR hears the
    one or two 24-second chunks around it (plus their margins), never the 12 minutes."""
    cache = tmp_path / "media-cache"
    monkeypatch.setenv("MURGAT_CACHE_DIR", str(cache))
    inp = _input(tmp_path, long_tone, "The speaker says hello (audio, 11:40-11:44).")
    assert main(["score", str(inp), "--media-root", str(long_tone.parent), "--judge", "embedded", "--out",
                 str(tmp_path / "run"), "--quiet", "--json", "--no-sound-events"]) in (0, 1)
    chunks = list((cache / "asr-chunk").rglob("*.json"))  # the media cache keeps one file per chunk heard
    assert 1 <= len(chunks) <= 2 and not (cache / "asr").exists(), chunks
