"""One-modality clip files and the content-addressed cache."""

from __future__ import annotations

import multiprocessing as mp
import shutil
from pathlib import Path

import pytest

from murgat.media.cache import MediaCache, file_digest, make_key
from murgat.media.clips import audio_clip, keyframe_times, video_clip
from murgat.media.streams import probe


def test_video_clip_copy_on_keyframe_reencode_elsewhere(friday: Path, tmp_path: Path) -> None:
    cache = MediaCache(tmp_path / "c")
    kf = keyframe_times(str(friday.resolve()), probe(friday).video_stream)
    assert kf and kf[0] == 0.0
    p, mode = video_clip(friday, 0.0, 2.0, cache)
    assert mode == "copy" and not probe(p).has_audio
    p2, mode2 = video_clip(friday, 1.3, 2.3, cache)
    assert mode2 == "reencode"
    info = probe(p2)
    assert not info.has_audio and info.video_duration == pytest.approx(1.0, abs=0.1)


def test_audio_clip_is_exact_and_cached(friday: Path, tmp_path: Path) -> None:
    cache = MediaCache(tmp_path / "c")
    p = audio_clip(friday, 1.0, 3.0, cache)
    info = probe(p)
    assert not info.has_video and info.audio_duration == pytest.approx(2.0, abs=1e-3)
    assert audio_clip(friday, 1.0, 3.0, cache) == p and cache.hits == 1


def test_digest_is_content_not_path(friday: Path, tmp_path: Path) -> None:
    copy = tmp_path / "renamed.mp4"
    shutil.copy(friday, copy)
    assert file_digest(copy) == file_digest(friday)
    assert make_key("x", file_digest(copy), a=1) == make_key("x", file_digest(friday), a=1)
    assert make_key("x", file_digest(copy), a=1) != make_key("x", file_digest(copy), a=2)


def _writer(root: str, n: int) -> None:
    c = MediaCache(root)
    for i in range(n):
        c.put_bytes("ns", make_key("ns", "d", i=i), ".bin", bytes([i % 256]) * 1000)


def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    root = str(tmp_path / "c")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(root, 40)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    c = MediaCache(root)
    for i in range(40):
        hit = c.lookup("ns", make_key("ns", "d", i=i), ".bin")
        assert hit is not None and hit.read_bytes() == bytes([i % 256]) * 1000
    assert not list(Path(root).rglob(".tmp-*"))


def test_size_cap_evicts_least_recently_used(tmp_path: Path) -> None:
    c = MediaCache(tmp_path / "c", max_bytes=5000, evict_every=1)
    for i in range(10):
        c.put_bytes("ns", f"{i:064d}", ".bin", b"x" * 1000)
    assert c.size() <= 5000
    assert c.lookup("ns", f"{9:064d}", ".bin") is not None
    assert c.lookup("ns", f"{0:064d}", ".bin") is None
    lazy = MediaCache(tmp_path / "lazy", max_bytes=5000, evict_every=4)
    for i in range(3):
        lazy.put_bytes("ns", f"{i:064d}", ".bin", b"x" * 3000)
    assert lazy.size() == 9000  # not checked yet
    lazy.put_bytes("ns", f"{3:064d}", ".bin", b"x" * 3000)
    assert lazy.size() <= 5000
