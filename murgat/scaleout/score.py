"""``murgat score --run-on ray``: the driver side (see :mod:`murgat.scaleout.driver`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from murgat.scaleout.driver import run_command, services_for, summed_stats  # noqa: F401 (services_for: tests patch it)


class _PoolCounts:
    """What the summary reads from a call pool, summed over the tasks."""

    def __init__(self, requests: int, deduplicated: int) -> None:
        self.requests, self.deduplicated = requests, deduplicated


def score_on_ray(items: list[Any], cfg: Any, rundir: Any, cache_path: Path, args: argparse.Namespace,
                 con: Any) -> tuple[_PoolCounts, list[Any], Any]:
    """Score the items not yet in ``rundir`` on Ray; returns (pool counts, judge stats, report)."""
    from murgat.engine.loop import plan, stamp
    from murgat.engine.preflight import MediaPlace
    from murgat.pipeline.runner import ScoreTask
    from murgat.scaleout.worker import score_group
    from murgat.schema import ResponseResult

    # paths are resolved here, in the driver: a worker on another machine has another working folder
    media_root = str(Path(args.media_root).resolve()) if args.media_root else None
    task = ScoreTask(cfg, None, None, MediaPlace(media_root, str(Path(args.input).resolve()),  # type: ignore[arg-type]
                                                 args.allow_media_outside_root))
    todo = plan(task, items, rundir, args.retry_errors).todo
    digests = {it.id: task.digest(it) for it in todo}
    common = {"config": cfg.model_dump(mode="json"), "media_root": media_root,
              "input_path": str(Path(args.input).resolve()), "allow_outside_root": args.allow_media_outside_root,
              "item_concurrency": args.item_concurrency or max(4, cfg.generate.concurrency)}

    def payload_of(rows: list[Any]) -> dict[str, Any]:
        return {**common, "items": [r.model_dump(mode="json") for r in rows]}

    def write(batch: list[dict[str, Any]]) -> None:
        rundir.append_many([stamp(ResponseResult.model_validate(r), digests.get(str(r.get("id")), "")) for r in batch])

    report = run_command(args, cache_path, todo, score_group, payload_of, write, label="score", total=len(items),
                         con=con, services=services_for_run(cache_path), transcribes=cfg.evidence.text)
    requests, deduplicated, totals = summed_stats(report)
    return _PoolCounts(requests, deduplicated), list(totals.values()), report


def services_for_run(cache_path: Path) -> Any:
    """``None``: :func:`run_command` starts the standard services (tests replace this to shorten
    the rate window)."""
    return None
