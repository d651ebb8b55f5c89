"""``murgat faithfulness`` and ``murgat reflect``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from murgat.faithfulness.shared_cli import _common, _config, _pct, _select


def _cmd_faithfulness(args: argparse.Namespace) -> int:
    from murgat.cliutil import failure_code, take_output
    from murgat.console import console
    from murgat.faithfulness.label import Labeller
    from murgat.faithfulness.metric import summarize_faithfulness
    from murgat.faithfulness.records import FaithResult
    from murgat.faithfulness.runner import failure_line
    from murgat.inputs import InputError, load_items
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache
    from murgat.pipeline.rundir import RunDir
    from murgat.pipeline.stages import CallPool

    try:
        items = _select(load_items(args.input, None if args.ids else args.limit), args)
        opts = parse_options(args.judge_option)
        cfg = _config(args, args.judge, opts)
    except (InputError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from murgat.cliutil import media_root_refused

    if media_root_refused(args.media_root):
        return 2
    out = Path(args.out)
    lock = take_output(out)
    if lock is None:
        return 2
    try:
        rundir = RunDir(out, record=FaithResult, required=frozenset({"case", "steps"}))
        if args.overwrite:
            rundir.reset()
        cache = ResponseCache(Path(args.cache) if args.cache else out / "cache.sqlite")
        for note in rundir.notices + cache.notices:
            print(f"warning: {note}", file=sys.stderr)
        try:
            judge = make_judge(args.judge, opts, cache=cache, config=cfg.generate)
        except (ValueError, FileNotFoundError, ImportError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            cache.discard()
            return 2
        if (why := judge.refusal(f"faith_{args.granularity}")) is not None:
            print(f"error: {why}", file=sys.stderr)
            return 2
        if judge.needs_evidence_text:
            cfg.evidence.text = True
        fingerprint = {"judge": args.judge, "options": {k: v for k, v in sorted(opts.items())}, "variant": args.variant,
                       "granularity": args.granularity, "segmentation": args.segmentation, "evidence": cfg.evidence.model_dump(),
                       "generate": cfg.generate.cache_fields()}
        rundir.check_config(fingerprint, {**fingerprint, "input": str(args.input)}, kind="faithfulness")
        pool = CallPool()
        labeller = Labeller(judge=judge, pool=pool, variant=args.variant, granularity=args.granularity,
                            max_frames=args.max_frames)
        con = console(stderr=True)
        ray_counts = ray_report = None
        if getattr(args, "run_on", "local") == "ray":
            try:
                ray_counts, ray_report = _on_ray(args, items, rundir, Path(args.cache) if args.cache else
                                                 out / "cache.sqlite", cfg, opts, con)
            except Exception as exc:  # the same exit codes as the local path (5 not writable, 3 replay miss)
                code = failure_code(exc)
                if code is None:
                    raise
                return code
        else:
            try:
                asyncio.run(_with_progress(items, labeller, cfg, args, rundir, con, judge))
            except ExceptionGroup as group:
                code = failure_code(group)
                if code is None:
                    raise
                return code
        ids = {i.id for i in items}
        rundir.compact([i.id for i in items])  # input order on disk too
        results = rundir.latest_results(want=ids, order=[i.id for i in items])
        doc = summarize_faithfulness(results, args.bootstrap, args.seed)
        doc["this_invocation"] = ray_counts if ray_counts is not None else {
            **judge.stats.model_dump(), "requests": pool.requests, "deduplicated": pool.deduplicated}
        doc["settings"] = fingerprint
        if ray_report is not None:
            from murgat.scaleout.driver import report_extra

            doc["ray"] = report_extra(ray_report)
        tmp = out / "summary.json.tmp"
        tmp.write_text(json.dumps(doc, indent=2, sort_keys=True))
        tmp.replace(out / "summary.json")
        cache.close()
        from murgat.viewer.steps import faithfulness_report

        faithfulness_report(out / "report.html", results, doc, args.media_root)
        if args.json:
            print(json.dumps(doc, indent=2, sort_keys=True))
        else:
            print_faithfulness(doc, console(), str(out))
        failed = failure_line(results, args.max_undetermined)
        if failed:
            print(failed, file=sys.stderr)
            return 1
        return 0
    finally:
        lock.release()


def _on_ray(args: argparse.Namespace, items: list[Any], rundir: Any, cache_path: Path, cfg: Any, options: dict[str, Any],
            con: Any) -> tuple[dict[str, Any], Any]:
    """``--run-on ray``: the engine's Ray path with this command's task; (this_invocation counts, report)."""
    from murgat.engine.loop import plan
    from murgat.engine.preflight import MediaPlace
    from murgat.faithfulness.runner import FaithTask
    from murgat.scaleout.driver import summed_stats
    from murgat.scaleout.tasks import TaskSpec, run_on_ray

    place = MediaPlace.of(args).resolved()
    task = FaithTask(None, cfg, args.segmentation, place)
    todo = plan(task, items, rundir, args.retry_errors).todo
    spec = TaskSpec("murgat.faithfulness.runner:ray_task", {
        "config": cfg.model_dump(mode="json"), "judge": args.judge, "options": options, "variant": args.variant,
        "granularity": args.granularity, "segmentation": args.segmentation, "max_frames": args.max_frames,
        "place": place.to_json()}, concurrency=args.item_concurrency, transcribes=cfg.evidence.text)
    report = run_on_ray(spec, task, todo, rundir, args, label="faithfulness", total=len(items), con=con,
                        cache_path=cache_path)
    requests, deduplicated, totals = summed_stats(report)
    stats = next(iter(totals.values()), None)
    return {**(stats.model_dump() if stats else {}), "requests": requests, "deduplicated": deduplicated}, report


async def _with_progress(items: list[Any], labeller: Any, cfg: Any, args: argparse.Namespace, rundir: Any, con: Any,
                         judge: Any) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from murgat.faithfulness.runner import run_faithfulness

    progress = Progress(TextColumn("[bold]faithfulness"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=con, disable=args.quiet or args.json)
    with progress:
        task = progress.add_task("items", total=len(items))
        try:
            await run_faithfulness(items, labeller, cfg, args.segmentation, rundir, media_root=args.media_root,
                                   input_path=args.input, item_concurrency=args.item_concurrency,
                                   retry_errors=args.retry_errors, allow_outside_root=args.allow_media_outside_root,
                                   on_item=lambda r: progress.advance(task))
        finally:
            await judge.aclose()


def print_faithfulness(doc: dict[str, Any], con: Any, title: str) -> None:
    from rich.table import Table

    t = Table(title=f"step faithfulness — {title}")
    t.add_column("measure")
    t.add_column("value (95% CI)")
    t.add_row("UPR (unfaithful / perception steps)", f"{_pct(doc['upr'])}  ({doc['unfaithful_steps']}/{doc['perception_steps']})")
    for m, row in doc["upr_by_modality"].items():
        t.add_row(f"  UPR {m}", f"{_pct(row)}  ({row['unfaithful_steps']}/{row['perception_steps']})")
    t.add_row("mean per-response UPR", _pct(doc["upr_per_response_mean"]))
    t.add_row("accuracy", _pct(doc["accuracy"]))
    t.add_row("responses without perception steps", str(doc["n_no_perception"]))
    t.add_row("undetermined steps", f"{doc['undetermined_steps']} {doc['undetermined_causes'] or ''}")
    con.print(t)
    x = doc["answer_x_faithfulness"]
    t2 = Table(title="answer × chain faithfulness (responses)")
    t2.add_column("")
    t2.add_column("faithful chain")
    t2.add_column("some unfaithful step")
    t2.add_row("correct answer", str(x["correct_faithful"]), str(x["correct_unfaithful"]))
    t2.add_row("wrong answer", str(x["wrong_faithful"]), str(x["wrong_unfaithful"]))
    con.print(t2)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("faithfulness", help="label reasoning steps as perception/reasoning and check perception steps "
                                            "against the media (UPR)")
    p.add_argument("input", help="murgat JSONL or the authors' JSON list (responses with reasoning chains)")
    p.add_argument("--judge", required=True, help="provider:model of the labelling judge")
    p.add_argument("-J", "--judge-option", action="append", default=[], metavar="KEY=VALUE")
    from murgat.engine import options

    options.add(p, options.Folder, only=("out", "cache", "retry_errors", "overwrite", "max_undetermined"),
                required=("out",))
    from murgat.scaleout import add_executor_options

    add_executor_options(p)
    _common(p)
    p.set_defaults(func=_cmd_faithfulness)
