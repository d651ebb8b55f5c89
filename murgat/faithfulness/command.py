"""What ``murgat faithfulness`` does, given its :class:`~murgat.faithfulness.settings.FaithfulnessSettings`:
the one implementation behind the command line and ``murgat.faithfulness(...)``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from murgat.faithfulness.settings import FaithfulnessSettings
from murgat.faithfulness.shared import _config, _pct, _select


def run_faithfulness_command(s: FaithfulnessSettings, *, echo: bool = True) -> int:
    """``murgat faithfulness``: label every step, write the folder and summary; the exit status."""
    from murgat.console import console
    from murgat.engine.folder import RunDir
    from murgat.engine.guards import exit_code_of, take_output
    from murgat.faithfulness.label import Labeller
    from murgat.faithfulness.metric import summarize_faithfulness
    from murgat.faithfulness.records import FaithResult
    from murgat.faithfulness.runner import failure_line
    from murgat.inputs import InputError, load_items
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache
    from murgat.pipeline.stages import CallPool

    try:
        items = _select(load_items(s.input, None if s.ids else s.limit), s)
        opts = parse_options(s.judge_option)
        cfg = _config(s, s.judge, opts)
    except (InputError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from murgat.engine.guards import media_root_refused

    if media_root_refused(s.media_root):
        return 2
    out = Path(s.out)
    lock = take_output(out)
    if lock is None:
        return 2
    try:
        rundir = RunDir(out, record=FaithResult, required=frozenset({"case", "steps"}))
        if s.overwrite:
            rundir.reset()
        cache = ResponseCache(s.cache_path())
        for note in rundir.notices + cache.notices:
            print(f"warning: {note}", file=sys.stderr)
        try:
            judge = make_judge(s.judge, opts, cache=cache, config=cfg.generate)
        except (ValueError, FileNotFoundError, ImportError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            cache.discard()
            return 2
        if (why := judge.refusal(f"faith_{s.granularity}")) is not None:
            print(f"error: {why}", file=sys.stderr)
            cache.discard()  # refused before any work: nothing of this run stays behind
            return 2
        if judge.needs_evidence_text:
            cfg.evidence.text = True
        fingerprint = {"judge": s.judge, "options": {k: v for k, v in sorted(opts.items())}, "variant": s.variant,
                       "granularity": s.granularity, "segmentation": s.segmentation, "evidence": cfg.evidence.model_dump(),
                       "generate": cfg.generate.cache_fields()}
        rundir.check_config(fingerprint, {**fingerprint, "input": str(s.input)}, kind="faithfulness")
        pool = CallPool()
        labeller = Labeller(judge=judge, pool=pool, variant=s.variant, granularity=s.granularity,
                            max_frames=s.max_frames)
        con = console(stderr=True)
        ray_counts = ray_report = None
        if s.run_on == "ray":
            try:
                ray_counts, ray_report = _on_ray(s, items, rundir, s.cache_path(), cfg, opts, con)
            except Exception as exc:  # the same exit codes as the local path (5 not writable, 3 replay miss)
                return exit_code_of(exc)
        else:
            try:
                asyncio.run(_with_progress(items, labeller, cfg, s, rundir, judge))
            except ExceptionGroup as group:
                return exit_code_of(group)
        ids = {i.id for i in items}
        rundir.compact([i.id for i in items])  # input order on disk too
        results = rundir.latest_results(want=ids, order=[i.id for i in items])
        doc = summarize_faithfulness(results, s.bootstrap, s.seed)
        doc["this_invocation"] = ray_counts if ray_counts is not None else {
            **judge.stats.model_dump(), "requests": pool.requests, "deduplicated": pool.deduplicated}
        doc["settings"] = fingerprint
        if ray_report is not None:
            from murgat.scaleout.driver import report_extra

            doc["ray"] = report_extra(ray_report)
        rundir.write_summary(doc)  # atomic; a failed write is exit 5 (murgat.cli.main), the records kept
        cache.close()
        from murgat.viewer.steps import faithfulness_report

        faithfulness_report(out / "report.html", results, doc, s.media_root)
        if echo and s.print_json:
            print(json.dumps(doc, indent=2, sort_keys=True))
        elif echo:
            print_faithfulness(doc, console(), str(out))
        failed = failure_line(results, s.max_undetermined)
        if failed:
            print(failed, file=sys.stderr)
            return 1
        return 0
    finally:
        lock.release()


def _on_ray(s: FaithfulnessSettings, items: list[Any], rundir: Any, cache_path: Path, cfg: Any, options: dict[str, Any],
            con: Any) -> tuple[dict[str, Any], Any]:
    """``--run-on ray``: the engine's Ray path with this command's task; (this_invocation counts, report)."""
    from murgat.engine.loop import plan
    from murgat.engine.preflight import MediaPlace
    from murgat.faithfulness.runner import FaithTask
    from murgat.scaleout.driver import summed_stats
    from murgat.scaleout.tasks import TaskSpec, run_on_ray

    place = MediaPlace.of(s).resolved()
    task = FaithTask(None, cfg, s.segmentation, place)
    todo = plan(task, items, rundir, s.retry_errors).todo
    spec = TaskSpec("murgat.faithfulness.runner:ray_task", {
        "config": cfg.model_dump(mode="json"), "judge": s.judge, "options": options, "variant": s.variant,
        "granularity": s.granularity, "segmentation": s.segmentation, "max_frames": s.max_frames,
        "place": place.to_json()}, concurrency=s.item_concurrency, transcribes=cfg.evidence.text)
    report = run_on_ray(spec, task, todo, rundir, s, label="faithfulness", total=len(items), con=con,
                        cache_path=cache_path)
    requests, deduplicated, totals = summed_stats(report)
    stats = next(iter(totals.values()), None)
    return {**(stats.model_dump() if stats else {}), "requests": requests, "deduplicated": deduplicated}, report


async def _with_progress(items: list[Any], labeller: Any, cfg: Any, s: FaithfulnessSettings, rundir: Any,
                         judge: Any) -> None:
    from murgat.engine.progress import item_progress
    from murgat.faithfulness.runner import run_faithfulness

    progress = item_progress("faithfulness", disable=s.quiet or s.print_json)
    with progress:
        task = progress.add_task("items", total=len(items))
        try:
            await run_faithfulness(items, labeller, cfg, s.segmentation, rundir, media_root=s.media_root,
                                   input_path=s.input, item_concurrency=s.item_concurrency,
                                   retry_errors=s.retry_errors, allow_outside_root=s.allow_media_outside_root,
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


