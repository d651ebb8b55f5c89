"""Making the probe clip (:mod:`murgat.judging.probes.clip` holds its design): the frames drawn with
murgat's own digits, the voice spoken by espeak-ng, the container written by murgat."""

from __future__ import annotations

import io
import subprocess
import tempfile
import wave
from pathlib import Path

import numpy as np

from murgat.judging.probes.avi import write_avi
from murgat.judging.probes.clip import (
    DURATION_S,
    ESPEAK_ARGS,
    FPS,
    HEIGHT,
    NUMBERS,
    PHRASE,
    SAMPLE_RATE,
    SAY_SLOT_S,
    SAY_TIMES,
    SCALE,
    SHOW_TIMES,
    WIDTH,
    WORDS,
    espeak_version,
    pick,
)
from murgat.judging.probes.glyphs import number_frame
from murgat.media.errors import ToolMissing


def speak(text: str) -> np.ndarray:
    """espeak-ng saying ``text``: int16 samples at :data:`SAMPLE_RATE`, silence trimmed (integer
    arithmetic only, so the samples are exactly what espeak-ng wrote)."""
    espeak_version()
    with tempfile.TemporaryDirectory(prefix="murgat-voice-") as tmp:
        out = Path(tmp) / "w.wav"
        proc = subprocess.run(["espeak-ng", *ESPEAK_ARGS, "-w", str(out), text], capture_output=True, timeout=60)
        if proc.returncode != 0 or not out.exists():
            raise ToolMissing("espeak-ng", f"espeak-ng could not say {text!r} ({proc.stderr.decode(errors='replace')[:200]})")
        with wave.open(io.BytesIO(out.read_bytes())) as w:
            if w.getnchannels() != 1 or w.getsampwidth() != 2 or w.getframerate() != SAMPLE_RATE:
                raise ToolMissing("espeak-ng", f"espeak-ng wrote {w.getnchannels()} channel(s), {w.getsampwidth() * 8} "
                                  f"bits, {w.getframerate()} Hz; murgat expects mono 16-bit {SAMPLE_RATE} Hz")
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) > 64)
    if not len(loud):
        raise ToolMissing("espeak-ng", f"espeak-ng said {text!r} in silence")
    return pcm[loud[0]:loud[-1] + 1].copy()


def clip_bytes(seed: int) -> tuple[bytes, dict[str, object]]:
    """The clip's bytes and what it holds (the :class:`ProbeClip` fields but the path)."""
    a, b, other = pick(seed, NUMBERS, 3, "number")
    w1, w2, w_other = pick(seed, WORDS, 3, "word")
    n_frames = DURATION_S * FPS
    shown = (str(a), str(b))
    frames = []
    for k in range(n_frames):
        t = k / FPS
        half = 0 if t < SHOW_TIMES[0][1] else 1
        frames.append(number_frame(shown[half], WIDTH, HEIGHT, SCALE))
    sound = np.zeros(DURATION_S * SAMPLE_RATE, dtype="<i2")
    said: list[tuple[str, float, float]] = []
    for word, t0 in zip((w1, w2), SAY_TIMES, strict=True):
        pcm = speak(PHRASE.format(word=word))
        i = round(t0 * SAMPLE_RATE)
        if len(pcm) > SAY_SLOT_S * SAMPLE_RATE:
            # the probes cite 0:01-0:03 and 0:05-0:07: the phrase must end inside its window
            raise ValueError(f"espeak-ng says {PHRASE.format(word=word)!r} in {len(pcm) / SAMPLE_RATE:.2f} s, longer than "
                             f"its {SAY_SLOT_S} s slot")
        sound[i:i + len(pcm)] = pcm
        said.append((str(word), t0, round((i + len(pcm)) / SAMPLE_RATE, 3)))
    data = write_avi(frames, FPS, sound, SAMPLE_RATE)
    return data, {"seed": seed, "espeak": espeak_version(), "numbers": (a, b), "other_number": other,
                  "words": (w1, w2), "other_word": w_other, "said": said}


def describe(seed: int) -> dict[str, object]:
    """What the clip for ``seed`` holds, without writing it (speaks the words to time them)."""
    return clip_bytes(seed)[1]
