"""``generate``, ``faithfulness`` and ``program`` with ``--run-on ray`` / ``--run-on ray``.

Each command gets a group task (runs in a Ray worker: the same per-item function as the local
path, with judges wired to the cluster's cache and limits) and a driver function (groups the
items not done yet, streams the records back and writes them as the local path does).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from murgat.scaleout.driver import run_command, summed_stats
from murgat.scaleout.worker import make_cluster_judge, stream

# ----- generate -----


def generate_group(payload: dict[str, Any], cache: Any, limits: Any) -> Iterator[dict[str, Any]]:
    from murgat.generation.generate import generate_one, record_for
    from murgat.inputs import MediaOutsideRoot, resolve_media
    from murgat.judges.types import GenerateConfig
    from murgat.schema import Item

    cfg = GenerateConfig.model_validate(payload["config"])
    items = [Item.model_validate(i) for i in payload["items"]]
    base = payload.get("base") or {}

    async def setup() -> tuple[Any, list[Any]]:
        judge = make_cluster_judge(payload["model"], payload["options"], cfg, cache, limits)

        async def handle(item: Any) -> dict[str, Any]:
            outside = None
            try:
                media = resolve_media(item, payload["media_root"], payload["input_path"],
                                      allow_outside_root=payload["allow_outside_root"])
            except MediaOutsideRoot as exc:
                media, outside = None, str(exc)
            b = base.get(item.id)
            mode = payload["mode"]
            if outside is not None:
                return record_for(item, "", model=judge.name, mode=mode, generation_error=f"media_outside_root: {outside}")
            if mode == "posthoc" and b is None:
                return record_for(item, "", model=judge.name, mode=mode, generation_error="no base response for this id")
            return await generate_one(judge, item, media, mode, cfg, fps=payload["fps"], max_frames=payload["max_frames"],
                                      base_response=b)

        return handle, [judge]

    yield from stream(items, payload["concurrency"], setup)


def generate_on_ray(args: Any, items: list[Any], out: Path, cache_path: Path, cfg: Any, options: dict[str, Any],
                    base: dict[str, str] | None, con: Any) -> Any:
    """The driver of ``murgat generate --run-on ray``; returns the summed judge stats."""
    from murgat.generation.generate import compact, done_ids
    from murgat.jsonl import append_lines, cut_torn_tail, dumps

    out.parent.mkdir(parents=True, exist_ok=True)
    cut_torn_tail(out)
    skip = done_ids(out, args.retry_errors)
    retried = out.exists() and any(it.id not in skip and it.id in done_ids(out) for it in items)
    todo = [it for it in items if it.id not in skip]
    common = {"config": cfg.model_dump(mode="json"), "model": args.model, "options": options, "mode": args.mode,
              "media_root": args.media_root, "input_path": args.data.split(":", 1)[-1],
              "allow_outside_root": args.allow_media_outside_root, "fps": args.fps, "max_frames": args.max_frames,
              "concurrency": args.concurrency}

    def payload_of(rows: list[Any]) -> dict[str, Any]:
        return {**common, "items": [r.model_dump(mode="json") for r in rows],
                "base": {r.id: (base or {}).get(r.id) for r in rows if (base or {}).get(r.id) is not None}}

    report = run_command(args, cache_path, todo, generate_group, payload_of,
                         lambda batch: append_lines(out, [dumps(r) for r in batch]), label="generate",
                         total=len(items), con=con)
    if retried:
        compact(out)
    _, _, totals = summed_stats(report)
    return next(iter(totals.values()), None), report


# ----- faithfulness -----


def faithfulness_group(payload: dict[str, Any], cache: Any, limits: Any) -> Iterator[dict[str, Any]]:
    from murgat.faithfulness.label import Labeller
    from murgat.faithfulness.records import FaithResult
    from murgat.faithfulness.runner import process_item, tally
    from murgat.judges.replay import ReplayMiss
    from murgat.pipeline.config import ScoreConfig
    from murgat.pipeline.stages import CallPool
    from murgat.schema import Item

    cfg = ScoreConfig.model_validate(payload["config"])
    items = [Item.model_validate(i) for i in payload["items"]]

    async def setup() -> tuple[Any, list[Any]]:
        judge = make_cluster_judge(payload["judge"], payload["options"], cfg.generate, cache, limits)
        pool = CallPool()
        labeller = Labeller(judge=judge, pool=pool, variant=payload["variant"], granularity=payload["granularity"],
                            max_frames=payload["max_frames"])

        async def handle(item: Any) -> dict[str, Any]:
            try:
                res = await process_item(item, labeller, cfg, payload["segmentation"], media_root=payload["media_root"],
                                         input_path=payload["input_path"],
                                         allow_outside_root=payload["allow_outside_root"])
            except ReplayMiss:
                raise  # stops the run, as it does locally (exit 3)
            except Exception as exc:  # recorded as a local run records it
                res = tally(FaithResult(id=item.id, video=item.media, error=f"internal_error: {type(exc).__name__}: {exc}"))
            handle.requests, handle.deduplicated = pool.requests, pool.deduplicated  # type: ignore[attr-defined]
            return res.model_dump(mode="json")

        return handle, [judge]

    yield from stream(items, payload["item_concurrency"], setup)


def faithfulness_on_ray(args: Any, items: list[Any], rundir: Any, cache_path: Path, cfg: Any, options: dict[str, Any],
                        con: Any) -> tuple[dict[str, Any], Any]:
    """The driver of ``murgat faithfulness --run-on ray``; returns (this_invocation counts, report)."""
    from murgat.faithfulness.records import FaithResult
    from murgat.pipeline.rundir import needs_retry

    done = {r.id for r in rundir.latest_results(slim=True) if not (args.retry_errors and needs_retry(r))}
    todo = [it for it in items if it.id not in done]
    common = {"config": cfg.model_dump(mode="json"), "judge": args.judge, "options": options, "variant": args.variant,
              "granularity": args.granularity, "segmentation": args.segmentation, "max_frames": args.max_frames,
              "media_root": args.media_root, "input_path": args.input, "allow_outside_root": args.allow_media_outside_root,
              "item_concurrency": args.item_concurrency}

    def payload_of(rows: list[Any]) -> dict[str, Any]:
        return {**common, "items": [r.model_dump(mode="json") for r in rows]}

    report = run_command(args, cache_path, todo, faithfulness_group, payload_of,
                         lambda batch: rundir.append_many([FaithResult.model_validate(r) for r in batch]),
                         label="faithfulness", total=len(items), con=con, transcribes=cfg.evidence.text)
    requests, deduplicated, totals = summed_stats(report)
    stats = next(iter(totals.values()), None)
    return {**(stats.model_dump() if stats else {}), "requests": requests, "deduplicated": deduplicated}, report


# ----- program -----


class _Unit:
    """One (item, variant) pair: what a program task runs; grouped by the item's media file."""

    def __init__(self, item: Any, variant: str) -> None:
        self.item, self.variant = item, variant
        self.id = f"{variant}\x1f{item.id}"
        self.media = item.media


