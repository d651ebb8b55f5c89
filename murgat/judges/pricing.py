"""Price table (USD per million tokens: input, output) for cost accounting and dry runs.

List prices as published by the providers when this table was written (late 2025); they
change, so treat costs as estimates and override per run with ``-J price_in=… -J
price_out=…``. Thinking tokens are billed at the output rate. Local providers cost 0.

A model that is in no table (a self-hosted vLLM server, a new API model) has no known price:
:func:`list_price` says so with ``None``, never a made-up ``0.0``, so a dry run can print
"price unknown" and call its total a lower bound.
"""

from __future__ import annotations

from typing import Any

PRICES: dict[str, tuple[float, float]] = {
    "gemini-3-pro": (2.00, 12.00),
    "gemini-3-flash": (0.50, 3.00),
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.0-flash": (0.10, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
}
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
