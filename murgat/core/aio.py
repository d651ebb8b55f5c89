""":func:`gather_all`: :func:`asyncio.gather`'s results, without a task for a lone awaitable.

A scored item awaits a gather at each stage (its sentences, a sentence's facts, a fact's questions),
and most hold one of each. ``asyncio.gather`` wraps every awaitable in a task of its own even then: on a
100,000-item run that is 100,000 tasks and their callbacks for nothing, a few percent of the engine's
time (``benchmarks/bench_engine.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def gather_all(*aws: Awaitable[T]) -> list[T]:
    """The results of ``aws`` in order, as ``asyncio.gather(*aws)`` gives them (the first exception is
    raised; a cancelled caller cancels what is running). One awaitable is awaited in the caller's own
    task: the same outcome, minus the task."""
    if len(aws) == 1:
        return [await aws[0]]
    return list(await asyncio.gather(*aws))


__all__ = ["gather_all"]
