"""Price table (USD per million tokens: input, output) for cost accounting and dry runs.

List prices as published by the providers when this table was written (late 2025); they
change, so treat costs as estimates and override per run with ``-J price_in=… -J
price_out=…``. Thinking tokens are billed at the output rate. Local providers cost 0.
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


def price_for(provider: str, model: str, options: dict[str, Any] | None = None) -> tuple[float, float]:
    """``(input, output)`` USD per million tokens; the longest matching prefix wins."""
    opts = options or {}
    if "price_in" in opts or "price_out" in opts:
        return float(opts.get("price_in", 0.0)), float(opts.get("price_out", 0.0))
    if provider in FREE_PROVIDERS:
        return 0.0, 0.0
    name = model.split("/")[-1].lower()
    for prefix in sorted(PRICES, key=len, reverse=True):
        if name.startswith(prefix):
            return PRICES[prefix]
    return 0.0, 0.0  # unknown model (e.g. a self-hosted vLLM server): no list price
