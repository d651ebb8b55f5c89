""":class:`CallPool`: identical requests in flight sent once, and every request counted."""

from __future__ import annotations

import asyncio
from typing import Protocol

from murgat.judges.base import Materialize
from murgat.judges.types import JudgeOutput, JudgeRequest


class Provider(Protocol):
    """What the pool asks: a judge, or the model being evaluated (any provider of :mod:`murgat.judges`)."""

    @property
    def name(self) -> str: ...

    def key(self, req: JudgeRequest) -> str: ...

    async def generate(self, req: JudgeRequest, materialize: Materialize | None = None) -> JudgeOutput: ...


class CallPool:
    """Serves identical concurrent requests to the same provider once, and counts calls."""

    def __init__(self) -> None:
        self._inflight: dict[str, asyncio.Future[JudgeOutput]] = {}
        self.requests = 0
        self.deduplicated = 0

    async def ask(self, judge: Provider, req: JudgeRequest, materialize: Materialize | None = None) -> JudgeOutput:
        key = f"{judge.name}|{judge.key(req)}"
        self.requests += 1
        fut = self._inflight.get(key)
        if fut is not None:
            self.deduplicated += 1
            out = await asyncio.shield(fut)
            return out.model_copy(update={"cached": True, "deduplicated": True})
        fut = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            out = await (judge.generate(req, materialize) if materialize is not None else judge.generate(req))
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # mark retrieved
            raise
        finally:
            # forget finished requests (memory stays flat on long runs); a later identical
            # request is served by the response cache instead
            self._inflight.pop(key, None)
        fut.set_result(out)
        return out
