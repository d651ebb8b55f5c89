"""The one item loop: every command runs its items through :func:`run_items`.

A command says what an item means to it with an :class:`ItemTask` (how to run one item, what
its error record is) and, apart from the task, a :data:`Digest` (what identifies the work done for
an item: the driver of a Ray run stamps records with it and never builds a task); the loop does
the rest, the same way for every command:

1. **What to do.** Items whose id has no record yet; with ``retry_errors`` also those whose
   record is an error or was left undetermined by judge errors; and items whose record's
   ``input_digest`` differs from the item's digest now (the input was edited since: the old
   record is stale). Records without a digest (written before digests existed) are kept.
2. **Running.** A fixed set of ``concurrency`` workers pulls items in input order, so 100,000
   items never mean 100,000 waiting tasks. An item the loader marked unreadable (a response over
   ``--max-response-chars``: :attr:`~murgat.core.schema.Item.input_problem`) gets its error record
   without being read. An exception inside one item becomes that item's error record
   (``internal_error: …``) and the run goes on — except the ones that must stop a run: a replay
   cassette miss and a failure to write results (:func:`record_of`).
3. **Writing.** One writer task appends finished records with one write + fsync per batch
   (group commit) in a worker thread; an item counts as done only once its line is durable.
   Records are appended in completion order; readers get input order from
   :meth:`~murgat.engine.folder.RunFolder.latest_results` (``order=``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import logging
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from murgat.core.jsonl import ResultsWriteError
from murgat.core.schema import Item
from murgat.core.terminal import for_terminal
from murgat.engine.folder import RunFolder, needs_retry, record_field, record_id
from murgat.engine.outcome import ItemFailure, error_kind
from murgat.judges.base import JudgeUnreachable
from murgat.judges.replay import ReplayMiss
from murgat.judging.pool import CallPool

log = logging.getLogger("murgat.engine")

#: exceptions that stop a whole run instead of becoming one item's error record
STOPS_RUN: tuple[type[BaseException], ...] = (ReplayMiss, ResultsWriteError, JudgeUnreachable)


def internal_error(exc: BaseException) -> ItemFailure:
    """What an exception inside one item's task makes of that item (here and in a Ray worker)."""
    return ItemFailure("internal_error", f"{type(exc).__name__}: {exc}")


def input_failure(item: Item) -> ItemFailure | None:
    """Why the loader refused to read ``item`` (:attr:`~murgat.core.schema.Item.input_problem`, written
    ``KIND: detail`` — e.g. ``response_too_long: …`` by :func:`murgat.core.inputs.response_problem`),
    or ``None`` when it may be run."""
    problem = item.input_problem
    if not problem:
        return None
    kind, sep, detail = problem.partition(": ")
    if not sep or not kind.replace("_", "").isalnum():
        return ItemFailure("input_error", problem)
    return ItemFailure(kind, detail)


async def record_of(task: ItemTask, item: Item, stops: tuple[type[BaseException], ...] = STOPS_RUN) -> Any:
    """The record of one item, the one way every command makes it (here and in a Ray worker): an item
    the loader refused (:func:`input_failure`: a response over the size cap, …) gets its error record
    without being read; an exception inside the task becomes its ``internal_error`` record, except the
    ones in ``stops``, which stop the run."""
    failure = input_failure(item)
    if failure is not None:
        return task.error_record(item, failure)
    try:
        return await task.run(item)
    except stops:
        raise
    except Exception as exc:
        log.error("item %s failed: %s", item.id, traceback.format_exc())
        return task.error_record(item, internal_error(exc))
    except asyncio.CancelledError as exc:
        if _being_cancelled():
            raise  # the run itself is stopping (Ctrl-C, a sibling's failure): not this item's doing
        # a cancellation that reached the item from inside (a request it shared was cancelled, an
        # operation gave up): the item's own failure, recorded — never a worker dying without a line
        log.error("item %s was cancelled from inside: %s", item.id, traceback.format_exc())
        return task.error_record(item, ItemFailure("internal_error", "cancelled inside the item (CancelledError)"
                                                   + (f": {exc}" if str(exc) else "")))


