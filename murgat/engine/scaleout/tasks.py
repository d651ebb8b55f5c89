"""Any run command's items on Ray: the driver and the workers know only the command protocol.

A stream of a run travels as a :class:`TaskSpec`: the command's class (``module:Class``, a
:class:`~murgat.engine.command.Command`) and the stream's JSON payload. Each Ray task imports the
command by name and builds the item task with ``command.task(payload, judge)`` — exactly what a
local run does, with ``judge(spec, options, config)`` building a judge wired to the cluster's
cache and limit services — and runs the items of one group through it as the local loop does
(:mod:`murgat.engine.loop`): an exception becomes that item's error record, a replay miss stops
the run. Records stream back to the driver, which stamps each with the item's digest (the
command's digest function: the driver never builds a task) and appends it to the run folder; it
is the only writer.

Only commands inside murgat's own packages are imported (the name comes from the driver, never
from input data). The payload also names the driver (pid and Ray node): a worker on the
driver's machine checks that it is alive before each request, so a killed driver's workers stop
sending at once instead of after Ray notices (~2 s).
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.core.schema import Item
from murgat.engine.folder import RunFolder
from murgat.engine.loop import STOPS_RUN, Digest, record_of, stamp
from murgat.engine.scaleout.driver import RayRunReport, run_on_cluster
from murgat.engine.scaleout.worker import DriverGone, driver_watch, make_cluster_judge, stream

if TYPE_CHECKING:
    from murgat.engine.options import RunSettings

#: packages a command may live in
FACTORY_PACKAGES = ("murgat.", "programs.")
#: what stops a group in a worker: what stops a local run, or a driver that is gone (nobody to write for)
STOPS_GROUP: tuple[type[BaseException], ...] = (*STOPS_RUN, DriverGone)


@dataclass
class TaskSpec:
    """How a stream's item task travels to a worker."""

    factory: str  #: ``module:Class`` of the run command whose ``task(settings, judge)`` builds it
    settings: dict[str, Any]  #: the stream's payload
    concurrency: int = 8  #: items in flight at once inside one Ray task
    transcribes: bool = False  #: the task runs ASR (tasks then reserve ASR's threads)


def load_factory(name: str) -> Callable[..., Any]:
    """The run command class ``module:Class`` (only inside murgat's own packages)."""
    module, _, func = name.partition(":")
    if not module.startswith(FACTORY_PACKAGES) or not func.isidentifier():
        raise ValueError(f"not a murgat run command: {name!r}")
    found: Callable[..., Any] = getattr(importlib.import_module(module), func)
    return found


def run_group(payload: dict[str, Any], cache: Any, limits: Any) -> Iterator[dict[str, Any]]:
    """One Ray task: build the command's task in this worker and stream each item's record, then the stats."""
    command = load_factory(payload["factory"])()
    items = [Item.model_validate(i) for i in payload["items"]]
    problems = payload.get("problems") or {}
    for it in items:  # the loader's marks travel beside the items (they are never part of an item's JSON)
        it.input_problem = problems.get(it.id)
    alive = driver_watch(payload.get("driver"))

    async def setup() -> tuple[Any, list[Any]]:
        made: dict[str, Any] = {}

        def judge(spec: str, options: dict[str, Any], config: Any) -> Any:
            key = json.dumps([spec, options, config.model_dump(mode="json")], sort_keys=True, default=str)
            if key not in made:
                made[key] = make_cluster_judge(spec, options, config, cache, limits, alive)
            return made[key]

        task = command.task(payload["settings"], judge)
        counts = {"requests": 0, "deduplicated": 0}

        async def handle(item: Item) -> dict[str, Any]:
            # recorded as a local run records it; a stop stops the run (or: nobody is left to write it)
            rec = await record_of(task, item, STOPS_GROUP)
            if task.pool is not None:
                counts.update(requests=task.pool.requests, deduplicated=task.pool.deduplicated)
            return rec if isinstance(rec, dict) else rec.model_dump(mode="json")

        return Handler(handle, counts), list(made.values())

    yield from stream(items, payload["concurrency"], setup)


class Handler:
    """One item of a group, and the request counts of the group's task so far."""

    def __init__(self, handle: Callable[[Item], Any], counts: dict[str, int]) -> None:
        self.handle, self.counts = handle, counts

    async def __call__(self, item: Item) -> dict[str, Any]:
        rec: dict[str, Any] = await self.handle(item)
        return rec

    @property
    def requests(self) -> int:
        return self.counts["requests"]

    @property
    def deduplicated(self) -> int:
        return self.counts["deduplicated"]


def run_on_ray(spec: TaskSpec, digest: Digest, todo: Sequence[Item], folder: RunFolder, s: RunSettings, *, label: str,
               total: int, con: Any, cache_path: Path, services: tuple[Any, Any] | None = None) -> RayRunReport:
    """The driver side: ``todo`` (from :func:`murgat.engine.loop.plan_work`) in Ray tasks grouped by
    media file; each record is stamped with its item's ``digest`` and appended to ``folder``."""
    digests = {it.id: digest(it) for it in todo}
    driver: dict[str, int | str | None] = {"pid": os.getpid(), "node": None}

    def payload_of(rows: list[Item]) -> dict[str, Any]:
        if driver["node"] is None:  # Ray is initialised by now (run_on_cluster started or joined it)
            import ray

            driver["node"] = ray.get_runtime_context().get_node_id()
        return {"factory": spec.factory, "settings": spec.settings, "concurrency": spec.concurrency,
                "items": [r.model_dump(mode="json") for r in rows], "driver": dict(driver),
                "problems": {r.id: r.input_problem for r in rows if r.input_problem}}

    def write(batch: list[dict[str, Any]]) -> None:
        rows = [r if folder.record is None else folder.record.model_validate(r) for r in batch]
        folder.append_many([stamp(r, digests[str(b["id"])]) for r, b in zip(rows, batch, strict=True)])

    return run_on_cluster(s, cache_path, list(todo), run_group, payload_of, write, label=label, total=total, con=con,
                          services=services, transcribes=spec.transcribes)
