"""Answer-token caps per judge task (``murgat.judges.budget``)."""

from __future__ import annotations

from murgat.judges.budget import answer_tokens, sized_for
from murgat.judges.types import GenerateConfig


def test_yes_no_questions_get_small_caps_and_explicit_smaller_values_win() -> None:
    cfg = GenerateConfig()  # the shared default, 1,024
    assert sized_for(cfg, "verify", "simple").max_tokens == 256
    assert sized_for(cfg, "entail", "json").max_tokens == 384
    assert sized_for(cfg, "entail", "cot").max_tokens == 1024
    assert sized_for(GenerateConfig(max_tokens=16), "verify", "simple").max_tokens == 16, "never raised"
    assert sized_for(cfg, "decompose", "sentence") is cfg and answer_tokens("decontextualize", "") is None


def test_reasoning_requests_keep_their_cap() -> None:
    assert sized_for(GenerateConfig(reasoning_effort="high"), "verify", "simple").max_tokens == 1024
    assert sized_for(GenerateConfig(reasoning_effort="none"), "verify", "simple").max_tokens == 256
