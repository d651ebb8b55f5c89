"""``murgat score --executor ray``: the driver side (see :mod:`murgat.scaleout.driver`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from murgat.scaleout.driver import group_items, init_ray, run_groups, services_for, shutdown


class _PoolCounts:
    """What the summary reads from a call pool, summed over the tasks."""

    def __init__(self, requests: int, deduplicated: int) -> None:
        self.requests, self.deduplicated = requests, deduplicated


def score_on_ray(items: list[Any], cfg: Any, rundir: Any, cache_path: Path, args: argparse.Namespace,
                 con: Any, services: tuple[Any, Any] | None = None) -> tuple[_PoolCounts, list[Any], Any]:
    """Score the items not yet in ``rundir`` on Ray; returns (pool counts, judge stats, report).
    ``services`` (cache, limits) are made here unless given (tests give a short rate window)."""
    import ray

    from murgat.judges.base import JudgeStats
    from murgat.pipeline.cli import score_progress
    from murgat.scaleout.worker import score_group
    from murgat.schema import ResponseResult

    done = rundir.finished_ids(args.retry_errors)
    todo = [it for it in items if it.id not in done]
    started = init_ray(args.ray_address, args.ray_cpus)
    try:
        cache, limits = services or services_for(cache_path)
        groups = group_items(todo, args.ray_group_size)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        common = {"config": cfg.model_dump(mode="json"), "media_root": args.media_root,
                  "input_path": str(Path(args.input).resolve()), "allow_outside_root": args.allow_media_outside_root,
                  "item_concurrency": args.item_concurrency or max(4, cfg.generate.concurrency)}

        def payload_of(rows: list[Any]) -> dict[str, Any]:
            return {**common, "items": [r.model_dump(mode="json") for r in rows]}

        def write(batch: list[dict[str, Any]]) -> None:
            rundir.append_many([ResponseResult.model_validate(r) for r in batch])

        progress = score_progress(con, disable=args.quiet or args.json)
        with progress:
            task = progress.add_task("items", total=len(items), completed=len(items) - len(todo), stats="ray")
            report = run_groups(groups, score_group, payload_of, (cache, limits), write,
                                max_in_flight=max(2, 2 * cpus), retries=args.ray_task_retries,
                                on_written=lambda n: progress.advance(task, n))
        report.services = {"cache_claims": ray.get(cache.stats.remote()), "limits": ray.get(limits.stats.remote())}
        if services is None:
            report.services["cache_faults"] = ray.get(cache.close.remote())
    finally:
        shutdown(started)
    totals: dict[str, JudgeStats] = {}
    requests = deduplicated = 0
    for st in report.stats:
        requests += st["requests"]
        deduplicated += st["deduplicated"]
        for name, js in st["judges"].items():
            acc = totals.setdefault(name, JudgeStats())
            for k, v in js.items():
                setattr(acc, k, getattr(acc, k) + v)
    return _PoolCounts(requests, deduplicated), list(totals.values()), report
