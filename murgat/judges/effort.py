"""One reasoning-effort vocabulary, mapped per provider.

| murgat effort | Gemini 3 (`thinking_level`) | Gemini 2.5 (`thinking_budget`, tokens) | OpenAI (`reasoning_effort`) | hf thinking models |
|---|---|---|---|---|
| `none`    | `low` (cannot be switched off) | 0 (Flash, Flash-Lite); 128 (Pro minimum) | `none` | thinking off |
| `minimal` | `minimal`      | 512    | `minimal` | thinking off |
| `low`     | `low`          | 1024   | `low`     | thinking on |
| `medium`  | `medium`       | 8192   | `medium`  | thinking on |
| `high`    | `high`         | 24576  | `high`    | thinking on |
| `dynamic` | (model default)| -1 (the model decides) | (omitted) | thinking on |

The same table is printed in docs/guide/judges.md. ``None`` (no ``--effort``) sends nothing, so each
provider uses its own default.
"""

from __future__ import annotations

EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "dynamic")
GEMINI3_LEVEL = {"none": "low", "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "dynamic": None}
GEMINI25_BUDGET = {"none": 0, "minimal": 512, "low": 1024, "medium": 8192, "high": 24576, "dynamic": -1}
OPENAI_EFFORT = {"none": "none", "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "dynamic": None}
HF_THINKING = {"none": False, "minimal": False, "low": True, "medium": True, "high": True, "dynamic": True}


def check(effort: str | None) -> str | None:
    if effort is None:
        return None
    e = effort.strip().lower()
    if e not in EFFORTS:
        raise ValueError(f"unknown effort {effort!r}; choose from {', '.join(EFFORTS)}")
    return e


def gemini_thinking(model: str, effort: str | None) -> dict[str, object] | None:
    """The ``thinking_config`` fields for a Gemini model, or ``None`` to send none."""
    e = check(effort)
    if e is None:
        return None
    name = model.lower()
    if name.startswith("gemini-3") or "gemini-3" in name:
        level = GEMINI3_LEVEL[e]
        return {"thinking_level": level} if level else None
    budget = GEMINI25_BUDGET[e]
    if budget == 0 and "pro" in name:
        budget = 128  # 2.5 Pro cannot switch thinking off; 128 is its minimum
    return {"thinking_budget": budget}


def arg_type(value: str) -> str:
    """argparse ``type=``: an effort level from the one vocabulary, or a usage error naming the choices."""
    import argparse

    try:
        return str(check(value))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
