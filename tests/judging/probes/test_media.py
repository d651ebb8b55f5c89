"""The probe clip: the same bytes on every run, readable by every decoder murgat uses, and
holding exactly what the probes say it holds.

The pictures and the container are murgat's own (numpy digits, a hand-written AVI), so their
hashes are pinned unconditionally. The voice is espeak-ng's: its samples are pinned for the
version the pin was made with (Debian 12's 1.51); on another version the test checks that two
generations agree instead (the clip's digest then differs, and so do the probes' cache keys).
"""

from __future__ import annotations

import hashlib
import subprocess

import numpy as np
import pytest

from murgat.judging.probes import clip as C
from murgat.judging.probes import media as M
from murgat.judging.probes.avi import write_avi
from murgat.judging.probes.glyphs import number_frame
from murgat.judging.probes.store import probe_clip

#: the probe clip of seed 0, made with espeak-ng 1.51
CLIP_SHA256 = {"eSpeak NG text-to-speech: 1.51": "6363365fa5edd9fb7b21d40411aca17aa11294411383d75c8377c504ab41f27a"}


def _saw(n: int) -> np.ndarray:
    return ((np.arange(n) * 37) % 2000 - 1000).astype("<i2")  # integer arithmetic: the same on every CPU


def test_drawn_frames_and_container_are_pinned() -> None:
    frames = [number_frame("58", 320, 180, 12), number_frame("46", 320, 180, 12)]
    assert hashlib.sha256(b"".join(f.tobytes() for f in frames)).hexdigest() == \
        "4ed61746b1b048cad015a7804808f2ff3819a91ad89aff417d0487f3233a7b6f"
    assert hashlib.sha256(write_avi(frames, 2, _saw(22050), 22050)).hexdigest() == \
        "30bc47b76dabfe123d4776e12ee97e6287c1bd7ae12ded48e43ba965c850c92f"


def test_clip_is_the_same_bytes_every_time() -> None:
    a, meta_a = M.clip_bytes(0)
    b, meta_b = M.clip_bytes(0)
    assert a == b and meta_a == meta_b
    pinned = CLIP_SHA256.get(C.espeak_version())
    if pinned is not None:
        assert hashlib.sha256(a).hexdigest() == pinned
    assert M.clip_bytes(1)[0] != a  # the seed picks other numbers and words


def test_the_clip_is_made_once_and_kept_by_content() -> None:
    first = probe_clip(0)
    again = probe_clip(0)
    assert first.path == again.path and first.sha256 == again.sha256
    assert hashlib.sha256(open(first.path, "rb").read()).hexdigest() == first.sha256


def test_every_decoder_reads_what_was_drawn_and_said() -> None:
    from murgat.media.audio import load_audio
    from murgat.media.frames import open_video
    from murgat.media.streams import probe

    clip = probe_clip(3)
    info = probe(clip.path)
    assert (info.width, info.height, info.fps) == (C.WIDTH, C.HEIGHT, C.FPS)
    assert info.video_duration == pytest.approx(C.DURATION_S) and info.audio_duration == pytest.approx(C.DURATION_S)
    vf = open_video(clip.path)
    first, second = vf.frames_at([2.0, 6.0])
    assert np.array_equal(first.image, number_frame(str(clip.numbers[0]), C.WIDTH, C.HEIGHT, C.SCALE))
    assert np.array_equal(second.image, number_frame(str(clip.numbers[1]), C.WIDTH, C.HEIGHT, C.SCALE))
    # the number changes exactly at SHOW_TIMES[0][1]
    before, after = vf.frames_at([C.SHOW_TIMES[0][1] - 0.01, C.SHOW_TIMES[0][1]])
    assert not np.array_equal(before.image, after.image)
    # sound only where a phrase is said, each inside the window its probes cite
    track = load_audio(clip.path)
    for (_, start, end), window in zip(clip.said, ((1.0, 3.0), (5.0, 7.0)), strict=True):
        assert window[0] <= start < end <= window[1]
        assert np.abs(track.slice(start, end)).max() > 0.05
    quiet = np.concatenate([track.slice(0.0, 1.2), track.slice(3.1, 5.2), track.slice(7.1, 8.0)])
    assert np.abs(quiet).max() < 1e-3
    # ffmpeg's own decode of the raw pictures agrees (no decoder-specific reading)
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", clip.path, "-map", "0:0", "-frames:v", "1", "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "pipe:1"], capture_output=True, check=True).stdout
    assert raw == number_frame(str(clip.numbers[0]), C.WIDTH, C.HEIGHT, C.SCALE).tobytes()


def test_seeded_choices_are_distinct_and_stable() -> None:
    meta = M.describe(0)
    assert meta["numbers"] == (58, 46) and meta["other_number"] == 69
    assert meta["words"] == ("candle", "purple") and meta["other_word"] == "monkey"
    for seed in range(20):
        nums = C.pick(seed, C.NUMBERS, 3, "number")
        words = C.pick(seed, C.WORDS, 3, "word")
        assert len(set(nums)) == 3 and len(set(words)) == 3


def test_avi_writer_refuses_what_it_cannot_write() -> None:
    f = number_frame("58", 320, 180, 12)
    with pytest.raises(ValueError, match="outlast"):
        write_avi([f], 2, _saw(22050), 22050)
    with pytest.raises(ValueError, match="multiple"):
        write_avi([f], 4, _saw(10), 22050)
    with pytest.raises(ValueError, match="one size"):
        write_avi([f, f[:100]], 2, _saw(10), 22050)