def program_group(payload: dict[str, Any], cache: Any, limits: Any) -> Iterator[dict[str, Any]]:
    from murgat.pipeline.config import ScoreConfig
    from murgat.schema import Item
    from programs.ops import ProgramSettings
    from programs.runner import Judges, run_item
    from programs.safety import Limits

    cfg = ScoreConfig.model_validate(payload["config"])
    units = [(_Unit(Item.model_validate(u["item"]), u["variant"])) for u in payload["units"]]
    settings = ProgramSettings(**payload["settings"])
    limits_ = Limits(**payload["limits"])

    async def setup() -> tuple[Any, list[Any]]:
        specs = payload["judges"]
        made: dict[str, Any] = {}

        def judge(role: str) -> Any:
            spec = specs.get(role)
            if spec is None:
                return None
            key = spec["spec"] + repr(sorted(spec["options"].items()))
            if key not in made:
                made[key] = make_cluster_judge(spec["spec"], spec["options"], cfg.generate, cache, limits)
            return made[key]

        judges = Judges(planner=judge("planner"), executor=judge("executor"), checker=judge("checker"))

        async def handle(u: _Unit) -> dict[str, Any]:
            record, trace = await run_item(u.item, u.variant, judges, cfg, settings, limits_, payload["replan"],
                                           media_root=payload["media_root"], input_path=payload["input_path"],
                                           allow_outside_root=payload["allow_outside_root"])
            return {"id": u.id, "variant": u.variant, "record": record, "trace": trace.model_dump(mode="json")}

        return handle, list(made.values())

    yield from stream(units, payload["item_concurrency"], setup)


def program_on_ray(args: Any, units: list[tuple[Any, str]], folders: dict[str, Any], digests: dict[tuple[str, str], str],
                   payload: dict[str, Any], con: Any) -> Any:
    """The driver of ``murgat program --run-on ray``: ``units`` are the (item, variant) pairs not
    done yet; each result goes to its variant's run folder (``OUT/VARIANT/results.jsonl``)."""
    from murgat.engine.folder import pair_record
    from murgat.engine.loop import stamp

    out = next(iter(folders.values())).path.parent
    todo = [_Unit(item, variant) for item, variant in units]

    def payload_of(rows: list[_Unit]) -> dict[str, Any]:
        return {**payload, "units": [{"item": u.item.model_dump(mode="json"), "variant": u.variant} for u in rows]}

    def write(batch: list[dict[str, Any]]) -> None:
        by_variant: dict[str, list[dict[str, Any]]] = {}
        for rec in batch:
            by_variant.setdefault(rec["variant"], []).append(rec)
        for variant, recs in by_variant.items():
            rows = []
            for r in recs:
                item_id = str(r["record"]["id"])
                rows.append(stamp(pair_record(item_id, r["record"], r["trace"]), digests.get((variant, item_id), "")))
            folders[variant].append_many(rows)

    report = run_command(args, out / "cache.sqlite", todo, program_group, payload_of, write, label="program",
                         total=len(todo), con=con)
    _, _, totals = summed_stats(report)
    return {name: st.model_dump() for name, st in totals.items()}, report
