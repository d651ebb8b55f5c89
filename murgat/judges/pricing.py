"""Price table (USD per million tokens: input, output; the data in ``prices.toml``) for cost accounting and dry runs.

List prices as published by the providers when this table was written (late 2025); they
change, so treat costs as estimates and override per run with ``-J price_in=… -J
price_out=…``. Thinking tokens are billed at the output rate. Local providers cost 0.

A model that is in no table (a self-hosted vLLM server, a new API model) has no known price:
:func:`list_price` says so with ``None``, never a made-up ``0.0``, so a dry run can print
"price unknown" and call its total a lower bound.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any

#: the table's file, shipped in the package: data that changes with the providers' price lists, not code
PRICES_FILE = "prices.toml"


def load_prices(text: str) -> dict[str, tuple[float, float]]:
    """``model name prefix -> (input, output)`` from the table's TOML text; a row without both prices, or
    with a negative one, is an error here rather than a cost that looks right and is not."""
    prices: dict[str, tuple[float, float]] = {}
    for model, row in tomllib.loads(text)["prices"].items():
        pair = (float(row["input"]), float(row["output"])) if set(row) == {"input", "output"} else (-1.0, -1.0)
        if min(pair) < 0:
            raise ValueError(f"{PRICES_FILE}: {model!r} needs exactly a non-negative input and output price, not {row}")
        prices[model] = pair
    return prices


PRICES = load_prices(resources.files("murgat.judges").joinpath(PRICES_FILE).read_text(encoding="utf-8"))
FREE_PROVIDERS = frozenset({"hf", "embedded", "replay", "scripted"})


_BY_LENGTH = sorted(PRICES, key=len, reverse=True)


def list_price(provider: str, model: str, options: dict[str, Any] | None = None) -> tuple[float, float] | None:
    """``(input, output)`` USD per million tokens, or ``None`` when the price is unknown.

    ``-J price_in``/``price_out`` win; local providers are free; else the longest table prefix
    of the model's last path segment (``openai:org/gpt-4o-mini`` is ``gpt-4o-mini``)."""
    opts = options or {}
    if "price_in" in opts or "price_out" in opts:
        return float(opts.get("price_in", 0.0)), float(opts.get("price_out", 0.0))
    if provider in FREE_PROVIDERS:
        return 0.0, 0.0
    name = model.split("/")[-1].lower()
    for prefix in _BY_LENGTH:
        if name.startswith(prefix):
            return PRICES[prefix]
    return None


def price_for(provider: str, model: str, options: dict[str, Any] | None = None) -> tuple[float, float]:
    """:func:`list_price` with an unknown price as ``(0.0, 0.0)``, for sums that must be numbers;
    whoever shows a cost should ask :func:`list_price` and say "price unknown" instead."""
    return list_price(provider, model, options) or (0.0, 0.0)
