""":class:`CallPool`: identical requests in flight sent once, and every request counted; the
request of each repeat of a question (``score --repeats K``: :func:`repeat_of`)."""

from __future__ import annotations

import asyncio
import dataclasses
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


class CallPool:
    """Serves identical concurrent requests to the same provider once, and counts calls."""

    def __init__(self) -> None:
        self._inflight: dict[str, asyncio.Future[JudgeOutput]] = {}
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
