"""The probe clip: media whose every second murgat knows, made from a seed (the maker is
:mod:`murgat.probes.media`; this module holds its design and finds or makes it without numpy).

An 8-second clip, 320 x 180 pictures at 2 frames per second and mono sound at 22,050 Hz:

* the screen shows one two-digit number for the first half and another for the second half
  (:data:`SHOW_TIMES`), drawn with murgat's own bitmap digits (:mod:`murgat.probes.glyphs`);
* a voice (espeak-ng) says "I say W1." at 1.3 s and "I say W2." at 5.3 s (:data:`SAY_TIMES`),
  with silence around them (the two carrier words make Whisper hear the word every time; a word
  alone after seconds of silence was missed by its voice-activity filter one time in three);
  nothing is written on screen about the words and nothing is said about the numbers, so each
  fact lives in exactly one modality;
* the seed picks the numbers, the words and the ones never shown or said (the probes' "other"
  values) from fixed lists, by SHA-256 (the same choice on every Python).

**Bytes.** The pictures are numpy arrays and the container is written by :mod:`murgat.probes.avi`,
so everything but the voice is the same bytes everywhere. The voice is espeak-ng's: the same
version gives the same samples (it has no randomness; a test checks two generations agree), but
another version may not. So the clip is kept in the media cache under a key that includes
espeak-ng's version, its digest is part of every probe's cache key (a clip with other bytes asks
the judge again, it never reuses answers about other media), and the test that pins the file's
SHA-256 names the espeak-ng version the pin was made with.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

from pydantic import BaseModel, Field

from media import safewrite
from media.cache import default_cache, file_digest, make_key
from media.errors import ToolMissing
from murgat.probes import glyphs as design

#: bump when the clip's design changes (it enters the cache key of the clip)
CLIP_VERSION = "1"
WIDTH, HEIGHT, FPS = 320, 180, 2
DURATION_S = 8
SAMPLE_RATE = 22_050  # espeak-ng's own rate: no resampling here
#: digit pixel size: a two-digit number is 11 x 7 glyph pixels, 132 x 84 screen pixels
SCALE = 12
#: when each of the two numbers is on screen: [start, end) seconds
SHOW_TIMES: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 4.0), (4.0, 8.0))
#: when each of the two words starts being said
SAY_TIMES: tuple[float, float] = (1.3, 5.3)
#: longest a phrase may last (it must end before 3.0 s and 7.0 s, the ends of the cited windows)
SAY_SLOT_S = 1.6
#: what the voice says: one word of :data:`WORDS` in a short carrier phrase
PHRASE = "I say {word}."
#: words a speech recogniser (Whisper base) hears right when espeak-ng says them
WORDS = ("apple", "candle", "guitar", "monkey", "purple", "rabbit", "river", "tiger")
#: two-digit numbers whose digits are all distinct, without 0 or 1 (the thinnest glyphs)
NUMBERS = tuple(n for n in range(23, 99) if len(set(str(n))) == 2 and not set(str(n)) & {"0", "1"})
ESPEAK_ARGS = ("-v", "en-us", "-s", "140", "-p", "50", "-a", "100", "-g", "0")


class ProbeClip(BaseModel):
    """Where the clip is and what is in it (times in seconds)."""

    path: str
    sha256: str = Field(description="SHA-256 of the clip's bytes (enters every probe's cache key)")
    seed: int
    version: str = CLIP_VERSION
    espeak: str = Field(description="espeak-ng's version line (the voice's bytes depend on it)")
    duration_s: float = DURATION_S
    numbers: tuple[int, int] = Field(description="the number shown in the first half, then in the second")
    other_number: int = Field(description="a number never shown")
    words: tuple[str, str] = Field(description="the word said at SAY_TIMES[0], then at SAY_TIMES[1]")
    other_word: str = Field(description="a word never said")
    said: list[tuple[str, float, float]] = Field(description="(word, start, end) of each phrase as placed")


def pick(seed: int, pool: tuple[object, ...], k: int, salt: str) -> list[object]:
    """``k`` distinct members of ``pool`` chosen by SHA-256 of the seed (no ``random``: its
    algorithms are not promised to stay the same between Python versions)."""
    order = sorted(range(len(pool)), key=lambda i: hashlib.sha256(f"{salt}:{seed}:{i}".encode()).digest())
    return [pool[i] for i in order[:k]]


@functools.lru_cache(maxsize=1)
def espeak_version() -> str:
    """espeak-ng's version line; :class:`media.errors.ToolMissing` when it is not installed."""
    try:
        proc = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, timeout=30)
    except (FileNotFoundError, PermissionError) as exc:
        raise ToolMissing("espeak-ng", "install espeak-ng (apt-get install espeak-ng): the probes' voice") from exc
    line = proc.stdout.strip().split("\n")[0]
    if proc.returncode != 0 or not line:
        raise ToolMissing("espeak-ng", f"espeak-ng --version failed ({proc.stderr.strip()[:200]})")
    return line.split(" Data at:")[0].strip()


def design_digest() -> str:
    """SHA-256 of every setting the clip is made from (a changed word list or time is another clip)."""
    blob = repr((CLIP_VERSION, WIDTH, HEIGHT, FPS, DURATION_S, SAMPLE_RATE, SCALE, SHOW_TIMES, SAY_TIMES, SAY_SLOT_S,
                 PHRASE, WORDS, NUMBERS, ESPEAK_ARGS, sorted(design.DIGITS.items()), design.BACKGROUND, design.INK))
    return hashlib.sha256(blob.encode()).hexdigest()


def probe_clip(seed: int = 0) -> ProbeClip:
    """The clip for ``seed``, made once and kept in the media cache (content-addressed: a clip of
    other bytes, from another espeak-ng, is another entry)."""
    cache = default_cache()
    key = make_key("probe-clip", CLIP_VERSION, seed=seed, espeak=espeak_version(), design=design_digest())
    made: dict[str, object] = {}

    def produce(tmp: Path) -> None:
        from murgat.probes.media import clip_bytes  # numpy: loaded only when a clip is made

        data, meta = clip_bytes(seed)
        made.update(meta)
        safewrite.write_bytes(tmp, data)

    path = cache.get_or_create("probe-clip", key, ".avi", produce)
    meta = cache.get_json("probe-clip", key)
    if meta is None:
        if not made:
            from murgat.probes.media import describe

            made.update(describe(seed))
        cache.put_json("probe-clip", key, made)
        meta = made
    return ProbeClip(path=str(path), sha256=file_digest(path), **meta)
