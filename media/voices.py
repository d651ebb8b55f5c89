"""How many voices speak in a stretch of audio, from the pitch of the speech: one, several, or unsure.

Why: the offline judge can decide "he says X" / "she asks X" / "the speaker says X" on what is said
only where one voice speaks (then whoever the claim names as "he" is that voice); murgat's bundled
ASR gives no speaker turns, and no speaker-embedding model ships inside a wheel in murgat's
environment. A voice's pitch is the cue that needs no model: the fundamental frequency (f0) of one
adult voice stays within a few semitones from one stretch of speech to the next, while a man's and a
woman's voices sit about an octave apart.

How (numpy only, on the 16 kHz mono samples the evidence already decodes):

* **f0 per frame** — 40 ms frames every 10 ms; the normalised autocorrelation of each frame (Hann
  window, divided by the window's own autocorrelation, as Boersma's method does) is searched over
  lags for 60–400 Hz. A frame is *voiced* when its best peak reaches :data:`VOICED_R` and it is no
  quieter than :data:`QUIET_DB` below the loudest frame (and never under :data:`FLOOR_DB`). The
  smallest lag within 90% of the best peak is taken, so a period's double (an octave too low) is not;
* **stretches** — voiced frames are grouped into stretches of :data:`STRETCH_S` of voiced speech,
  a pause of :data:`PAUSE_S` or more starting a new one; a stretch shorter than :data:`MIN_STRETCH_S`
  of voicing is left out (a stray voiced frame of music or noise);
* **the count** — each stretch's median pitch (in semitones). *One voice*: at least
  :data:`MIN_VOICED_S` of voiced speech in at least two stretches, and every stretch's median within
  :data:`ONE_VOICE_ST` semitones of the median of all of them. *Several voices*: the stretch medians
  fall in two groups at least :data:`APART_ST` semitones apart, each group holding at least
  :data:`MIN_GROUP_S` of voicing. Anything else is *unsure*, with the reason.

What it cannot tell: two voices of the same pitch (two men of similar voice) read as one voice;
speech over music may read as several or unsure (the music has pitch too), never as fewer voices
than it has when their pitches differ. The judge therefore decides a named or described speaker
only on *one voice*, takes "he" as checked only where the pitch is clearly a man's (:func:`pitch_sex`),
and never takes "she" as checked: a man raising his voice reaches a woman's pitch (Kennedy's
inaugural address has a median of 245 Hz).

The pitch track of a short file is computed once and cached by the file's digest (namespace
``voices``, with :data:`METHOD` in the key), like the sound tagger's scores; a window reads its
frames from it. A long file's window is tracked from the window's own samples.
"""

from __future__ import annotations

import os
from typing import Literal

import numpy as np
from pydantic import BaseModel

from murgat.media.cache import MediaCache, default_cache, file_digest, make_key
from murgat.media.singleflight import lock_for

SR = 16_000
FRAME, HOP = 640, 160  # 40 ms frames every 10 ms
HOP_S = HOP / SR
F0_MIN, F0_MAX = 60.0, 400.0
#: normalised autocorrelation peak at or above which a frame is voiced
VOICED_R = 0.6
#: a voiced frame is no quieter than this many dB below the loudest frame, nor under FLOOR_DB dBFS
QUIET_DB = 30.0
FLOOR_DB = -55.0
#: voiced speech per stretch, the pause that ends one, and the least voicing a stretch counts with
STRETCH_S = 0.6
PAUSE_S = 0.25
MIN_STRETCH_S = 0.2
#: the least voiced speech a count is made on
MIN_VOICED_S = 1.0
#: one voice: every stretch's median pitch within this many semitones of their median
ONE_VOICE_ST = 3.0
#: several voices: two groups of stretch medians at least this many semitones apart ...
APART_ST = 5.0
#: ... each with at least this much voicing
MIN_GROUP_S = 0.5
#: what a cached track and every answer built on it name (bump when the recipe changes)
METHOD = f"autocorr-f0-v1:{FRAME}/{HOP}:{F0_MIN:g}-{F0_MAX:g}:r{VOICED_R}"
#: the track's recipe and the count's thresholds: what a judge's cache key names for the voice count
COUNT_RECIPE = (f"{METHOD};stretch {STRETCH_S}/{PAUSE_S}/{MIN_STRETCH_S};one<={ONE_VOICE_ST};apart>={APART_ST}/"
                f"{MIN_GROUP_S};voiced>={MIN_VOICED_S}")
