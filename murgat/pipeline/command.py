"""What ``murgat score`` does, given its :class:`~murgat.pipeline.settings.ScoreSettings`: the one
implementation behind the command line and ``murgat.score(...)``.

:func:`run_score` reads the input, builds the judges and the scoring configuration, runs the
items through the engine's item loop (or on Ray), compacts the run folder into input order,
writes ``summary.json`` and ``report.html`` and, when ``echo`` is on, prints the summary table
(or the JSON document). It returns the exit status: 0 scored, 1 scored with failed or
undetermined items beyond ``max_undetermined``, 2 bad input or settings, 3 a replay miss, 5 the
run folder could not be written.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from murgat import __version__
from murgat.engine.outcome import failure_line
from murgat.engine.progress import NullProgress
from murgat.pipeline.settings import ScoreSettings


class DryRunJudge:
    """Counts the calls a run would make and prices them, answering synthetically.

    Answers are chosen for an upper bound: every sentence verifiable, decomposition by the
    rules, joint entailment "yes" and single-citation entailment "no" (so ``alce`` asks
    every leave-one-out question).
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.needs_evidence_text = inner.needs_evidence_text
        self.calls = 0
        self.est_tokens = 0

    @property
    def name(self) -> str:
        return self.inner.name

    def key(self, req: Any) -> str:
        return self.inner.key(req)

    async def generate(self, req: Any, materialize: Any = None) -> Any:
        from murgat.judges.base import estimate_tokens
        from murgat.judges.types import JudgeOutput
        from murgat.rules import rule_decompose

        if self.inner.cache is not None and self.inner.cache.get(self.inner.key(req)) is not None:
            self.inner.stats.cache_hits += 1
        else:
            self.calls += 1
            if materialize is not None:
                req = await materialize()
            self.est_tokens += estimate_tokens(req)
        if req.task == "decompose":
            text = json.dumps({"facts": rule_decompose(req.inputs.get("sentence", ""))})
        elif req.task == "entail":
            text = "yes" if len(req.inputs.get("evidence", [])) > 1 else "no"
        elif req.task == "decontextualize":
            text = req.inputs.get("text", "")
        else:
            text = "yes"
        return JudgeOutput(text=text, model=self.model, provider=self.provider)

    def cost(self) -> float:
        from murgat.judges.pricing import price_for

        pin, pout = price_for(self.provider, self.model, self.inner.options)
        return (self.est_tokens * pin + self.calls * 30 * pout) / 1e6

    async def aclose(self) -> None:
        await self.inner.aclose()


def _versions() -> dict[str, Any]:
    from importlib.metadata import version

    import pydantic

    # numpy's version from its metadata: importing numpy here would put ~0.1 s before the first request
    return {"murgat": __version__, "numpy": version("numpy"), "pydantic": pydantic.__version__,
            "python": sys.version.split()[0]}


def build_config(s: ScoreSettings) -> Any:
    """The scoring configuration (and so the fingerprint) these settings make."""
    import prompts
    from media.evidence import EvidenceConfig
    from murgat.judges import parse_options
    from murgat.pipeline.config import JudgeSpec, ScoreConfig

    opts = parse_options(s.judge_option)

    def spec(name: str | None) -> JudgeSpec:
        return JudgeSpec(spec=name or s.judge, options=opts)

    gen = s.generate_config()
    ev = EvidenceConfig(pad_s=s.pad, fps=s.fps, max_frames=s.max_frames, visual_as=s.visual_as,
                        audio_point_pad_s=s.audio_point_pad, end_tolerance_s=s.end_tolerance)
    from murgat.boxes import BoxConvention, parse_frame_size

    frame = s.box_frame_size
    boxes = BoxConvention(units=s.box_units, order=s.box_order,
                          frame_size=parse_frame_size(frame) if frame else None)
    used = [f"verify_{s.verify_variant}", "decompose_sentence", "decompose_response", "decompose_single_pass",
            f"entail_{s.entail_variant}", f"entail_{s.entail_variant}_question", "decontextualize"]
    return ScoreConfig(
        judge_verify=spec(s.judge_verify), judge_decompose=spec(s.judge_decompose), judge_entail=spec(s.judge_entail),
        judge_decontextualize=spec(s.judge_decontextualize) if (s.decontextualize or s.judge_decontextualize) else None,
        verify_variant=s.verify_variant, decompose_variant=s.decompose_variant, entail_variant=s.entail_variant,
        precision_mode=s.precision_mode, empty_policy=s.empty_policy, evidence=ev, evidence_text=s.evidence_text,
        asr_model=s.asr_model, ocr_fps=s.ocr_fps, sound_events=s.sound_events,
        end_tolerance_s=s.end_tolerance, generate=gen, boxes=boxes,
        bootstrap_resamples=s.bootstrap, seed=s.seed, cluster_by_video=s.cluster_by_video,
        attributed_threshold=s.attributed_threshold, decompose_context_sentences=s.decompose_context,
        decompose_context_chars=s.decompose_context_chars, max_response_chars=s.max_response_chars,
        **{k: v for k in ("max_citations_per_fact", "max_evidence_s") if (v := getattr(s, k, None)) is not None},
        prompt_hashes={n: prompts.template_hash(n) for n in used}, versions=_versions(),
    )


