"""The limit service's provider pauses, without Ray: the actor class is plain Python, and a
stand-in handle (``handle.method.remote(...)`` runs the method on the service's own event loop in
another thread) lets judges on other event loops — as Ray tasks are — use it through the same
proxy a Ray worker uses (:class:`murgat.engine.scaleout.worker._ClusterPause`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest

from murgat.engine.scaleout import services
from murgat.engine.scaleout.services import LimitService
from murgat.engine.scaleout.worker import _ClusterPause
from murgat.judges.base import Judge, JudgeError, RawAnswer
from murgat.judges.types import GenerateConfig, JudgeRequest, TextPart


class _Handle:
    """What a Ray actor handle gives a worker, without Ray: the service runs on an event loop of
    its own, and ``handle.method.remote(*args)`` is awaitable from any other loop."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def __getattr__(self, name: str) -> SimpleNamespace:
        method: Callable[..., Awaitable[Any]] = getattr(self.service, name)

        def remote(*args: Any) -> Awaitable[Any]:
            return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(method(*args), self.loop))

        return SimpleNamespace(remote=remote)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()


@pytest.fixture
def limits():
    handle = _Handle(LimitService())
    yield handle
    handle.close()


def test_one_probe_for_every_worker(limits: _Handle) -> None:
    """Two workers (two event loops, as two Ray tasks) have four requests each in flight when the
    provider answers ``429 Retry-After: 2``. With a pause per event loop each worker waited and
    probed on its own (two waits, two probes); through the service one request waits once and
    probes for both, and every other request is sent only after the probe's answer."""
    per_worker, lock = 4, threading.Lock()
    state = {"refused": 0, "recovered": False}
    events: list[tuple[str, str]] = []
    slept: list[float] = []

    class Throttled(Judge):
        provider = "throttled"

        async def _call(self, req: JudgeRequest) -> RawAnswer:
            name = req.parts[0].text
            with lock:
                recovered = state["recovered"]
                if not recovered:
                    state["refused"] += 1
            if not recovered:
                for _ in range(5000):  # every request of both workers is in flight before the server pushes back
                    if state["refused"] >= 2 * per_worker:
                        break
                    await asyncio.sleep(0.001)
                raise JudgeError("HTTP 429: slow down", retryable=True, status=429, retry_after="2")
            with lock:
                events.append(("start", name))
            await asyncio.sleep(0.01)  # long enough for a request another worker sent at the same time to start
            with lock:
                events.append(("end", name))
            return RawAnswer(text="yes")

    async def fake_sleep(s: float) -> None:
        with lock:
            slept.append(s)
            state["recovered"] = True

    answers: dict[str, list[str | None]] = {}

    def worker(w: str) -> None:
        j = Throttled("m")
        j._sleep = fake_sleep  # type: ignore[method-assign]
        j._pause = lambda scope: _ClusterPause(limits, scope)  # type: ignore[method-assign]  (as wire_judge does)
        cfg = GenerateConfig(backoff_base_s=0.5, retries=3, concurrency=per_worker)

        async def run() -> list[str | None]:
            outs = await asyncio.gather(*(j.generate(JudgeRequest(parts=[TextPart(f"{w}{i}")], config=cfg))
                                          for i in range(per_worker)))
            return [o.text for o in outs]

        answers[w] = asyncio.run(run())

    threads = [threading.Thread(target=worker, args=(w,)) for w in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert answers == {"a": ["yes"] * per_worker, "b": ["yes"] * per_worker}
    assert slept == [2.0], "one wait for the whole cluster, not one per worker"
    assert state["refused"] == 2 * per_worker, "only the requests already in flight were refused"
    assert events[0][0] == "start" and events[1] == ("end", events[0][1]), "the probe is answered before anyone else is sent"
    assert len(events) == 4 * per_worker
    assert limits.service.stats()["paused"] == {"throttled:m": 1}


async def test_a_dead_probes_pause_lapses(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that holds the pause and dies never hands it back: its hold lapses after the lease,
    and a waiting request may then probe itself."""
    monkeypatch.setattr(services, "LEASE_S", 0.05)
    svc = LimitService()
    assert await svc.pause_hold("p", "dead") is True
    assert await svc.pause_hold("p", "alive") is False  # the pause is held by another request
    assert await asyncio.wait_for(svc.pause_turn("p", "alive"), timeout=30) == (0.0, "")
    assert await svc.pause_hold("p", "alive") is True


async def test_a_renewed_hold_keeps_the_pause_and_release_reopens_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services, "LEASE_S", 0.05)
    svc = LimitService()
    assert await svc.pause_hold("p", "probe")
    waiter = asyncio.create_task(svc.pause_turn("p", "other"))
    for _ in range(6):  # three leases long, renewed twice a lease: the waiter is still waiting
        await asyncio.sleep(0.025)
        await svc.pause_renew("p", "probe")
    assert not waiter.done()
    await svc.pause_release("p", "probe")
    assert await asyncio.wait_for(waiter, timeout=30) == (0.0, "")
    await svc.pause_release("p", "someone else")  # a release by a request that never held it changes nothing


async def test_a_refusal_reaches_every_worker_and_only_its_scope() -> None:
    """A server asking for a wait longer than a request may take: requests starting meanwhile anywhere
    in the cluster fail without being sent (the seconds left and the reason come with the turn)."""
    svc = LimitService()
    await svc.pause_refuse("a|{}", 3600, "a asked to wait 3600 s (Retry-After), longer than --backoff-max 60 s")
    left, why = await svc.pause_turn("a|{}", "x")
    assert 3500 < left <= 3600 and "3600 s" in why
    assert await svc.pause_turn("b|{}", "x") == (0.0, "")


def test_the_local_judge_keeps_its_pause_per_event_loop() -> None:
    """Without the service a judge's pause is its event loop's (the one place it is chosen)."""
    from murgat.judges.base import ProviderPause

    class J(Judge):
        provider = "x"

        async def _call(self, req: JudgeRequest) -> RawAnswer:  # pragma: no cover - never sent
            return RawAnswer(text="yes")

    async def pauses() -> tuple[ProviderPause, ProviderPause]:
        return J("m")._pause("s"), J("m")._pause("s")

    a1, a2 = asyncio.run(pauses())
    b1, _ = asyncio.run(pauses())
    assert a1 is a2 and a1 is not b1 and a1.lease_s is None
