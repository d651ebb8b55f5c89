"""Request and token rate limits, concurrency limits, and retry backoff bounds."""

from __future__ import annotations

import asyncio
import time

from murgat.judges.base import _RateLimiter
from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import GenerateConfig, JudgeRequest, TextPart


async def test_rpm_window_makes_the_third_request_wait() -> None:
    lim = _RateLimiter(rpm=2, tpm=None, window_s=0.3)
    t0 = time.monotonic()
    for _ in range(3):
        await lim.acquire(1)
    assert time.monotonic() - t0 >= 0.28


async def test_tpm_window_counts_estimated_tokens() -> None:
    lim = _RateLimiter(rpm=None, tpm=100, window_s=0.3)
    t0 = time.monotonic()
    await lim.acquire(80)
    await lim.acquire(30)  # 110 > 100 within the window: waits
    assert time.monotonic() - t0 >= 0.28


async def test_concurrency_limit_is_respected() -> None:
    live = 0
    peak = 0

    def answer(req) -> str:
        return "yes"

    j = ScriptedJudge(answer)
    original = j._call

    async def tracked(req):
        nonlocal live, peak
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.02)
        live -= 1
        return await original(req)

    j._call = tracked  # type: ignore[method-assign]
    cfg = GenerateConfig(concurrency=3)
    await asyncio.gather(*(j.generate(JudgeRequest(parts=[TextPart(f"q{i}")], config=cfg)) for i in range(12)))
    assert peak == 3 and j.stats.calls == 12