def _earlier_failures(rundir: Any, ids: set[str]) -> tuple[int, int]:
    """(items kept with an error record, items kept undetermined by judge errors) from earlier runs."""
    from murgat.engine.folder import needs_retry

    kept = [r for r in rundir.latest_results(slim=True) if r.id in ids and needs_retry(r)]
    return sum(1 for r in kept if r.error), sum(1 for r in kept if not r.error)


def run_score(s: ScoreSettings, *, echo: bool = True, sink: dict[str, Any] | None = None) -> int:
    """Score ``s.input`` into ``s.out`` (see the module docstring); ``sink`` receives the dry run's
    estimate as ``sink["document"]`` (a dry run leaves no folder to read it from)."""
    from murgat.inputs import InputError, load_items
    from murgat.runlock import RunLock, RunLocked

    con = None
    if not (s.quiet or s.print_json):  # rich loads only when something is drawn (~30 ms before the first request)
        from murgat.console import console

        con = console(stderr=True)
    try:
        # with --limit and no --ids only the first N items are read
        items = load_items(s.input, None if s.ids else s.limit)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if s.ids:
        wanted = [i.strip() for i in s.ids.split(",") if i.strip()]
        unknown = sorted(set(wanted) - {i.id for i in items})
        if unknown:
            print(f"error: --ids not in {s.input}: {', '.join(unknown)}", file=sys.stderr)
            return 2
    from murgat.engine.guards import select_items

    try:
        items = select_items(items, s.ids, s.limit)  # the one selection rule (and "nothing selected")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        cfg = build_config(s)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from murgat.engine.folder import NotWritable, check_writable_dir

    if s.record and s.run_on == "ray":
        # the exchanges happen in Ray workers, which would each need the cassette file: refused, not silently empty
        print("error: --record works with --run-on local only (record the exchanges locally, then replay them on Ray)",
              file=sys.stderr)
        return 2

    from murgat.engine.guards import media_root_refused

    if media_root_refused(s.media_root):
        return 2

    out = Path(s.out) / ".dry-run" if s.dry_run else Path(s.out)
    try:
        check_writable_dir(Path(s.out), "--out")
        if s.cache:
            check_writable_dir(Path(s.cache).parent, "--cache")
    except NotWritable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    lock = RunLock(out)
    try:
        lock.acquire()
    except RunLocked as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        return _score_locked(s, items, cfg, out, con, echo, sink)
    finally:
        lock.release()


