"""``murgat score --run-on ray``: the score task on the engine's Ray path (:mod:`murgat.scaleout.tasks`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.scaleout.driver import summed_stats

if TYPE_CHECKING:
    from murgat.pipeline.settings import ScoreSettings


class _PoolCounts:
    """What the summary reads from a call pool, summed over the tasks."""

    def __init__(self, requests: int, deduplicated: int) -> None:
        self.requests, self.deduplicated = requests, deduplicated


def score_on_ray(items: list[Any], cfg: Any, rundir: Any, cache_path: Path, s: ScoreSettings,
                 con: Any, todo: list[Any] | None = None) -> tuple[_PoolCounts, list[Any], Any]:
    """Score ``todo`` (default: the items not yet in ``rundir``) on Ray; returns (pool counts, judge stats, report)."""
    from murgat.engine.loop import plan
    from murgat.engine.preflight import MediaPlace
    from murgat.pipeline.runner import ScoreTask
    from murgat.scaleout.tasks import TaskSpec, run_on_ray

    # paths are resolved here, in the driver: a worker on another machine has another working folder
    place = MediaPlace.of(s).resolved()
    task = ScoreTask(cfg, None, None, place)  # type: ignore[arg-type]  (the driver only needs its digests)
    if todo is None:
        todo = plan(task, items, rundir, s.retry_errors).todo
    spec = TaskSpec("murgat.pipeline.runner:ray_task", {"config": cfg.model_dump(mode="json"), "place": place.to_json()},
                    concurrency=s.item_concurrency or max(4, cfg.generate.concurrency), transcribes=cfg.evidence.text)
    report = run_on_ray(spec, task, todo, rundir, s, label="score", total=len(items), con=con, cache_path=cache_path,
                        services=services_for_run(cache_path))
    requests, deduplicated, totals = summed_stats(report)
    return _PoolCounts(requests, deduplicated), list(totals.values()), report


def services_for_run(cache_path: Path) -> Any:
    """``None``: :func:`run_command` starts the standard services (tests replace this to shorten
    the rate window)."""
    return None
