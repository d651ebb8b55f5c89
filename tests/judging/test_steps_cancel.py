"""A stopped run leaves no "Future exception was never retrieved" behind: the faithfulness labeller's
memo of a file's description (``Labeller.grounding``) is cancelled with the item that was making it,
not handed a CancelledError that nobody reads (asyncio printed one traceback per such item at exit)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from murgat.judging.steps import Labeller


def _stopped_while_describing(fail: BaseException | None) -> list[dict[str, Any]]:
    """Start a description, stop (cancel) or fail it while the media is being read, and return what
    the event loop's exception handler was told."""
    told: list[dict[str, Any]] = []
    started, gate = threading.Event(), threading.Event()

    def whole_media_parts(ctx: Any) -> list[Any]:
        started.set()
        gate.wait(30)
        if fail is not None:
            raise fail
        return []

    async def run() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: told.append(context))
        lab = Labeller(judge=None, pool=None)  # type: ignore[arg-type]  # neither is reached before the media
        lab.whole_media_parts = whole_media_parts  # type: ignore[method-assign]
        task = asyncio.create_task(lab.grounding(SimpleNamespace(media=Path("clip.mp4"))))  # type: ignore[arg-type]
        await asyncio.to_thread(started.wait, 30)
        if fail is None:
            task.cancel()
        gate.set()
        with contextlib.suppress(BaseException):
            await task
        assert lab._grounding == {}  # a later item describes the file afresh

    asyncio.run(run())
    gc.collect()  # the memo's future is freed with the item's frames: then asyncio reports what nobody read
    return told


def test_a_cancelled_description_leaves_no_unretrieved_exception() -> None:
    told = _stopped_while_describing(None)
    assert not [c for c in told if "never retrieved" in str(c.get("message"))], told


def test_a_failed_description_is_raised_once_and_not_reported_again() -> None:
    told = _stopped_while_describing(OSError("unreadable media"))
    assert not [c for c in told if "never retrieved" in str(c.get("message"))], told