def _score_locked(s: ScoreSettings, items: list[Any], cfg: Any, out: Path, con: Any, echo: bool,
                  sink: dict[str, Any] | None) -> int:
    import sqlite3

    from murgat.engine.folder import RunDir
    from murgat.engine.guards import exit_code_of
    from murgat.judges import make_judge
    from murgat.judges.cache import ResponseCache
    from murgat.pipeline.runner import summarize_run
    from murgat.pipeline.stages import Judges

    cache_path = s.cache_path()
    rundir = RunDir(out)
    if s.overwrite and not s.dry_run:
        rundir.reset()
    try:
        cache = ResponseCache(cache_path)
    except sqlite3.Error as exc:
        print(f"error: cannot open the response cache {cache_path}: {exc}", file=sys.stderr)
        return 2
    for note in rundir.notices + cache.notices:
        print(f"warning: {note}", file=sys.stderr)
    built: dict[str, Any] = {}

    def judge_for(js: Any) -> Any:
        key = js.spec + json.dumps(js.options, sort_keys=True)
        if key not in built:
            j = make_judge(js.spec, js.options, cache=cache, config=cfg.generate, dry_run=s.dry_run,
                           record=s.record if s.record else None)
            built[key] = DryRunJudge(j) if s.dry_run else j
        return built[key]

    try:
        judges = Judges(verify=judge_for(cfg.judge_verify), decompose=judge_for(cfg.judge_decompose),
                        entail=judge_for(cfg.judge_entail),
                        decontextualize=judge_for(cfg.judge_decontextualize) if cfg.judge_decontextualize else None)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        cache.discard()  # a bad --judge leaves no cache.sqlite(-wal/-shm) behind
        return 2
    if judges.entail.needs_evidence_text or cfg.evidence_text:
        cfg.evidence.text = True
        from media.provenance import text_channels

        cfg.versions["text_channels"] = text_channels(cfg.asr_model, cfg.sound_events)
    notes = []
    if any(j.provider == "embedded" for j in built.values()):
        notes.append("judge 'embedded' is rule-based and reads only ASR/OCR text: not a research-grade judge; "
                     "'unknown' answers are abstentions")
    if not s.dry_run:  # a folder of other settings: RunConfigMismatch, exit 2 (murgat.cli.main)
        rundir.check_config(cfg.scoring_fingerprint(), {
            **cfg.model_dump(), "input": str(Path(s.input).resolve()),
            "media_root": str(Path(s.media_root).resolve()) if s.media_root else None}, force=s.overwrite,
            kind="score")
    ids = {i.id for i in items}
    from murgat.engine.loop import plan
    from murgat.engine.preflight import MediaPlace
    from murgat.pipeline.runner import ScoreTask

    place = MediaPlace.of(s)
    todo_plan = plan(ScoreTask(cfg, judges, None, place), items, rundir, s.retry_errors)  # type: ignore[arg-type]
    n_err_kept, n_undet_kept = _earlier_failures(rundir, ids)
    if (n_err_kept or n_undet_kept) and not s.retry_errors:
        print(f"note: keeping {n_err_kept} earlier item(s) with errors and {n_undet_kept} left undetermined by judge "
              "errors; rerun with --retry-errors to score them again", file=sys.stderr)
    ray_report = None
    if s.run_on == "ray" and not s.dry_run:
        from murgat.pipeline.ray import score_on_ray

        try:
            pool, stats, ray_report = score_on_ray(items, cfg, rundir, cache_path, s, con, todo_plan.todo)
        except Exception as exc:  # the same exit codes as the local path (5 not writable, 3 replay miss)
            return exit_code_of(exc, f" ({rundir.results_path})")
    else:
        try:
            _fresh, pool = asyncio.run(_run_with_progress(items, cfg, judges, rundir, s, con, list(built.values()),
                                                          todo_plan.todo))
        except ExceptionGroup as group:
            return exit_code_of(group, f" ({rundir.results_path})")
    if s.dry_run:
        total_calls = sum(j.calls for j in built.values())
        cost = sum(j.cost() for j in built.values())
        doc = {"items": len(items), "judge_calls_upper_bound": total_calls,
               "calls_per_item": total_calls / max(1, len(items)),
               "est_input_tokens": sum(j.est_tokens for j in built.values()), "est_cost_usd": cost,
               "cache_hits": sum(j.inner.stats.cache_hits for j in built.values())}
        shutil.rmtree(out, ignore_errors=True)
        cache.discard()  # a dry run leaves no cache it made (an existing one is kept, as read)
        if sink is not None:
            sink["document"] = doc
        if echo:
            print(json.dumps(doc, indent=2))
        return 0
    if ray_report is None:
        stats = [j.stats for j in built.values()]
    extra = {
        "this_invocation": {
            "requests": pool.requests, "deduplicated": pool.deduplicated,
            "sent": sum(st.calls for st in stats), "cache_hits": sum(st.cache_hits for st in stats),
            "retries": sum(st.retries for st in stats), "errors": sum(st.errors for st in stats),
            "input_tokens": sum(st.input_tokens for st in stats), "output_tokens": sum(st.output_tokens for st in stats),
            "cost_usd": sum(st.cost_usd for st in stats),
            "cache_write_errors": cache.write_errors, "cache_read_errors": cache.read_errors,
        },
        "judges": sorted({j.name for j in built.values()}),
        "judge_notes": "; ".join(notes) or None,
    }
    if ray_report is not None:
        from murgat.scaleout.driver import report_extra

        extra["ray"] = report_extra(ray_report)
    if s.gold:
        from murgat.grounding.run import ground_score_run

        extra.update(ground_score_run(s, rundir.path))
    order = [i.id for i in items]
    rundir.compact(order)  # input order on disk too: two runs of one input give the same file
    results = rundir.latest_results(slim=True, want=ids, order=order)  # summaries need no per-sentence detail
    summary = summarize_run(rundir, cfg, ids, extra, results)
    from murgat.viewer.report import build_report

    build_report([rundir.path], rundir.path / "report.html", copy_media=s.copy_media, with_evidence=s.save_evidence,
                 allow_outside_root=s.allow_media_outside_root)
    if echo and s.print_json:
        print(summary.model_dump_json(indent=2))
    elif echo:
        from murgat.console import console
        from murgat.pipeline.report import print_summary

        print_summary(summary, results[:50],
                      f"MURGAT-S ({cfg.precision_mode} precision) — {rundir.path}", console())
    cache.close()
    failed = failure_line(results, s.max_undetermined)
    from murgat.engine.preflight import missing_hint

    hint = missing_hint([r.error for r in results], place)
    if hint:
        print(hint, file=sys.stderr)
    if ray_report is not None and ray_report.lost:
        failed = (failed + "; " if failed else "") + (f"{len(ray_report.lost)} item(s) not scored: their Ray tasks "
                                                      "failed on every attempt (rerun to resume)")
    if failed:
        print(failed, file=sys.stderr)
        return 1
    return 0


