"""Probing real files, with their oddities (multi-stream, no audio, silent audio, webm)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from murgat.media.errors import CorruptMedia, MediaNotFound
from murgat.media.streams import ProbeResult, StreamInfo, probe
from tests.conftest import real_media


def test_nasa_multi_stream_picks_largest_video_and_best_audio(nasa: Path) -> None:
    info = probe(nasa)
    assert len([s for s in info.streams if s.type == "video"]) == 2
    assert info.video_stream == 3 and (info.width, info.height) == (480, 270)
    assert info.audio_stream == 4 and info.sample_rate == 16000
    assert info.duration == pytest.approx(16.57)
    assert info.video_duration == pytest.approx(13.013, abs=0.01)
    assert info.audio_duration == pytest.approx(13.056, abs=0.01)


def test_bikes_has_no_audio(bikes: Path) -> None:
    info = probe(bikes)
    assert info.has_video and not info.has_audio and info.audio_duration is None
    assert info.durations() == {"visual": pytest.approx(10.0), "audio": None}


def test_webm_duration_from_container() -> None:
    info = probe(real_media("flower.webm"))
    assert info.has_audio and info.video_duration == pytest.approx(5.06, abs=0.01)


def test_audio_only(jfk: Path) -> None:
    info = probe(jfk)
    assert not info.has_video and info.audio_duration == pytest.approx(11.0)


def test_missing_and_corrupt(tmp_path: Path) -> None:
    with pytest.raises(MediaNotFound, match="does not exist"):
        probe(tmp_path / "nope.mp4")
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00not a video at all" * 100)
    with pytest.raises(CorruptMedia, match=r"bad\.mp4"):
        probe(bad)
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(CorruptMedia, match="empty"):
        probe(empty)


def test_probe_answer_is_kept_across_processes_and_dropped_when_the_file_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm run does not start ffprobe again (its start-up is most of a probe's cost); an
    edited file has a new stat identity and is probed again."""
    import subprocess as sp

    import murgat.media.streams as mp

    video = tmp_path / "clip.mp4"
    shutil.copyfile(real_media("friday.mp4"), video)
    monkeypatch.setattr(mp, "RACY_NS", 0)  # the copy is brand new: allow keeping it at once
    calls: list[list[str]] = []
    real_run = sp.run

    def counting_run(cmd, *a, **kw):  # type: ignore[no-untyped-def]
        calls.append(list(cmd))
        return real_run(cmd, *a, **kw)

    monkeypatch.setattr(mp.subprocess, "run", counting_run)
    first = probe(video)
    assert len(calls) == 1
    mp._probe_cached.cache_clear()  # what a new process starts with
    again = probe(video)
    assert len(calls) == 1 and again == first
    # rewrite the file in place with other media: new size and change time → probed again
    video.write_bytes(real_media("bikes.mp4").read_bytes())
    mp._probe_cached.cache_clear()
    other = probe(video)
    assert len(calls) == 2 and not other.has_audio and first.has_audio


def test_a_file_changed_just_now_is_probed_but_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """File times tick in steps of milliseconds: a file written a moment ago could be written
    again within the same tick with the same size, so its answer is not kept."""
    import murgat.media.streams as mp

    monkeypatch.setenv("MURGAT_CACHE_DIR", str(tmp_path / "cache"))
    video = tmp_path / "fresh.mp4"
    shutil.copyfile(real_media("bikes.mp4"), video)
    monkeypatch.setattr(mp, "RACY_NS", 3600 * 10**9)
    assert probe(video).has_video
    assert not list((tmp_path / "cache").rglob("*.json"))
    monkeypatch.setattr(mp, "RACY_NS", 0)
    mp._probe_cached.cache_clear()
    probe(video)
    assert len(list((tmp_path / "cache" / "probe").rglob("*.json"))) == 1


def test_a_failed_probe_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import murgat.media.streams as mp

    monkeypatch.setattr(mp, "RACY_NS", 0)
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00not a video at all" * 100)
    for _ in range(2):
        mp._probe_cached.cache_clear()
        with pytest.raises(CorruptMedia, match="cannot be read as media"):
            probe(bad)


def test_a_vbr_mp3_without_a_xing_header_has_its_measured_duration(tmp_path: Path) -> None:
    """20 s of silence then 40 s of noise, VBR, no Xing header: ffprobe estimates the duration from
    the first frames' bitrate (134.8 s here; 244.7 s of a 300 s file in the report), so true moments
    near the end read as past it, or moments past it as inside. The packets give the true 60 s."""
    import subprocess

    out = tmp_path / "vbr.mp3"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "anullsrc=r=44100:cl=mono", "-f", "lavfi",
                    "-i", "anoisesrc=r=44100:a=0.5", "-filter_complex",
                    "[0]atrim=0:20[s];[1]atrim=0:40[n];[s][n]concat=n=2:v=0:a=1", "-c:a", "libmp3lame", "-q:a", "2",
                    "-write_xing", "0", str(out)], check=True)
    info = probe(out)
    assert info.duration == pytest.approx(60.0, abs=0.1) and info.audio_duration == pytest.approx(60.0, abs=0.1)
    assert info.durations()["audio"] == pytest.approx(60.0, abs=0.1)


def test_the_probe_json_keeps_its_keys_in_order() -> None:
    """``murgat media probe --json`` prints these models: their keys, in this order, are its format."""
    stream = StreamInfo(index=0, type="audio")
    assert list(stream.model_dump()) == ["index", "type", "codec", "duration", "default", "width", "height", "fps",
                                         "n_frames", "sample_rate", "channels", "attached_pic", "start_time"]
    info = ProbeResult(path="a.flac", format="flac", duration=1.0, streams=[stream])
    assert list(info.model_dump()) == ["path", "format", "duration", "start_time", "streams", "video_stream",
                                       "audio_stream", "has_video", "has_audio", "video_duration", "audio_duration",
                                       "width", "height", "fps", "sample_rate", "channels"]
    assert stream.model_dump()["default"] is False and stream.model_dump()["codec"] is None