def _being_cancelled() -> bool:
    """Whether the running task has been asked to stop (``Task.cancelling``), as opposed to a
    ``CancelledError`` raised inside it by something it awaited."""
    me = asyncio.current_task()
    return me is not None and me.cancelling() > 0


class ItemTask(Protocol):
    """What one command does with one item."""

    @property
    def pool(self) -> CallPool | None:
        """The task's call pool (its request counts), or ``None`` when it asks through none."""
        ...

    async def run(self, item: Item) -> Any:
        """The item's record (a pydantic model or a JSON object with ``id``)."""
        ...

    def error_record(self, item: Item, failure: ItemFailure) -> Any:
        """The record of an item that could not be done, ``failure`` saying why."""
        ...


#: what identifies the work done for an item (see :func:`item_digest`), apart from the task that does it
Digest = Callable[[Item], str]


#: the fields of an item that decide what is done with it; bookkeeping that other commands add to
#: their records (``usage``, ``cached``, ``input_digest``, timings) is not an edit
DIGEST_FIELDS = frozenset({"id", "media", "question", "options", "gold", "response", "question_type",
                           "generation_error"})


def item_digest(item: Item, media: str | None = None, *extra: Any) -> str:
    """``ITEM[.MEDIA]``: SHA-256 (16 hex digits) of the item's :data:`DIGEST_FIELDS` plus ``extra``
    (e.g. a post-hoc base response), then the media file's content digest when the file could be
    read (``None``: missing or refused). See :func:`same_work`."""
    fields = {k: v for k, v in item.model_dump(mode="json").items() if k in DIGEST_FIELDS}
    doc = [fields, [str(e) for e in extra]]
    head = hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]
    return f"{head}.{media[:16]}" if media else head


def same_work(old: str, new: str) -> bool:
    """Whether a record stamped ``old`` is still the work ``new`` asks for: the item parts must be
    equal, and the media parts too when both were readable. A media file that was missing (an
    error record) and is found now is not an edit: ``--retry-errors`` decides about that record."""
    o_item, _, o_media = old.partition(".")
    n_item, _, n_media = new.partition(".")
    return o_item == n_item and (not o_media or not n_media or o_media == n_media)


def media_found(record: Any, digest: str) -> bool:
    """Whether ``record`` is a ``missing_media`` error whose item's media file is read now (``digest``
    has its media part: :func:`item_digest`). The record is then not the item's outcome any more, only
    that of a wrong ``--media-root`` or a file not yet copied."""
    return error_kind(record) == "missing_media" and bool(digest.partition(".")[2])


def stamp(record: Any, digest: str) -> Any:
    """Put ``digest`` into ``record`` as ``input_digest`` (pydantic records that declare it, or dicts)."""
    if isinstance(record, dict):
        record["input_digest"] = digest
    elif "input_digest" in type(record).model_fields:
        record.input_digest = digest
    return record


@dataclass
class WorkPlan:
    """What a run will do, decided before any work (so a command can say it up front)."""

    todo: list[Item]
    n_done: int = 0
    n_edited: int = 0
    n_retried: int = 0
    #: items whose record says their media file was missing and whose file is found now: redone
    #: without ``--retry-errors`` (the usual fix, a corrected ``--media-root``, must not need a flag)
    n_found: int = 0
    edited_ids: list[str] = field(default_factory=list)


