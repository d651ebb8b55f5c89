"""The two cluster-wide services of a Ray run: the judge cache and the provider limits.

Both are Ray actors created by the driver and pinned to the driver's node (the cache
database is a file on the driver's disk). Workers never open the database and never keep
limits of their own, so:

* **no duplicate paid call** — before a worker sends a request it *claims* the request's
  cache key: the service answers ``hit`` (with the cached answer: a previous run, or a worker
  of this run, already has it), ``wait`` (another worker is asking right now: the worker
  awaits that answer instead of sending its own) or ``mine`` (send it, then ``finish`` with
  the answer, which is written to the cache and handed to the waiters). Claims and slots are
  *leases*: the holder renews them every few seconds while its request is in flight, so the
  ones a dead worker held run out within :data:`LEASE_S` and the key or slot is free again;
* **limits hold cluster-wide** — concurrency is a pool of leases per provider and
  requests/tokens per minute are one sliding window per provider, whichever worker sends;
* **a provider that asks to slow down is paused cluster-wide** — the limit service keeps the
  judges' :class:`~murgat.judges.base.ProviderPause` of each provider scope (the same class a
  local run keeps per event loop), so one request in the whole cluster probes while every other
  waits, as locally; each Ray task has its own event loop, and with a pause per loop every task
  met its own 429 and probed on its own. A probe is a lease too: a dead holder's pause lapses.

The actor classes import nothing from Ray; :func:`start_services` wraps them with
``ray.remote`` at run time, so the core never imports Ray.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from murgat.judges.base import ProviderPause
from murgat.judges.cache import ResponseCache
from murgat.judges.types import JudgeOutput

#: how long a claim or a concurrency slot outlives its holder's last renewal
LEASE_S = 10.0
#: how often a holder renews
HEARTBEAT_S = 3.0


class CacheService:
    """The run's response cache, shared by every worker (see the module docstring)."""

    def __init__(self, path: str) -> None:
        self.cache = ResponseCache(Path(path))
        self.claims: dict[str, tuple[float, asyncio.Event]] = {}
        self.results: dict[str, str | None] = {}
        self.counts = {"hit": 0, "mine": 0, "wait": 0, "expired": 0}

    async def claim(self, key: str, ttl_s: float) -> tuple[str, str | None]:
        hit = self.cache.get(key)
        if hit is not None:
            self.counts["hit"] += 1
            return "hit", hit.model_dump_json()
        now = time.monotonic()
        held = self.claims.get(key)
        if held is not None and held[0] > now:
            self.counts["wait"] += 1
            return "wait", None
        if held is not None:
            self.counts["expired"] += 1
        self.claims[key] = (now + ttl_s, asyncio.Event())
        self.counts["mine"] += 1
        return "mine", None

    async def renew(self, key: str, ttl_s: float) -> None:
        """The holder is alive and still asking: push the claim's expiry out again."""
        held = self.claims.get(key)
        if held is not None:
            self.claims[key] = (time.monotonic() + ttl_s, held[1])

    async def wait(self, key: str) -> str | None:
        """The answer of the worker that holds the claim (``None``: it failed or its claim expired)."""
        held = self.claims.get(key)
        if held is None:
            hit = self.cache.get(key)
            return hit.model_dump_json() if hit is not None else self.results.get(key)
        event = held[1]
        while not event.is_set():
            current = self.claims.get(key)
            if current is None or current[1] is not event:
                break
            if current[0] <= time.monotonic():
                return None  # the holder stopped renewing: it died
            try:
                await asyncio.wait_for(event.wait(), timeout=max(0.05, current[0] - time.monotonic()))
            except TimeoutError:
                continue
        return self.results.get(key)

    async def finish(self, key: str, provider: str, model: str, out_json: str | None) -> None:
        if out_json is not None:
            out = JudgeOutput.model_validate_json(out_json)
            if out.error is None and not out.blocked:
                self.cache.put(key, provider, model, out)
                # durable before anyone is told: if this actor's process dies, Ray restarts it on the
                # same SQLite file, and an answer already paid for must be there
                await asyncio.to_thread(self.cache.flush)
        held = self.claims.pop(key, None)
        self.results[key] = out_json
        if len(self.results) > 10_000:  # waiters read their answer at once; keep the map small
            self.results.pop(next(iter(self.results)))
        if held is not None:
            held[1].set()

    def stats(self) -> dict[str, int]:
        return dict(self.counts)

    def close(self) -> dict[str, int]:
        self.cache.close()
        return {"write_errors": self.cache.write_errors, "read_errors": self.cache.read_errors}


