"""Any engine item task on Ray: the driver and the workers know no command.

A command that can run on Ray describes its task as a :class:`TaskSpec`: the dotted name of a
*factory* (``module:function``) and the JSON settings it needs. Each Ray task imports the
factory by name, calls ``factory(settings, judge)`` — ``judge(spec, options, config)`` builds a
judge wired to the cluster's cache and limit services — and runs the items of one group
through the task exactly as the local loop does (:mod:`murgat.engine.loop`): an exception
becomes that item's error record, a replay miss stops the run. Records stream back to the
driver, which stamps each with the item's digest and appends it to the run folder; it is the
only writer.

Only factories inside murgat's own packages are imported (the name comes from the driver,
never from input data). The payload also names the driver (pid and Ray node): a worker on the
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

from murgat.engine.folder import RunFolder
from murgat.engine.loop import STOPS_RUN, ItemTask, stamp
from murgat.scaleout.driver import RayRunReport, run_command

if TYPE_CHECKING:
    from murgat.engine.options import RunOn
from murgat.scaleout.worker import DriverGone, driver_watch, make_cluster_judge, stream
from murgat.schema import Item

#: packages a factory may live in
FACTORY_PACKAGES = ("murgat.", "programs.")


@dataclass
class TaskSpec:
    """How an item task travels to a worker."""

    factory: str  #: ``module:function`` building the task from ``(settings, judge)``
    settings: dict[str, Any]
    concurrency: int = 8  #: items in flight at once inside one Ray task
    transcribes: bool = False  #: the task runs ASR (tasks then reserve ASR's threads)


def load_factory(name: str) -> Callable[..., Any]:
    module, _, func = name.partition(":")
    if not module.startswith(FACTORY_PACKAGES) or not func.isidentifier():
        raise ValueError(f"not a murgat task factory: {name!r}")
    return getattr(importlib.import_module(module), func)  # type: ignore[no-any-return]


def run_group(payload: dict[str, Any], cache: Any, limits: Any) -> Iterator[dict[str, Any]]:
    """One Ray task: build the task in this worker and stream each item's record, then the stats."""
    factory = load_factory(payload["factory"])
    items = [Item.model_validate(i) for i in payload["items"]]
    alive = driver_watch(payload.get("driver"))

    async def setup() -> tuple[Any, list[Any]]:
        made: dict[str, Any] = {}

        def judge(spec: str, options: dict[str, Any], config: Any) -> Any:
            key = json.dumps([spec, options, config.model_dump(mode="json")], sort_keys=True, default=str)
            if key not in made:
                made[key] = make_cluster_judge(spec, options, config, cache, limits, alive)
            return made[key]

        task = factory(payload["settings"], judge)

        async def handle(item: Item) -> dict[str, Any]:
            try:
                rec = await task.run(item)
            except (*STOPS_RUN, DriverGone):
                raise  # stops the run, as it does locally (or: nobody is left to write it)
            except Exception as exc:  # recorded as a local run records it
                rec = task.error_record(item, f"internal_error: {type(exc).__name__}: {exc}")
            pool = getattr(task, "pool", None)
            if pool is not None:
                handle.requests, handle.deduplicated = pool.requests, pool.deduplicated  # type: ignore[attr-defined]
            return rec if isinstance(rec, dict) else rec.model_dump(mode="json")

        return handle, list(made.values())

    yield from stream(items, payload["concurrency"], setup)


def run_on_ray(spec: TaskSpec, task: ItemTask, todo: Sequence[Item], folder: RunFolder, s: RunOn, *, label: str,
               total: int, con: Any, cache_path: Path, services: tuple[Any, Any] | None = None) -> RayRunReport:
    """The driver side: ``todo`` (from :func:`murgat.engine.loop.plan`) in Ray tasks grouped by media
    file; each record is stamped with its item's digest (``task.digest``) and appended to ``folder``."""
    digests = {it.id: task.digest(it) for it in todo}
    driver = {"pid": os.getpid(), "node": None}

    def payload_of(rows: list[Item]) -> dict[str, Any]:
        if driver["node"] is None:  # Ray is initialised by now (run_command started or joined it)
            import ray

            driver["node"] = ray.get_runtime_context().get_node_id()
        return {"factory": spec.factory, "settings": spec.settings, "concurrency": spec.concurrency,
                "items": [r.model_dump(mode="json") for r in rows], "driver": dict(driver)}

    def write(batch: list[dict[str, Any]]) -> None:
        rows = [r if folder.record is None else folder.record.model_validate(r) for r in batch]
        folder.append_many([stamp(r, digests[str(b["id"])]) for r, b in zip(rows, batch, strict=True)])

    return run_command(s, cache_path, list(todo), run_group, payload_of, write, label=label, total=total, con=con,
                       services=services, transcribes=spec.transcribes)