#: a man's voice is clearly under this median pitch (Hz), a woman's clearly over the next
MAN_MAX_HZ = 140.0
WOMAN_MIN_HZ = 175.0

Count = Literal["one", "several"]


class PitchTrack(BaseModel):
    """The f0 of every voiced frame of a file (or window): frame start times (s) and f0 (Hz)."""

    method: str = METHOD
    times: list[float]
    f0: list[float]

    def between(self, start: float, end: float) -> PitchTrack:
        """The voiced frames that start inside ``[start, end]``."""
        t = np.asarray(self.times)
        sel = (t >= start - 1e-9) & (t <= end + 1e-9)
        return PitchTrack(times=[x for x, s in zip(self.times, sel, strict=True) if s],
                          f0=[x for x, s in zip(self.f0, sel, strict=True) if s])


class VoiceCount(BaseModel):
    """How many voices speak in a window, and the figures it was told by."""

    voices: Count | None  # None: unsure (``reason`` says why)
    reason: str
    voiced_s: float
    stretches: int
    median_hz: float | None
    #: largest distance of a stretch's median pitch from the median of all (semitones)
    spread_st: float | None
    method: str = METHOD

    def text(self) -> str:
        """One line for the evidence text (it enters the request's digest)."""
        what = {"one": "one voice", "several": "several voices", None: "unsure how many voices"}[self.voices]
        return f"{what}: {self.reason}"


def _frames(x: np.ndarray) -> np.ndarray:
    n = 1 + (len(x) - FRAME) // HOP
    idx = np.arange(FRAME)[None, :] + HOP * np.arange(n)[:, None]
    out: np.ndarray = x[idx]
    return out


_WIN = np.hanning(FRAME)
_NFFT = 2048
_WIN_AC = np.fft.irfft(np.abs(np.fft.rfft(_WIN, _NFFT)) ** 2)[:FRAME]
_LAG_LO, _LAG_HI = int(SR / F0_MAX), int(np.ceil(SR / F0_MIN))