class LimitService:
    """Concurrency leases and per-minute windows per provider, for the whole cluster."""

    def __init__(self, window_s: float = 60.0) -> None:
        self.window_s = window_s  # the "per minute" window (shorter only in tests)
        self.leases: dict[str, dict[int, float]] = {}
        self.events: dict[str, list[tuple[float, int]]] = {}
        self.next_id = 0
        self.changed = asyncio.Condition()
        self.peak: dict[str, int] = {}
        self.sent: dict[str, int] = {}
        self.peak_window: dict[str, int] = {}  # the most requests admitted inside one window: the --rpm check
        self.pauses: dict[str, ProviderPause] = {}

    def _live(self, name: str) -> dict[int, float]:
        now = time.monotonic()
        leases = self.leases.setdefault(name, {})
        for lid in [lid for lid, until in leases.items() if until <= now]:
            del leases[lid]  # a dead worker's lease runs out
        return leases

    async def acquire(self, name: str, concurrency: int, lease_s: float) -> int:
        """Block until one of ``concurrency`` slots is free; returns a lease id (it expires after
        ``lease_s``, so a dead worker cannot hold a slot for ever)."""
        async with self.changed:
            while True:
                leases = self._live(name)
                now = time.monotonic()
                if len(leases) < concurrency:
                    self.next_id += 1
                    leases[self.next_id] = now + lease_s
                    self.peak[name] = max(self.peak.get(name, 0), len(leases))
                    return self.next_id
                wait = max(0.01, min(leases.values()) - now)
                try:
                    await asyncio.wait_for(self.changed.wait(), timeout=wait)
                except TimeoutError:
                    pass

    async def admit(self, name: str, rpm: float | None, tpm: float | None, tokens: int) -> None:
        """Block until the sliding one-minute windows allow one more request (of ``tokens``)."""
        while True:
            now = time.monotonic()
            events = [(t, n) for t, n in self.events.get(name, []) if now - t < self.window_s]
            self.events[name] = events
            req_ok = not rpm or len(events) < rpm
            tok_ok = not tpm or not events or sum(n for _, n in events) + tokens <= tpm
            if req_ok and tok_ok:
                events.append((now, tokens))
                self.sent[name] = self.sent.get(name, 0) + 1
                self.peak_window[name] = max(self.peak_window.get(name, 0), len(events))
                return
            await asyncio.sleep(max(0.01, self.window_s - (now - events[0][0]) + 0.01))

    async def renew(self, name: str, lease: int, lease_s: float) -> None:
        leases = self.leases.get(name, {})
        if lease in leases:
            leases[lease] = time.monotonic() + lease_s

    async def release(self, name: str, lease: int) -> None:
        async with self.changed:
            self.leases.get(name, {}).pop(lease, None)
            self.changed.notify_all()

    # ----- the providers' pauses (the judge's ProviderPause methods, per scope, for every worker) -----
    def _pause(self, scope: str) -> ProviderPause:
        if scope not in self.pauses:
            self.pauses[scope] = ProviderPause(lease_s=LEASE_S)
        return self.pauses[scope]

    async def pause_turn(self, scope: str, who: str) -> tuple[float, str]:
        return await self._pause(scope).wait_turn(who)

    async def pause_hold(self, scope: str, who: str) -> bool:
        return await self._pause(scope).hold(who)

    async def pause_renew(self, scope: str, who: str) -> None:
        await self._pause(scope).renew(who)

    async def pause_release(self, scope: str, who: str) -> None:
        await self._pause(scope).release(who)

    async def pause_refuse(self, scope: str, for_s: float, reason: str) -> None:
        await self._pause(scope).refuse(for_s, reason)

    def stats(self) -> dict[str, Any]:
        paused: dict[str, int] = {}
        for scope, p in self.pauses.items():  # per judge (the scope's endpoint details stay out of the summary)
            name = scope.split("|", 1)[0]
            paused[name] = paused.get(name, 0) + p.pauses
        return {"peak_in_flight": dict(self.peak), "sent": dict(self.sent), "paused": paused,
                "peak_per_window": dict(self.peak_window), "window_s": self.window_s}


def start_services(cache_path: Path, window_s: float = 60.0) -> tuple[Any, Any]:
    """Create both actors on this (the driver's) node.

    A service whose process dies (killed, out of memory) is restarted by Ray, and the calls it
    had in flight are retried on the new one (``max_restarts``/``max_task_retries``): the cache
    service's state is its SQLite file (every answer is committed before it is announced), the
    limit service's only a window of counts, so nothing a run paid for is lost or paid again —
    claims held at the time simply expire and are claimed anew."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
    again = {"max_restarts": -1, "max_task_retries": -1}
    cache = ray.remote(CacheService).options(scheduling_strategy=here, max_concurrency=1000, num_cpus=0,
                                             **again).remote(str(cache_path))
    limits = ray.remote(LimitService).options(scheduling_strategy=here, max_concurrency=1000, num_cpus=0,
                                              **again).remote(window_s)
    return cache, limits
