"""murgat.media.interrupt: a Ctrl-C is not held up by a call that sits in C code (a model load, a
transcription) nor by the event loop's threads. Each blocking call here waits on an event the test
holds, so "did not wait" is shown by the call still blocked when the caller is back, not by a clock."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Iterator

import pytest

from murgat.media import interrupt


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """The event every blocked call waits for; set at the end so no thread outlives the test."""
    ev = threading.Event()
    yield ev
    ev.set()


@pytest.fixture
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interrupt, "GRACE_S", 0.05)
    monkeypatch.setattr(interrupt, "WAIT_SLICE_S", 0.01)


def test_run_aside_returns_the_result_and_raises_the_error_of_the_call() -> None:
    assert interrupt.run_aside(lambda: 6 * 7) == 42

    def fails() -> None:
        raise ValueError("model folder is not a model")

    with pytest.raises(ValueError, match="not a model"):
        interrupt.run_aside(fails)


def test_a_ctrl_c_in_the_main_thread_ends_the_wait_while_the_call_is_still_running(release: threading.Event) -> None:
    started = threading.Event()

    def load() -> str:
        started.set()
        release.wait()
        return "model"

    def ctrl_c() -> None:
        started.wait()
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=ctrl_c, daemon=True).start()
    before = signal.getsignal(signal.SIGINT)  # Python's own handler, or SIG_IGN in a suite started in the background
    with interrupt.sigint_raises():
        with pytest.raises(KeyboardInterrupt):
            interrupt.run_aside(load)
        assert interrupt.interrupted()
        assert not release.is_set()  # the load was still running when the caller got the Ctrl-C
    assert signal.getsignal(signal.SIGINT) is before  # put back, and the record cleared
    assert not interrupt.interrupted()


def test_a_worker_thread_stops_waiting_once_a_ctrl_c_came(release: threading.Event, short_grace: None) -> None:
    """An executor thread waiting in run_aside is free for the exit as soon as the Ctrl-C is recorded."""
    started, outcome = threading.Event(), []

    def worker() -> None:
        try:
            interrupt.run_aside(lambda: (started.set(), release.wait()))
            outcome.append("returned")
        except KeyboardInterrupt:
            outcome.append("interrupted")

    with interrupt.sigint_raises():
        thread = threading.Thread(target=worker)
        thread.start()
        started.wait()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        thread.join()
    assert outcome == ["interrupted"] and not release.is_set()


def test_the_pool_runs_work_on_daemon_threads_and_joins_them_on_a_plain_shutdown() -> None:
    pool = interrupt.AsidePool(max_workers=2)
    futures = [pool.submit(lambda k=k: (k * k, threading.current_thread().daemon)) for k in range(5)]
    pool.shutdown(wait=True)
    assert [f.result() for f in futures] == [(k * k, True) for k in range(5)]
    with pytest.raises(RuntimeError):
        pool.submit(print)


def test_an_abandoned_pool_does_not_wait_for_work_in_flight(release: threading.Event, short_grace: None) -> None:
    pool = interrupt.AsidePool(max_workers=1)
    running = threading.Event()
    busy = pool.submit(lambda: (running.set(), release.wait()))
    queued = pool.submit(lambda: "never started")
    running.wait()
    pool.abandon()
    pool.shutdown(wait=True)
    assert not busy.done() and queued.cancelled()


def test_run_async_leaves_on_a_ctrl_c_without_waiting_for_to_thread_work(release: threading.Event,
                                                                         short_grace: None) -> None:
    """What held a cold ``score`` for 67 s: asyncio.run joined the thread still transcribing."""
    running = threading.Event()

    async def main() -> None:
        work = asyncio.ensure_future(asyncio.to_thread(lambda: (running.set(), release.wait())))
        await asyncio.to_thread(running.wait)
        assert not work.done()
        raise KeyboardInterrupt  # where a Ctrl-C lands with sigint_raises on: inside the loop

    with pytest.raises(KeyboardInterrupt):
        interrupt.run_async(main())
    assert running.is_set() and not release.is_set()


def test_run_async_is_asyncio_run_otherwise() -> None:
    async def main() -> int:
        return sum(await asyncio.gather(*(asyncio.to_thread(lambda k=k: k) for k in range(10))))

    assert interrupt.run_async(main()) == 45
