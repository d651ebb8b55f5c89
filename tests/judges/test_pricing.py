"""List prices: a model with no price is "price unknown" (``None``), never a made-up $0."""

from __future__ import annotations

import asyncio

from murgat.judges.pricing import list_price, price_for
from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import JudgeRequest, TextPart


def test_unknown_models_have_no_price_and_known_ones_do() -> None:
    assert list_price("openai", "Qwen/Qwen2.5-Omni-7B") is None
    assert list_price("openai", "org/gpt-4o-mini") == (0.15, 0.60)
    assert list_price("openai", "my-model", {"price_in": "1", "price_out": "2"}) == (1.0, 2.0)
    assert list_price("hf", "anything") == (0.0, 0.0)
    assert price_for("openai", "Qwen/Qwen2.5-Omni-7B") == (0.0, 0.0)  # sums stay numbers


def test_calls_to_an_unpriced_model_are_counted_apart() -> None:
    class Unpriced(ScriptedJudge):
        provider = "openai"

    j = Unpriced(lambda r: "yes", model="self-hosted-model")
    asyncio.run(j.generate(JudgeRequest(parts=[TextPart("q")])))
    assert j.stats.unpriced_calls == 1 and j.stats.cost_usd == 0.0
