"""List prices: a model with no price is "price unknown" (``None``), never a made-up $0."""

from __future__ import annotations

import asyncio

import pytest

from murgat.judges.pricing import PRICES, list_price, load_prices, price_for
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


def test_the_shipped_price_table_is_read_with_both_prices_of_every_model() -> None:
    assert PRICES["gpt-4o"] == (2.50, 10.00) and PRICES["gemini-2.5-flash-lite"] == (0.10, 0.40)
    assert all(len(p) == 2 and min(p) >= 0 for p in PRICES.values())
    # the longer name wins over its prefix (gpt-5-mini is not priced as gpt-5)
    assert list_price("openai", "gpt-5-mini-2025-08-07") == PRICES["gpt-5-mini"] != PRICES["gpt-5"]


@pytest.mark.parametrize("row", ["{ input = 1.0 }", "{ input = 1.0, output = -2.0 }",
                                 "{ input = 1.0, output = 2.0, cached = 0.1 }"])
def test_a_price_row_without_exactly_two_non_negative_prices_is_refused(row: str) -> None:
    with pytest.raises(ValueError, match="'m' needs exactly a non-negative input and output price"):
        load_prices(f'[prices]\n"m" = {row}\n')
