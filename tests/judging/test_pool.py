"""The call pool: a request shared by several waiting callers belongs to none of them.

A caller cancelled while it waits (its own time limit, a Ctrl-C of its task) must not take the
answer away from the callers still waiting for the same request; the request is cancelled only
when nobody waits for it any more.
"""

from __future__ import annotations

import asyncio

import pytest

from murgat.judges.types import JudgeOutput, JudgeRequest, TextPart
from murgat.judging.pool import CallPool


class GatedJudge:
    """Answers every request once ``release`` is set; counts the requests it was sent and cancelled."""

    name = "gated"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.sent = 0
        self.cancelled = 0

    def key(self, req: JudgeRequest) -> str:
        return str(req.inputs.get("q"))

    async def generate(self, req: JudgeRequest, materialize: object = None) -> JudgeOutput:
        self.sent += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return JudgeOutput(text=f"answer to {req.inputs['q']}")


def _req(q: str) -> JudgeRequest:
    return JudgeRequest(parts=[TextPart(q)], inputs={"q": q})


def test_cancelling_the_first_caller_leaves_the_shared_request_to_the_second() -> None:
    async def main() -> tuple[JudgeOutput, GatedJudge, CallPool]:
        judge, pool = GatedJudge(), CallPool()
        first = asyncio.ensure_future(pool.ask(judge, _req("q")))
        second = asyncio.ensure_future(pool.ask(judge, _req("q")))
        await asyncio.sleep(0)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        judge.release.set()
        return await second, judge, pool

    out, judge, pool = asyncio.run(main())
    assert out.text == "answer to q" and out.deduplicated
    assert (judge.sent, judge.cancelled, pool.requests, pool.deduplicated) == (1, 0, 2, 1)


def test_a_time_limit_of_the_first_caller_does_not_reach_the_second() -> None:
    async def main() -> tuple[JudgeOutput, GatedJudge]:
        judge, pool = GatedJudge(), CallPool()

        async def limited() -> None:
            try:
                async with asyncio.timeout(0.001):  # in this task, which sent the request
                    await pool.ask(judge, _req("q"))
            finally:
                judge.release.set()  # the answer comes only after the first caller gave up

        first = asyncio.ensure_future(limited())
        second = asyncio.ensure_future(pool.ask(judge, _req("q")))
        with pytest.raises(TimeoutError):
            await first
        return await second, judge

    out, judge = asyncio.run(main())
    assert out.text == "answer to q" and judge.cancelled == 0


def test_the_request_is_cancelled_when_its_last_caller_is() -> None:
    async def main() -> tuple[GatedJudge, CallPool, JudgeOutput]:
        judge, pool = GatedJudge(), CallPool()
        callers = [asyncio.ensure_future(pool.ask(judge, _req("q"))) for _ in range(2)]
        await asyncio.sleep(0)
        for c in callers:
            c.cancel()
        await asyncio.gather(*callers, return_exceptions=True)
        await asyncio.sleep(0)
        judge.release.set()
        again = await pool.ask(judge, _req("q"))  # a fresh request, not the abandoned one
        return judge, pool, again

    judge, pool, again = asyncio.run(main())
    assert judge.cancelled == 1 and judge.sent == 2 and not again.deduplicated and pool.deduplicated == 1


class FailingJudge(GatedJudge):
    """Fails every request once ``release`` is set."""

    async def generate(self, req: JudgeRequest, materialize: object = None) -> JudgeOutput:
        await super().generate(req, materialize)
        raise RuntimeError(f"no answer to {req.inputs['q']}")


def test_a_shared_failure_reaches_every_caller_and_is_not_left_unseen(caplog: pytest.LogCaptureFixture) -> None:
    """Both callers of one failed request get its exception; asyncio reports no exception left unseen."""

    async def go() -> list[BaseException | JudgeOutput]:
        pool, judge = CallPool(), FailingJudge()
        calls = [asyncio.ensure_future(pool.ask(judge, _req("q"))) for _ in range(2)]
        await asyncio.sleep(0)
        judge.release.set()
        out = await asyncio.gather(*calls, return_exceptions=True)
        assert judge.sent == 1 and pool.deduplicated == 1
        return out

    with caplog.at_level("ERROR", logger="asyncio"):
        out = asyncio.run(go())
    assert [str(o) for o in out] == ["no answer to q"] * 2
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


def test_a_request_cancelled_from_outside_cancels_its_callers() -> None:
    """The loop's shutdown (a Ctrl-C) cancels the pool's own task: every caller sees the cancellation."""

    async def go() -> None:
        pool, judge = CallPool(), GatedJudge()
        calls = [asyncio.ensure_future(pool.ask(judge, _req("q"))) for _ in range(2)]
        await asyncio.sleep(0)
        (shared,) = pool._inflight.values()
        shared.task.cancel()
        out = await asyncio.gather(*calls, return_exceptions=True)
        assert all(isinstance(o, asyncio.CancelledError) for o in out)
        assert not pool._inflight

    asyncio.run(go())