def plan_work(items: Sequence[Item], folder: RunFolder, digest: Digest, retry_errors: bool = False) -> WorkPlan:
    """Split ``items`` into done and to-do (see the module docstring, step 1); edited items are
    announced on stderr, the same note in every command."""
    latest = {record_id(r): r for r in folder.latest_results(slim=True)}
    todo: list[Item] = []
    out = WorkPlan(todo=todo)
    for it in items:
        rec = latest.get(it.id)
        if rec is None:
            todo.append(it)
            continue
        old = record_field(rec, "input_digest")
        now = digest(it) if old is not None or error_kind(rec) == "missing_media" else None
        if old is not None and now is not None and not same_work(old, now):
            out.n_edited += 1
            out.edited_ids.append(it.id)
            todo.append(it)
        elif now is not None and media_found(rec, now):
            out.n_found += 1
            todo.append(it)
        elif retry_errors and needs_retry(rec):
            out.n_retried += 1
            todo.append(it)
        else:
            out.n_done += 1
    if out.n_found:
        print(f"note: {out.n_found} item(s) whose media file was missing last time are found now: running them "
              "again", file=sys.stderr)
    if out.n_edited:  # every command says so, in these words (the edit is redone, never silently kept)
        shown = ", ".join(out.edited_ids[:5]) + (" …" if out.n_edited > 5 else "")
        print(f"note: {out.n_edited} item(s) changed since they were last run (response, question, options or "
              f"media): running them again ({for_terminal(shown)})", file=sys.stderr)
    return out


#: the id of the item whose record is being made in this task (each of :func:`run_items`' workers makes
#: one record at a time): a provider that accounts calls per item of a caller's (an inspect_ai judge,
#: whose usage belongs to the inspect sample of that item) reads it; requests started for an item
#: (the call pool's tasks) copy it with the rest of the context
CURRENT_ITEM: contextvars.ContextVar[str | None] = contextvars.ContextVar("murgat_current_item", default=None)


async def run_items(task: ItemTask, todo: Sequence[Item], folder: RunFolder, digest: Digest, *, concurrency: int = 8,
                    on_item: Callable[[Any], None] | None = None, keep: bool = False) -> list[Any]:
    """Run ``task`` over ``todo`` (see :func:`plan_work`) and append each record, stamped with its
    ``digest``, as it finishes.

    Returns the new records when ``keep`` (a 100,000-item run keeps none in memory otherwise).
    A :data:`STOPS_RUN` exception ends the run (inside an ``ExceptionGroup``); what was written
    stays intact."""
    fresh: list[Any] = []
    writer = ResultWriter(folder)

    async def one(item: Item) -> None:
        CURRENT_ITEM.set(item.id)  # this worker's context until its next item
        # the first digest of a media file reads the whole file: off the event loop (then memoised)
        stamped = await asyncio.to_thread(digest, item)
        rec = await record_of(task, item)
        stamp(rec, stamped)
        await writer.write(rec)  # durable before the item counts as done
        if keep:
            fresh.append(rec)
        if on_item:
            on_item(rec)

    queue = iter(todo)

    async def worker() -> None:
        for it in queue:
            await one(it)

    try:
        async with asyncio.TaskGroup() as tg:
            for _ in range(min(len(todo), max(1, concurrency))):
                tg.create_task(worker())
    finally:
        await writer.close()
    return fresh


class ResultWriter:
    """The one task that appends finished records: each batch waiting in the queue is written with
    one write + fsync in a worker thread (never on the event loop), then its items are released."""

    def __init__(self, folder: RunFolder) -> None:
        self.folder = folder
        self.queue: asyncio.Queue[tuple[Any, asyncio.Future[None]]] = asyncio.Queue()
        self.task = asyncio.create_task(self._run())
        self.writes = 0

    async def write(self, result: Any) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self.queue.put((result, fut))
        await fut

    async def _run(self) -> None:
        while True:
            batch = [await self.queue.get()]
            while not self.queue.empty():
                batch.append(self.queue.get_nowait())
            try:
                await asyncio.to_thread(self.folder.append_many, [r for r, _ in batch])
                self.writes += 1
            except BaseException as exc:
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
                continue
            for _, fut in batch:
                if not fut.done():
                    fut.set_result(None)

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
