"""Text channels by window: ASR words and sound classes of the cited seconds only, cached per chunk,
equal to (sounds) or consistent with (ASR) the whole-file pass; the ASR model checked up front."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import murgat.media.asr as asr
import murgat.media.audio as ma
from murgat.media.asr import ChunkedTranscript, installed_models, require_model, transcribe, transcribe_window, transcript_source
from murgat.media.errors import ToolMissing
from tests.conftest import real_media


def test_unknown_or_missing_model_fails_up_front_with_what_is_installed(tmp_path: Path) -> None:
    have = installed_models()
    assert set(have) == {"base", "tiny.en"} and all(v is None or "not installed" in v for v in have.values())
    provided = [n for n, why in have.items() if why is None]
    with pytest.raises(ToolMissing, match="never downloaded; this install provides: ") as e:
        require_model("large-v3")
    assert all(n in str(e.value) for n in provided)
    for name, why in have.items():
        if why is not None:
            with pytest.raises(ToolMissing, match=f"ASR model '{name}' is not installed"):
                require_model(name)
    empty = tmp_path / "model"
    empty.mkdir()
    with pytest.raises(ToolMissing, match=r"missing model\.bin, config\.json"):
        require_model(str(empty))
    with pytest.raises(ToolMissing, match="does not exist"):
        require_model(str(tmp_path / "nope"))


def test_sound_blocks_equal_the_whole_file_scores() -> None:
    pytest.importorskip("onnxruntime")
    from murgat.media.sounds import ChunkedSounds, tag_file

    path = real_media("tears-of-steel-battle-clip-medium.webm")
    try:
        whole = tag_file(path)
    except ToolMissing:
        pytest.skip("sound tagger not installed")
    assert whole is not None
    lazy = ChunkedSounds(path)
    for a, b in [(0.0, 2.0), (23.5, 24.6), (30.0, 35.0), (60.0, 70.5)]:
        p1, l1 = whole.window(a, b)
        p2, l2 = lazy.window(a, b)
        assert p1.shape == p2.shape and np.abs(p1 - p2).max() <= 1e-3 and np.array_equal(l1, l2)
    assert lazy.blocks_computed == 3  # 70 s of patches: blocks 0-2, each computed once


@pytest.fixture()
def small_asr_chunks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MURGAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(asr, "ASR_CHUNK_S", 6.0)
    monkeypatch.setattr(asr, "ASR_MARGIN_S", 2.0)


@pytest.mark.slow
@pytest.mark.usefixtures("small_asr_chunks")
def test_windowed_asr_hears_only_the_cited_chunks_and_caches_them(jfk: Path) -> None:
    pytest.importorskip("faster_whisper")
    lazy = ChunkedTranscript(jfk)
    assert lazy.n_chunks == 2
    tr = lazy.window(7.5, 9.0)  # touches chunk 1 only (6-12 s, heard from 4 s)
    assert lazy.chunks_transcribed == 1 and lazy.seconds_heard == pytest.approx(7.0, abs=0.1)
    assert all(6.0 <= (w.start + w.end) / 2 < 12.0 for w in tr.words)
    again = transcribe_window(jfk, 7.5, 9.0)
    assert [w.model_dump() for w in again.words] == [w.model_dump() for w in tr.words]
    full = ChunkedTranscript(jfk).full()
    starts = [w.start for w in full.words]
    assert starts == sorted(starts)  # one owner per word: nothing heard twice at a chunk edge
    assert "country" in " ".join(w.word.lower() for w in full.words)


@pytest.mark.slow
@pytest.mark.usefixtures("small_asr_chunks")
def test_long_file_is_transcribed_in_chunks_with_progress(jfk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("faster_whisper")
    monkeypatch.setattr(ma, "LONG_AUDIO_S", 5.0)
    seen: list[tuple[float, float]] = []
    tr = transcribe(jfk, progress=lambda done, total: seen.append((done, total)))
    assert [round(d, 1) for d, _ in seen] == [6.0, 11.0] and seen[-1][1] == pytest.approx(11.0, abs=0.1)
    lazy = transcript_source(jfk)
    assert isinstance(lazy, ChunkedTranscript)
    assert lazy.text_in(0.0, 11.0) == tr.text_in(0.0, 11.0)  # the same cached chunks
    assert lazy.chunks_transcribed == 0


def test_a_folder_named_like_a_bundled_model_does_not_stand_in_for_it(tmp_path: Path, monkeypatch) -> None:
    """Before: a folder ``base`` in the working directory was taken for the model folder and refused
    (no model.bin), blocking every run that needed ASR, the demo included."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base").mkdir()
    (tmp_path / "tiny.en").mkdir()
    from murgat.media.asr import _named_folder

    assert _named_folder("base") is None and _named_folder("whisper-tiny.en") is None
    assert _named_folder("./base") == Path("base") and _named_folder(tmp_path / "base") == tmp_path / "base"
    for name, why in installed_models().items():
        if why is None:
            assert (require_model(name) / "model.bin").exists()  # the bundled model, not the empty folder
        else:
            with pytest.raises(ToolMissing, match=f"ASR model '{name}' is not installed"):
                require_model(name)
    with pytest.raises(ToolMissing, match=r"missing model\.bin"):
        require_model("./base")  # written as a path: the folder
