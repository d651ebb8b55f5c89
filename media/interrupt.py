"""Ctrl-C that takes effect at once, even while a model loads or a file is transcribed.

Python runs a signal handler only in the main thread and only between bytecodes, so a Ctrl-C
sent while the main thread is inside one long C call (CTranslate2 loading Whisper or decoding a
window, ``from_pretrained``, an ONNX session being built) waits for that call to return: seconds
to a minute. And a Ctrl-C that *was* handled still waited for the work in the event loop's
threads, since ``asyncio.run`` joins its default executor before it returns (a cold ``score``
interrupted while four files were being transcribed took 67 s to stop). Three pieces fix that:

* :func:`run_aside` runs one such call on a daemon thread while the caller waits in short slices,
  so the caller is back in Python (and so interruptible) at least every :data:`WAIT_SLICE_S`;
* :func:`sigint_raises` (the command line turns it on) makes a Ctrl-C raise ``KeyboardInterrupt``
  wherever the main thread is, event loop included, and records that it came (:func:`interrupted`),
  so a thread that waits in :func:`run_aside` stops waiting too;
* :func:`run_async` is ``asyncio.run`` with an :class:`AsidePool` as the default executor: daemon
  threads, and after a Ctrl-C it waits at most :data:`GRACE_S` for work in flight (a record being
  appended finishes; a transcription does not hold the exit) instead of joining every thread.

Work left running is abandoned, never half-written: every file murgat writes goes through
:mod:`murgat.media.safewrite` (a temporary file, then a rename) or is appended and fsync'd record by
record, so what was written before the Ctrl-C stays readable.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from types import FrameType
from typing import Any, NoReturn, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")

#: how often a caller waiting in :func:`run_aside` is back in Python to take a Ctrl-C (seconds)
WAIT_SLICE_S = 0.1
#: after a Ctrl-C, how long the exit waits for work in flight in the pool's threads (seconds): an
#: append and fsync of a record take milliseconds; a transcription is left to the exit
GRACE_S = 0.5

_INTERRUPTED = threading.Event()


def interrupted() -> bool:
    """Whether a Ctrl-C came while the :func:`sigint_raises` now on has been on."""
    return _INTERRUPTED.is_set()


def _on_sigint(signum: int, frame: FrameType | None) -> NoReturn:
    _INTERRUPTED.set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigint_raises() -> Iterator[None]:
    """While inside, a Ctrl-C raises ``KeyboardInterrupt`` in the main thread at once and is recorded.

    ``asyncio.run``'s own handler only cancels its main task and lets the loop get to it, which a
    loop thread stuck in a long synchronous call (the embedded judge loading its sentence model)
    never does; with a handler of our own in place asyncio installs none. Off the main thread (a
    command run from a notebook's worker thread) signals cannot be handled and this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _INTERRUPTED.clear()
    previous = signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _INTERRUPTED.clear()  # a later run in this process (the API, a test) starts uninterrupted


def run_aside(fn: Callable[[], T], *, name: str = "murgat-aside") -> T:
    """``fn()`` on a daemon thread, the caller waiting in slices of :data:`WAIT_SLICE_S`: for a call
    that sits in C code for seconds (a model load, a transcription).

    In the main thread a Ctrl-C raises ``KeyboardInterrupt`` within one slice; in any other thread
    the wait ends with ``KeyboardInterrupt`` once :func:`interrupted` says a Ctrl-C came, so the
    executor thread that called it is free for the exit. ``fn`` then runs on, abandoned, until the
    process ends (its thread is a daemon). ``fn`` sees the caller's context variables; its result
    or exception is the caller's.
    """
    done = threading.Event()
    result: Future[T] = Future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            result.set_result(context.run(fn))
        except BaseException as exc:  # handed to the caller as it is, KeyboardInterrupt included
            result.set_exception(exc)
        finally:
            done.set()

    threading.Thread(target=work, name=name, daemon=True).start()
    while not done.wait(WAIT_SLICE_S):
        if _INTERRUPTED.is_set():
            raise KeyboardInterrupt
    return result.result()


_Job = tuple[Future[Any], Callable[[], Any]]


class AsidePool(ThreadPoolExecutor):
    """The event loop's default executor in :func:`run_async` (what ``asyncio.to_thread`` uses).

    It is a :class:`~concurrent.futures.ThreadPoolExecutor` only because asyncio accepts no other
    kind; the threads are its own: daemon threads (not joined at interpreter exit), started as work
    arrives up to ``max_workers`` like the standard pool's. ``shutdown(wait=True)`` joins them as the
    standard pool does, except after a Ctrl-C (:meth:`abandon`, or :func:`interrupted`), when it waits
    at most :data:`GRACE_S` in all and leaves the rest to the process's end.
    """

    def __init__(self, max_workers: int | None = None, thread_name_prefix: str = "murgat-pool") -> None:
        super().__init__(max_workers=1)  # the base's own threads are never started
        self._limit = max_workers or min(32, (os.cpu_count() or 1) + 4)
        self._prefix = thread_name_prefix
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._guard = threading.Lock()
        self._workers: list[threading.Thread] = []
        self._closed = False
        self._abandoned = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        with self._guard:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._jobs.put((future, lambda: fn(*args, **kwargs)))
            if not self._idle.acquire(blocking=False) and len(self._workers) < self._limit:
                worker = threading.Thread(target=self._work, name=f"{self._prefix}_{len(self._workers)}", daemon=True)
                self._workers.append(worker)
                worker.start()
        return future

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, call = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as exc:  # the future's, as in the standard pool
                    future.set_exception(exc)
            del job, future, call  # keep no reference to a finished job's result while idle
            self._idle.release()

    def abandon(self) -> None:
        """A Ctrl-C came: :meth:`shutdown` waits at most :data:`GRACE_S` for the threads."""
        self._abandoned = True

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._guard:
            self._closed = True
            workers = list(self._workers)
        if cancel_futures or self._abandoned or interrupted():
            self._cancel_queued()
        for _ in workers:
            self._jobs.put(None)
        if not wait:
            return
        deadline = time.monotonic() + GRACE_S if self._abandoned or interrupted() else None
        for worker in workers:
            worker.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def _cancel_queued(self) -> None:
        with contextlib.suppress(queue.Empty):
            while (job := self._jobs.get_nowait()) is not None:
                job[0].cancel()


def run_async(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` with an :class:`AsidePool` as the default executor: the same run, but a
    Ctrl-C ends it without waiting for the threads' work in flight (module docstring)."""
    pool = AsidePool(thread_name_prefix="murgat-to-thread")
    with asyncio.Runner() as runner:
        runner.get_loop().set_default_executor(pool)
        try:
            return runner.run(main)
        except KeyboardInterrupt:
            pool.abandon()  # before the runner's close waits for the pool
            raise


__all__ = ["GRACE_S", "WAIT_SLICE_S", "AsidePool", "interrupted", "run_aside", "run_async", "sigint_raises"]
