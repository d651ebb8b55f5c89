"""``bounded`` (the probes' concurrent run with a deadline): every outcome accounted for."""

from __future__ import annotations

import asyncio
import gc

import pytest

from murgat.judging.probes.paths import UNFINISHED, bounded


async def _fails(why: str) -> None:
    await asyncio.sleep(0)
    raise RuntimeError(why)


def test_failures_are_raised_once_and_none_is_reported_unseen(caplog: pytest.LogCaptureFixture) -> None:
    """Two probes fail: the first failure is raised, and asyncio reports no other as never retrieved
    (an unreachable judge printed one such traceback per probe at the run's end)."""

    async def go() -> None:
        with pytest.raises(RuntimeError):
            await bounded([_fails("a"), _fails("b"), _fails("c")], None)

    with caplog.at_level("ERROR", logger="asyncio"):
        asyncio.run(go())
        gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


def test_what_the_deadline_cuts_is_an_unanswered_error() -> None:
    async def slow() -> str:
        await asyncio.sleep(3600)
        return "late"

    async def quick() -> str:
        return "ok"

    out = asyncio.run(bounded([quick(), slow()], 0.05))
    assert out[0] == "ok" and out[1].verdict == "error" and UNFINISHED in (out[1].error or "")
