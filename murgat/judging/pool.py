""":class:`CallPool`: identical requests in flight sent once, and every request counted; the
request of each repeat of a question (``score --repeats K``: :func:`repeat_of`)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from typing import Protocol

from murgat.judges.base import Materialize
from murgat.judges.types import JudgeOutput, JudgeRequest


class Provider(Protocol):
    """What the pool asks: a judge, or the model being evaluated (any provider of :mod:`murgat.judges`)."""

    @property
    def name(self) -> str: ...

    def key(self, req: JudgeRequest) -> str: ...

    async def generate(self, req: JudgeRequest, materialize: Materialize | None = None) -> JudgeOutput: ...


def repeat_of(req: JudgeRequest, repeat: int) -> JudgeRequest:
    """The request of repeat ``repeat`` of a question (``score --repeats K`` asks each yes/no question K times).

    Repeat 0 is ``req`` itself: the request, and so the cache key, of a run without repeats (its
    cached answers serve it; ``--repeats 1`` changes nothing). Repeat r > 0 is asked with seed
    ``seed + r``: a provider that takes a seed samples anew (with one seed for every repeat a
    seeded server at temperature > 0 gives the same sample K times), and since the seed is part of
    the answer's identity each repeat has its own cache entry and cassette key. Its inputs name the
    repeat (``"repeat": r``), so a hand-written cassette line can answer one repeat only."""
    if repeat == 0:
        return req
    seed = (req.config.seed or 0) + repeat
    # the key's settings (a sized cap keys as the configured one: ``key_config``) carry the seed too
    key = None if req.key_config is None else req.key_config.model_copy(update={"seed": seed})
    return dataclasses.replace(req, config=req.config.model_copy(update={"seed": seed}), key_config=key,
                               inputs={**req.inputs, "repeat": repeat})


@dataclasses.dataclass
class _Shared:
    """One request in flight: the task that sends it (owned by the pool, not by a waiter) and the
    futures of the callers waiting for its answer."""

    task: asyncio.Task[JudgeOutput]
    waiters: list[asyncio.Future[JudgeOutput]] = dataclasses.field(default_factory=list)


class CallPool:
    """Serves identical concurrent requests to the same provider once, and counts calls.

    A shared request belongs to no single caller: it runs in a task of its own, and each caller
    waits on a future of its own that the task's end resolves, so a caller cancelled by its own time
    limit (or a Ctrl-C of its task) leaves the request running for the others. The request is
    cancelled only when no caller waits for it any more (no one is left to pay for or read its
    answer). (One future per caller, not :func:`asyncio.shield`: the same outcome with two fewer
    callbacks a request, which a 100,000-request run measures.)
    """

    def __init__(self) -> None:
        self._inflight: dict[str, _Shared] = {}
        self.requests = 0
        self.deduplicated = 0

    async def ask(self, judge: Provider, req: JudgeRequest, materialize: Materialize | None = None, *,
                  repeat: int = 0) -> JudgeOutput:
        """``judge``'s answer to ``req`` (``repeat``: which repeat of the question, :func:`repeat_of`;
        the request ``materialize`` builds on a cache miss is that repeat's too)."""
        if repeat:
            req = repeat_of(req, repeat)
            if materialize is not None:
                build = materialize

                async def materialize() -> JudgeRequest:
                    return repeat_of(await build(), repeat)

        key = f"{judge.name}|{judge.key(req)}"
        self.requests += 1
        shared = self._inflight.get(key)
        joined = shared is not None
        if shared is None:
            sent = judge.generate(req, materialize) if materialize is not None else judge.generate(req)
            shared = _Shared(asyncio.ensure_future(sent))
            shared.task.add_done_callback(functools.partial(self._finished, key, shared))
            self._inflight[key] = shared
        else:
            self.deduplicated += 1
        out = await self._wait(key, shared)
        return out.model_copy(update={"cached": True, "deduplicated": True}) if joined else out

    async def _wait(self, key: str, shared: _Shared) -> JudgeOutput:
        """The shared request's answer; a cancelled waiter cancels the request only when it was the last."""
        waiter: asyncio.Future[JudgeOutput] = asyncio.get_running_loop().create_future()
        shared.waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            shared.waiters.remove(waiter)
            if not shared.task.done() and not shared.waiters:
                shared.task.cancel()
                self._forget(key, shared)
            raise

    def _finished(self, key: str, shared: _Shared, task: asyncio.Task[JudgeOutput]) -> None:
        """A shared request ended: forget it, hand its outcome to every caller still waiting, and mark
        its exception seen (its waiters re-raise it)."""
        self._forget(key, shared)
        exc = None if task.cancelled() else task.exception()
        for waiter in shared.waiters:
            if waiter.done():  # its caller was cancelled in the meantime
                continue
            if task.cancelled():
                waiter.cancel()
            elif exc is not None:
                waiter.set_exception(exc)
            else:
                waiter.set_result(task.result())

    def _forget(self, key: str, shared: _Shared) -> None:
        """Forget a finished (or abandoned) request: memory stays flat on long runs, and a later
        identical request is served by the response cache instead."""
        if self._inflight.get(key) is shared:
            del self._inflight[key]