def _block_f0(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per frame: f0 (Hz), its autocorrelation peak, and the frame's level (dBFS)."""
    fr = frames - frames.mean(axis=1, keepdims=True)
    rms = np.sqrt(np.mean(frames.astype(np.float64) ** 2, axis=1))
    level = np.where(rms > 1e-7, 20 * np.log10(np.maximum(rms, 1e-12)), -140.0)
    spec = np.abs(np.fft.rfft(fr * _WIN, _NFFT, axis=1)) ** 2
    ac = np.fft.irfft(spec, axis=1)[:, :FRAME]
    zero = ac[:, :1]
    ac = np.where(zero > 0, ac / np.where(zero > 0, zero, 1.0), 0.0) / (_WIN_AC / _WIN_AC[0])
    band = ac[:, _LAG_LO:_LAG_HI + 1]
    best = band.max(axis=1)
    # the smallest lag within 90% of the best peak that is a local maximum: not a period's double
    local = (band[:, 1:-1] >= band[:, :-2]) & (band[:, 1:-1] >= band[:, 2:]) & (band[:, 1:-1] >= 0.9 * best[:, None])
    has = local.any(axis=1)
    first = np.where(has, local.argmax(axis=1) + 1, band.argmax(axis=1))
    rows = np.arange(len(band))
    k = np.clip(first, 1, band.shape[1] - 2)
    a, b, c = band[rows, k - 1], band[rows, k], band[rows, k + 1]
    denom = a - 2 * b + c
    shift = np.where(np.abs(denom) > 1e-12, 0.5 * (a - c) / np.where(np.abs(denom) > 1e-12, denom, 1.0), 0.0)
    lag = _LAG_LO + k + np.clip(shift, -0.5, 0.5)
    return SR / lag, band[rows, k], level


def pitch_track(samples: np.ndarray, offset: float = 0.0) -> PitchTrack:
    """The voiced frames of 16 kHz mono ``samples`` and their f0 (see the module docstring); frame
    times are ``offset`` plus the frame's start."""
    x = np.asarray(samples, dtype=np.float64)
    if len(x) < FRAME:
        return PitchTrack(times=[], f0=[])
    frames = _frames(x)
    f0s, peaks, levels = [], [], []
    for i in range(0, len(frames), 4096):  # bounded memory: 4,096 frames (41 s) at a time
        f, p, lv = _block_f0(frames[i:i + 4096])
        f0s.append(f)
        peaks.append(p)
        levels.append(lv)
    f0, peak, level = np.concatenate(f0s), np.concatenate(peaks), np.concatenate(levels)
    loud = float(level.max())
    voiced = (peak >= VOICED_R) & (level >= max(FLOOR_DB, loud - QUIET_DB))
    idx = np.flatnonzero(voiced)
    return PitchTrack(times=[round(offset + i * HOP_S, 3) for i in idx.tolist()],
                      f0=[round(float(v), 1) for v in f0[idx]])


def _stretches(track: PitchTrack) -> list[np.ndarray]:
    """The track's voiced frames in stretches (see the module docstring), as f0 arrays in semitones."""
    out: list[np.ndarray] = []
    cur: list[float] = []
    last = None
    per = round(STRETCH_S / HOP_S)
    for t, f in zip(track.times, track.f0, strict=True):
        if cur and (len(cur) >= per or (last is not None and t - last >= PAUSE_S)):
            out.append(np.asarray(cur))
            cur = []
        cur.append(12 * np.log2(f / 100.0))
        last = t
    if cur:
        out.append(np.asarray(cur))
    least = round(MIN_STRETCH_S / HOP_S)
    return [s for s in out if len(s) >= least]


def _hz(st: float) -> float:
    return float(100.0 * 2 ** (st / 12))


def _groups_apart(medians: np.ndarray, sizes: np.ndarray) -> float | None:
    """The widest gap (semitones) that splits the sorted stretch medians into two groups each with
    :data:`MIN_GROUP_S` of voicing, or ``None`` when no split leaves both that much."""
    order = np.argsort(medians)
    m, s = medians[order], sizes[order] * HOP_S
    best = None
    for k in range(1, len(m)):
        if s[:k].sum() >= MIN_GROUP_S and s[k:].sum() >= MIN_GROUP_S:
            gap = float(m[k] - m[k - 1])
            best = gap if best is None or gap > best else best
    return best


def count_voices(track: PitchTrack) -> VoiceCount:
    """One voice, several, or unsure (see the module docstring), with the figures that decided."""
    stretches = _stretches(track)
    voiced = round(sum(len(s) for s in stretches) * HOP_S, 2)
    if voiced < MIN_VOICED_S or len(stretches) < 2:
        return VoiceCount(voices=None, voiced_s=voiced, stretches=len(stretches), median_hz=None, spread_st=None,
                          reason=f"{voiced:.1f} s of voiced speech in {len(stretches)} stretch(es); a count needs "
                                 f"{MIN_VOICED_S:.1f} s in two or more")
    medians = np.asarray([float(np.median(s)) for s in stretches])
    sizes = np.asarray([len(s) for s in stretches])
    centre = float(np.median(medians))
    spread = round(float(np.abs(medians - centre).max()), 1)
    figures = (f"{voiced:.1f} s of voiced speech in {len(stretches)} stretches, median pitch {_hz(centre):.0f} Hz, "
               f"stretch medians within {spread:.1f} semitones of it")

    def made(voices: Count | None, reason: str) -> VoiceCount:
        return VoiceCount(voices=voices, reason=reason, voiced_s=voiced, stretches=len(stretches),
                          median_hz=round(_hz(centre), 1), spread_st=spread)

    gap = _groups_apart(medians, sizes)
    if gap is not None and gap >= APART_ST:
        return made("several", f"{figures}; two groups of pitch {gap:.1f} semitones apart (several at ≥ {APART_ST:g})")
    if spread <= ONE_VOICE_ST:
        return made("one", f"{figures} (one voice at ≤ {ONE_VOICE_ST:g})")
    return made(None, f"{figures}: more than one voice's range (≤ {ONE_VOICE_ST:g}) and no two groups "
                      f"{APART_ST:g} semitones apart")


def pitch_sex(median_hz: float | None) -> Literal["man", "woman"] | None:
    """Whose voice the median pitch clearly is: ``"man"`` under :data:`MAN_MAX_HZ`, ``"woman"`` over
    :data:`WOMAN_MIN_HZ`, ``None`` between (children, high men's and low women's voices overlap there)."""
    if median_hz is None:
        return None
    if median_hz < MAN_MAX_HZ:
        return "man"
    if median_hz > WOMAN_MIN_HZ:
        return "woman"
    return None


class VoiceSource:
    """The voice counts of one file's windows: a short file's pitch track computed once (cached by
    the file's digest) and its count over the whole file; a long file's windows tracked from their
    own samples (no whole-file count: it would decode the whole file)."""

    def __init__(self, track: PitchTrack | None) -> None:
        self.track = track
        self.file = count_voices(track) if track is not None else None
        #: what every answer built on these counts names (the judge's cache key holds it)
        self.identity = COUNT_RECIPE

    def window(self, start: float, end: float, pieces: list[tuple[float, float, np.ndarray]]) -> dict[str, object]:
        """``{"window": VoiceCount, "file": VoiceCount | None, "voices": one|several|None}`` for a cited
        window; ``pieces`` are its decoded samples (used when no file track is kept). The window's own
        count decides; where it is unsure, a file with one voice has one voice in every window."""
        if self.track is not None:
            spans = [(a, b) for a, b, _ in pieces] or [(start, end)]
            parts = [self.track.between(a, b) for a, b in spans]
            track = PitchTrack(times=[t for p in parts for t in p.times], f0=[f for p in parts for f in p.f0])
        else:
            got = [pitch_track(x, a) for a, _, x in pieces]
            track = PitchTrack(times=[t for p in got for t in p.times], f0=[f for p in got for f in p.f0])
        win = count_voices(track)
        voices = win.voices
        if voices is None and self.file is not None and self.file.voices == "one":
            voices = "one"
        return {"voices": voices, "window": win.model_dump(), "file": None if self.file is None else self.file.model_dump()}


def voice_source(path: str | os.PathLike[str], cache: MediaCache | None = None) -> VoiceSource | None:
    """The voice counts of ``path``'s audio (see :class:`VoiceSource`); ``None`` when it has no audio."""
    from murgat.media.audio import is_long, load_audio
    from murgat.media.errors import NoAudioStream
    from murgat.media.streams import probe

    info = probe(path)
    if not info.has_audio:
        return None
    if is_long(info):
        return VoiceSource(None)
    cache = cache or default_cache()
    key = make_key("voices", file_digest(info.path), method=METHOD)
    with lock_for(("voices", key)):
        hit = cache.get_json("voices", key)
        if hit is not None:
            return VoiceSource(PitchTrack.model_validate(hit))
        try:
            track = pitch_track(load_audio(path).samples)
        except NoAudioStream:
            return None
        cache.put_json("voices", key, track.model_dump())
        return VoiceSource(track)
