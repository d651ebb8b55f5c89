"""What runs inside a Ray worker: judges wired to the cluster-wide services, and the loop that
runs one group's items and streams each record back to the driver (:func:`stream`).

The worker does all the per-item work a local run does — probe, decode, evidence, ASR/OCR/sound
tagging and the judge calls, through the same item task (:mod:`murgat.engine.scaleout.tasks`) — but it
never writes the run folder: records go back to the driver, which alone appends them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from murgat.engine.scaleout.services import HEARTBEAT_S, LEASE_S
from murgat.judges import make_judge
from murgat.judges.types import JudgeOutput, JudgeRequest


async def _heartbeat(renew: Any) -> None:
    """Renew a lease until cancelled (a dead worker stops, and its lease runs out)."""
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        with contextlib.suppress(Exception):
            await renew()


class _Lease:
    """``async with`` one cluster-wide concurrency slot (replaces a judge's local semaphore)."""

    def __init__(self, limits: Any, name: str, n: int, alive: Callable[[], None] | None = None) -> None:
        self.limits, self.name, self.n, self.alive = limits, name, n, alive
        self.lease: int | None = None
        self.beat: asyncio.Task[None] | None = None

    async def __aenter__(self) -> _Lease:
        self.lease = await self.limits.acquire.remote(self.name, self.n, LEASE_S)
        if self.alive is not None:
            try:
                self.alive()  # the slot may have taken a while: the driver must still be there to send
            except BaseException:
                await self.limits.release.remote(self.name, self.lease)
                raise
        self.beat = asyncio.create_task(_heartbeat(lambda: self.limits.renew.remote(self.name, self.lease, LEASE_S)))
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self.beat is not None:
            self.beat.cancel()
        if self.lease is not None:
            await self.limits.release.remote(self.name, self.lease)


class _Window:
    """The cluster-wide requests/tokens-per-minute windows (replaces a judge's local limiter)."""

    def __init__(self, limits: Any, name: str, rpm: float | None, tpm: float | None) -> None:
        self.limits, self.name, self.rpm, self.tpm = limits, name, rpm, tpm

    async def acquire(self, tokens: int) -> None:
        if self.rpm or self.tpm:  # no round trip when there is no window to keep
            await self.limits.admit.remote(self.name, self.rpm, self.tpm, tokens)


class _ClusterPause:
    """A judge's :class:`~murgat.judges.base.ProviderPause` kept by the limit service for the whole
    cluster (same methods, one round trip each): a provider that told one worker to slow down is
    paused for all, with one probe. The probe renews its hold while it waits and sends, so a
    dead worker's pause lapses within :data:`LEASE_S`. One per request (``Judge._attempts``)."""

    def __init__(self, limits: Any, scope: str, alive: Callable[[], None] | None = None) -> None:
        self.limits, self.scope, self.alive = limits, scope, alive
        self.beat: asyncio.Task[None] | None = None

    async def wait_turn(self, who: str) -> tuple[float, str]:
        turn: tuple[float, str] = await self.limits.pause_turn.remote(self.scope, who)
        if self.alive is not None:
            self.alive()  # the wait may have been long: the driver must still be there to send
        return turn

    async def hold(self, who: str) -> bool:
        mine: bool = await self.limits.pause_hold.remote(self.scope, who)
        if mine and self.beat is None:
            self.beat = asyncio.create_task(_heartbeat(lambda: self.limits.pause_renew.remote(self.scope, who)))
        return mine

    async def release(self, who: str) -> None:
        if self.beat is None:
            return  # never held: nothing to hand back (no round trip for the requests that were not probes)
        self.beat.cancel()
        self.beat = None
        await self.limits.pause_release.remote(self.scope, who)

    async def refuse(self, for_s: float, reason: str) -> None:
        await self.limits.pause_refuse.remote(self.scope, for_s, reason)


class DriverGone(RuntimeError):
    """The driver of this run is gone (killed): its workers stop sending instead of paying for
    answers nobody will write."""


def driver_watch(driver: dict[str, Any] | None) -> Callable[[], None]:
    """A check that raises :class:`DriverGone` once the driver process has ended — for a worker on
    the driver's machine (a worker elsewhere relies on Ray noticing, which takes ~2 s)."""
    if not driver or not driver.get("pid"):
        return lambda: None
    try:
        import ray

        here = ray.get_runtime_context().get_node_id()
    except Exception:  # not inside Ray (a test calling the group directly)
        here = None
    if here is None or here != driver.get("node"):
        return lambda: None
    pid = int(driver["pid"])

    def check() -> None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            raise DriverGone(f"the driver (pid {pid}) has ended") from None
        except PermissionError:
            pass  # alive, owned by another user

    return check


def wire_judge(judge: Any, cache: Any, limits: Any, alive: Callable[[], None] | None = None) -> Any:
    """Route a judge through the cluster: its concurrency and rate limits and its pause after a
    429 through the limit service (instance attributes shadow the judge's own ``_semaphore``,
    ``_limiter`` and ``_pause``), and every request through a claim on the cache service, so an
    answer anyone in the cluster has — or is fetching — is not paid for again. The judge must
    have no local cache (``cache=None``)."""
    judge._semaphore = lambda n: _Lease(limits, judge.provider, n, alive)
    judge._limiter = lambda rpm, tpm: _Window(limits, judge.provider, rpm, tpm)
    judge._pause = lambda scope: _ClusterPause(limits, scope, alive)
    inner = judge.generate

    async def generate(req: JudgeRequest, materialize: Any = None) -> JudgeOutput:
        key = judge.key(req)
        if alive is not None:
            alive()  # no new request once the driver is gone
        while True:
            status, payload = await cache.claim.remote(key, LEASE_S)
            if status == "hit":
                judge.stats.cache_hits += 1
                return JudgeOutput.model_validate_json(payload).model_copy(update={"cached": True})
            if status == "wait":
                got = await cache.wait.remote(key)
                if got is not None:
                    theirs = JudgeOutput.model_validate_json(got)
                    if theirs.error is None:
                        # another worker's identical request answered it: a deduplicated request, as the
                        # record counts it (not a cache hit), so this_invocation agrees with the records
                        judge.cluster_deduplicated = getattr(judge, "cluster_deduplicated", 0) + 1
                        return theirs.model_copy(update={"cached": True, "deduplicated": True})
                continue  # the holder failed or died: claim again
            out: JudgeOutput | None = None
            if alive is not None:
                alive()
            beat = asyncio.create_task(_heartbeat(lambda: cache.renew.remote(key, LEASE_S)))
            try:
                out = await (inner(req, materialize) if materialize is not None else inner(req))
            finally:
                beat.cancel()
                await cache.finish.remote(key, judge.provider, judge.model,
                                          out.model_dump_json() if out is not None else None)
            mine: JudgeOutput = out
            return mine

    judge.generate = generate
    return judge


def make_cluster_judge(spec: str, options: dict[str, Any], config: Any, cache: Any, limits: Any,
                       alive: Callable[[], None] | None = None) -> Any:
    return wire_judge(make_judge(spec, options, cache=None, config=config), cache, limits, alive)


def stream(items: list[Any], concurrency: int, setup: Callable[[], Awaitable[tuple[Any, list[Any]]]]
           ) -> Iterator[dict[str, Any]]:
    """Run ``handle(item)`` for every item on an event loop of its own (``setup()`` builds
    ``(handle, judges)`` there), ``concurrency`` at a time; yield each returned record as soon as
    it is ready, then one ``{"__stats__": …}`` record with the judges' counts."""
    out: queue.Queue[Any] = queue.Queue()
    done = object()
    t0 = time.monotonic()

    async def run() -> None:
        handle, built = await setup()
        it = iter(items)

        async def worker() -> None:
            for item in it:
                out.put(await handle(item))

        try:
            async with asyncio.TaskGroup() as tg:
                for _ in range(min(len(items), max(1, concurrency))):
                    tg.create_task(worker())
        finally:
            stats: dict[str, Any] = {"pid": os.getpid(), "seconds": round(time.monotonic() - t0, 3), "judges": {},
                                     "requests": getattr(handle, "requests", 0),
                                     "deduplicated": getattr(handle, "deduplicated", 0)
                                     + sum(getattr(j, "cluster_deduplicated", 0) for j in {id(j): j for j in built}.values())}
            for j in {id(j): j for j in built}.values():
                stats["judges"][j.name] = j.stats.model_dump()
                await j.aclose()
            out.put({"__stats__": stats})

    failure: list[BaseException] = []

    def thread() -> None:
        try:
            asyncio.run(run())
        except BaseException as exc:
            failure.append(exc)
        finally:
            out.put(done)

    th = threading.Thread(target=thread, name="murgat-ray-group", daemon=True)
    th.start()
    while True:
        rec = out.get()
        if rec is done:
            break
        yield rec
    th.join()
    if failure:
        raise failure[0]