def score_progress(con: Any, disable: bool = False) -> Any:
    """The progress bar: counts and elapsed time first, so they stay visible at 80 columns; the
    call statistics come last and are cut (with …) when the terminal is narrow."""
    if disable:
        return NullProgress()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Column

    fixed = Column(no_wrap=True)
    return Progress(TextColumn("[bold]score", table_column=fixed),
                    MofNCompleteColumn(table_column=Column(no_wrap=True, min_width=9)),
                    TimeElapsedColumn(table_column=Column(no_wrap=True, min_width=7)), BarColumn(bar_width=12),
                    TextColumn("{task.fields[stats]}", table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1)),
                    console=con, disable=disable, expand=True)


async def _run_with_progress(items: list[Any], cfg: Any, judges: Any, rundir: Any, s: ScoreSettings, con: Any,
                             built: list[Any], todo: list[Any]) -> Any:
    """The items through the engine's loop with the progress bar; (records, call pool) of :func:`run_items`."""
    from murgat.pipeline.runner import run_items

    def stats_text() -> str:
        st = [getattr(j, "stats", None) or j.inner.stats for j in built]
        return (f"calls {sum(x.calls for x in st)} · hits {sum(x.cache_hits for x in st)} · retries "
                f"{sum(x.retries for x in st)} · errors {sum(x.errors for x in st)} · tokens "
                f"{sum(x.input_tokens + x.output_tokens for x in st)} · ${sum(x.cost_usd for x in st):.4f}")

    progress = score_progress(con, disable=s.quiet or s.print_json)
    done_before = len(items) - len(todo)
    with progress:
        task = progress.add_task("items", total=len(items), completed=done_before, stats=stats_text())

        async def ticker() -> None:
            while True:
                progress.update(task, stats=stats_text())
                await asyncio.sleep(0.5)

        tick = asyncio.create_task(ticker())
        try:
            result = await run_items(
                items, cfg, judges, rundir, media_root=s.media_root, input_path=s.input,
                item_concurrency=s.item_concurrency or max(4, cfg.generate.concurrency),
                retry_errors=s.retry_errors, allow_outside_root=s.allow_media_outside_root,
                on_item=lambda rr: progress.advance(task), keep_results=False, todo=todo,
            )
        finally:
            tick.cancel()
            progress.update(task, stats=stats_text())
            for j in built:
                await j.aclose()
    return result


