"""Real ASR (bundled Whisper base, faster-whisper) and real OCR (PP-OCR via rapidocr)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.media.asr import resolve_model, transcribe
from murgat.media.errors import NoAudioStream, ToolMissing
from murgat.media.ocr import screen_text

pytestmark = pytest.mark.slow


def words(tr, a: float, b: float) -> list[str]:
    return [w.word.lower().strip(".,!?\"'") for w in tr.words_in(a, b)]


def test_friday_words_in_windows(friday: Path) -> None:
    tr = transcribe(friday)
    assert {"bad", "humor"} <= set(words(tr, 2.8, 4.4))
    assert "crown" in words(tr, 4.3, 6.0)
    assert "crown" not in words(tr, 0.0, 4.3)


def test_nasa_words(nasa: Path) -> None:
    tr = transcribe(nasa)
    got = words(tr, 0.0, 4.7)
    # Whisper base hears "Webb" as "web"; "optical" and "telescope" it gets right.
    assert "optical" in got and "telescope" in got
    assert "maryland" in words(tr, 8.0, 13.1) and "maryland" not in got


def test_jfk_audio_only_in_order(jfk: Path) -> None:
    tr = transcribe(jfk)
    text = " ".join(words(tr, 0, 11))
    assert "ask not what your country" in text


def test_transcript_is_cached(jfk: Path) -> None:
    a = transcribe(jfk)
    b = transcribe(jfk)
    assert a == b


def test_no_audio(bikes: Path) -> None:
    with pytest.raises(NoAudioStream):
        transcribe(bikes)


def test_unknown_model_name_never_downloads() -> None:
    with pytest.raises(ToolMissing, match="never downloaded"):
        resolve_model("large-v3")


def test_cli_transcribe_json(jfk: Path, capsys) -> None:
    assert main(["media", "transcribe", str(jfk), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"word", "start", "end"} <= set(doc["words"][0]) and doc["segments"]


@pytest.fixture(scope="module")
def drawn_text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 6 s video showing 'MURGAT OPEN HOUSE' between 2 s and 4 s (ffmpeg drawtext)."""
    out = tmp_path_factory.mktemp("ocr") / "text.mp4"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=white:s=640x360:d=6:r=10", "-vf",
         "drawtext=text='MURGAT OPEN HOUSE':fontsize=48:fontcolor=black:x=60:y=150:enable='between(t,2,4)'",
         "-c:v", "libx264", "-pix_fmt", "yuv420p", str(out)],
        check=True,
    )
    return out


def test_ocr_finds_text_only_inside_its_window(drawn_text: Path) -> None:
    st = screen_text(drawn_text, fps=2.0)
    assert "MURGAT OPEN HOUSE" in st.text_in(2.0, 3.9)
    assert st.text_in(0.0, 1.9) == "" and st.text_in(4.3, 6.0) == ""
    (line, *_) = st.lines_in(2.0, 3.9)
    assert line.score > 0.8 and len(line.box) == 4


def test_probe_cli_json(nasa: Path, capsys) -> None:
    assert main(["media", "probe", str(nasa), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["has_audio"] is True and all("duration" in s for s in doc["streams"])


def test_evidence_cli_writes_what_judge_sees(friday: Path, tmp_path: Path) -> None:
    out = tmp_path / "ev"
    assert main(["media", "evidence", str(friday), "(audio, 0:01-0:02; visual, 0:03; visual, 0:30)", "--out", str(out)]) == 0
    man = json.loads((out / "manifest.json").read_text())
    segs = man["segments"]
    assert [s["available"] for s in segs] == [True, True, False]
    assert any(f.endswith(".wav") for f in segs[0]["files"]) and any(f.endswith(".jpg") for f in segs[1]["files"])
