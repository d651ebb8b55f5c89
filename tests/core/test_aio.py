"""``gather_all`` (:mod:`murgat.core.aio`): ``asyncio.gather``'s outcome, without a task for one awaitable."""

from __future__ import annotations

import asyncio

import pytest

from murgat.core.aio import gather_all


async def _value(x: int) -> int:
    await asyncio.sleep(0)
    return x


async def _fails() -> int:
    await asyncio.sleep(0)
    raise ValueError("no")


async def test_results_come_in_the_order_given() -> None:
    assert await gather_all(_value(2), _value(1), _value(3)) == [2, 1, 3]
    assert await gather_all(_value(7)) == [7]
    assert await gather_all() == []


async def test_one_awaitable_runs_in_the_callers_task_and_many_run_in_their_own() -> None:
    async def where() -> asyncio.Task[object] | None:
        return asyncio.current_task()

    me = asyncio.current_task()
    assert await gather_all(where()) == [me]
    assert me not in await gather_all(where(), where())


async def test_the_first_exception_is_raised_as_gather_raises_it() -> None:
    with pytest.raises(ValueError, match="no"):
        await gather_all(_fails())
    with pytest.raises(ValueError, match="no"):
        await gather_all(_value(1), _fails())


async def test_a_cancelled_caller_cancels_the_lone_awaitable() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def waits() -> int:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 0

    task = asyncio.ensure_future(gather_all(waits()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()
