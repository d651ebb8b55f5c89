"""``murgat score`` and ``murgat summarize``."""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from murgat import __version__
from murgat.engine.outcome import failure_line


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


def _build_config(args: argparse.Namespace) -> Any:
    import prompts
    from media.evidence import EvidenceConfig
    from murgat.judges import parse_options
    from murgat.pipeline.config import JudgeSpec, ScoreConfig

    opts = parse_options(args.judge_option)

    def spec(s: str | None) -> JudgeSpec:
        return JudgeSpec(spec=s or args.judge, options=opts)

    from murgat.engine.options import Requests, build

    gen = build(Requests, args).generate_config()
    ev = EvidenceConfig(pad_s=args.pad, fps=args.fps, max_frames=args.max_frames, visual_as=args.visual_as,
                        audio_point_pad_s=args.audio_point_pad, end_tolerance_s=args.end_tolerance)
    from murgat.boxes import BoxConvention, parse_frame_size

    frame = getattr(args, "box_frame_size", None)
    boxes = BoxConvention(units=getattr(args, "box_units", "norm"), order=getattr(args, "box_order", "xyxy"),
                          frame_size=parse_frame_size(frame) if frame else None)
    used = [f"verify_{args.verify_variant}", "decompose_sentence", "decompose_response", "decompose_single_pass",
            f"entail_{args.entail_variant}", f"entail_{args.entail_variant}_question", "decontextualize"]
    return ScoreConfig(
        judge_verify=spec(args.judge_verify), judge_decompose=spec(args.judge_decompose), judge_entail=spec(args.judge_entail),
        judge_decontextualize=spec(args.judge_decontextualize) if (args.decontextualize or args.judge_decontextualize) else None,
        verify_variant=args.verify_variant, decompose_variant=args.decompose_variant, entail_variant=args.entail_variant,
        precision_mode=args.precision_mode, empty_policy=args.empty_policy, evidence=ev, evidence_text=args.evidence_text,
        asr_model=args.asr_model, ocr_fps=args.ocr_fps, sound_events=getattr(args, "sound_events", True),
        end_tolerance_s=args.end_tolerance, generate=gen, boxes=boxes,
        bootstrap_resamples=args.bootstrap, seed=args.seed, cluster_by_video=args.cluster_by_video,
        attributed_threshold=args.attributed_threshold, decompose_context_sentences=args.decompose_context,
        decompose_context_chars=args.decompose_context_chars, max_response_chars=args.max_response_chars,
        **{k: v for k in ("max_citations_per_fact", "max_evidence_s") if (v := getattr(args, k, None)) is not None},
        prompt_hashes={n: prompts.template_hash(n) for n in used}, versions=_versions(),
    )


def _earlier_failures(rundir: Any, ids: set[str]) -> tuple[int, int]:
    """(items kept with an error record, items kept undetermined by judge errors) from earlier runs."""
    from murgat.pipeline.rundir import needs_retry

    kept = [r for r in rundir.latest_results(slim=True) if r.id in ids and needs_retry(r)]
    return sum(1 for r in kept if r.error), sum(1 for r in kept if not r.error)


def _cmd_score(args: argparse.Namespace) -> int:
    from murgat.inputs import InputError, load_items
    from murgat.runlock import RunLock, RunLocked

    con = None
    if not (args.quiet or args.json):  # rich loads only when something is drawn (~30 ms before the first request)
        from murgat.console import console

        con = console(stderr=True)
    try:
        # with --limit and no --ids only the first N items are read
        items = load_items(args.input, None if args.ids else args.limit)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.ids:
        wanted = [i.strip() for i in args.ids.split(",") if i.strip()]
        unknown = sorted(set(wanted) - {i.id for i in items})
        if unknown:
            print(f"error: --ids not in {args.input}: {', '.join(unknown)}", file=sys.stderr)
            return 2
    from murgat.cliutil import select_items

    try:
        items = select_items(items, args.ids, args.limit)  # the one selection rule (and "nothing selected")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        cfg = _build_config(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from murgat.pipeline.rundir import NotWritable, check_writable_dir

    if args.record and getattr(args, "run_on", "local") == "ray":
        # the exchanges happen in Ray workers, which would each need the cassette file: refused, not silently empty
        print("error: --record works with --run-on local only (record the exchanges locally, then replay them on Ray)",
              file=sys.stderr)
        return 2

    from murgat.cliutil import media_root_refused

    if media_root_refused(args.media_root):
        return 2

    out = Path(args.out) / ".dry-run" if args.dry_run else Path(args.out)
    try:
        check_writable_dir(Path(args.out), "--out")
        if args.cache:
            check_writable_dir(Path(args.cache).parent, "--cache")
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
        return _score_locked(args, items, cfg, out, con)
    finally:
        lock.release()


def _score_locked(args: argparse.Namespace, items: list[Any], cfg: Any, out: Path, con: Any) -> int:
    import sqlite3

    from murgat.cliutil import failure_code
    from murgat.judges import make_judge
    from murgat.judges.cache import ResponseCache
    from murgat.pipeline.rundir import RunDir
    from murgat.pipeline.runner import summarize_run
    from murgat.pipeline.stages import Judges

    cache_path = Path(args.cache) if args.cache else Path(args.out) / "cache.sqlite"
    rundir = RunDir(out)
    if args.overwrite and not args.dry_run:
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
            j = make_judge(js.spec, js.options, cache=cache, config=cfg.generate, dry_run=args.dry_run,
                           record=args.record if args.record else None)
            built[key] = DryRunJudge(j) if args.dry_run else j
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
    if not args.dry_run:  # a folder of other settings: RunConfigMismatch, exit 2 (murgat.cli.main)
        rundir.check_config(cfg.scoring_fingerprint(), {
            **cfg.model_dump(), "input": str(Path(args.input).resolve()),
            "media_root": str(Path(args.media_root).resolve()) if args.media_root else None}, force=args.overwrite,
            kind="score")
    ids = {i.id for i in items}
    from murgat.engine.loop import plan
    from murgat.engine.preflight import MediaPlace
    from murgat.pipeline.runner import ScoreTask

    place = MediaPlace.of(args)
    todo_plan = plan(ScoreTask(cfg, judges, None, place), items, rundir, args.retry_errors)  # type: ignore[arg-type]
    if todo_plan.n_edited:
        shown = ", ".join(todo_plan.edited_ids[:5]) + (" …" if todo_plan.n_edited > 5 else "")
        print(f"note: {todo_plan.n_edited} item(s) changed since they were scored (response, question, options or "
              f"media): scoring them again ({shown})", file=sys.stderr)
    n_err_kept, n_undet_kept = _earlier_failures(rundir, ids)
    if (n_err_kept or n_undet_kept) and not args.retry_errors:
        print(f"note: keeping {n_err_kept} earlier item(s) with errors and {n_undet_kept} left undetermined by judge "
              "errors; rerun with --retry-errors to score them again", file=sys.stderr)
    ray_report = None
    if getattr(args, "run_on", "local") == "ray" and not args.dry_run:
        from murgat.pipeline.ray import score_on_ray

        try:
            pool, stats, ray_report = score_on_ray(items, cfg, rundir, cache_path, args, con, todo_plan.todo)
        except Exception as exc:  # the same exit codes as the local path (5 not writable, 3 replay miss)
            code = failure_code(exc, f" ({rundir.results_path})")
            if code is None:
                raise
            return code
    else:
        try:
            _fresh, pool = asyncio.run(_run_with_progress(items, cfg, judges, rundir, args, con, list(built.values()),
                                                          todo_plan.todo))
        except ExceptionGroup as group:
            code = failure_code(group, f" ({rundir.results_path})")
            if code is None:
                raise
            return code
    if args.dry_run:
        total_calls = sum(j.calls for j in built.values())
        cost = sum(j.cost() for j in built.values())
        doc = {"items": len(items), "judge_calls_upper_bound": total_calls,
               "calls_per_item": total_calls / max(1, len(items)),
               "est_input_tokens": sum(j.est_tokens for j in built.values()), "est_cost_usd": cost,
               "cache_hits": sum(j.inner.stats.cache_hits for j in built.values())}
        shutil.rmtree(out, ignore_errors=True)
        cache.discard()  # a dry run leaves no cache it made (an existing one is kept, as read)
        print(json.dumps(doc, indent=2))
        return 0
    if ray_report is None:
        stats = [j.stats for j in built.values()]
    extra = {
        "this_invocation": {
            "requests": pool.requests, "deduplicated": pool.deduplicated,
            "sent": sum(s.calls for s in stats), "cache_hits": sum(s.cache_hits for s in stats),
            "retries": sum(s.retries for s in stats), "errors": sum(s.errors for s in stats),
            "input_tokens": sum(s.input_tokens for s in stats), "output_tokens": sum(s.output_tokens for s in stats),
            "cost_usd": sum(s.cost_usd for s in stats),
            "cache_write_errors": cache.write_errors, "cache_read_errors": cache.read_errors,
        },
        "judges": sorted({j.name for j in built.values()}),
        "judge_notes": "; ".join(notes) or None,
    }
    if ray_report is not None:
        from murgat.scaleout.driver import report_extra

        extra["ray"] = report_extra(ray_report)
    if getattr(args, "gold", None):
        from murgat.grounding.run import ground_score_run

        extra.update(ground_score_run(args, rundir.path))
    order = [i.id for i in items]
    rundir.compact(order)  # input order on disk too: two runs of one input give the same file
    results = rundir.latest_results(slim=True, want=ids, order=order)  # summaries need no per-sentence detail
    summary = summarize_run(rundir, cfg, ids, extra, results)
    from murgat.viewer.cli import build_report

    build_report([rundir.path], rundir.path / "report.html", copy_media=args.copy_media, with_evidence=args.save_evidence,
                 allow_outside_root=args.allow_media_outside_root)
    if args.json:
        print(summary.model_dump_json(indent=2))
    else:
        from murgat.console import console
        from murgat.pipeline.report import print_summary

        print_summary(summary, results[:50],
                      f"MURGAT-S ({cfg.precision_mode} precision) — {rundir.path}", console())
    cache.close()
    failed = failure_line(results, args.max_undetermined)
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


class NullProgress:
    """What a disabled progress bar does (nothing), without importing rich."""

    def __enter__(self) -> NullProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, *args: Any, **kw: Any) -> int:
        return 0

    def update(self, *args: Any, **kw: Any) -> None:
        return None

    def advance(self, *args: Any, **kw: Any) -> None:
        return None


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


async def _run_with_progress(items, cfg, judges, rundir, args, con, built, todo):  # type: ignore[no-untyped-def]
    from murgat.pipeline.runner import run_items

    def stats_text() -> str:
        st = [getattr(j, "stats", None) or j.inner.stats for j in built]
        return (f"calls {sum(s.calls for s in st)} · hits {sum(s.cache_hits for s in st)} · retries "
                f"{sum(s.retries for s in st)} · errors {sum(s.errors for s in st)} · tokens "
                f"{sum(s.input_tokens + s.output_tokens for s in st)} · ${sum(s.cost_usd for s in st):.4f}")

    progress = score_progress(con, disable=args.quiet or args.json)
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
                items, cfg, judges, rundir, media_root=args.media_root, input_path=args.input,
                item_concurrency=args.item_concurrency or max(4, cfg.generate.concurrency),
                retry_errors=args.retry_errors, allow_outside_root=args.allow_media_outside_root,
                on_item=lambda rr: progress.advance(task), keep_results=False, todo=todo,
            )
        finally:
            tick.cancel()
            progress.update(task, stats=stats_text())
            for j in built:
                await j.aclose()
    return result


def _cmd_summarize(args: argparse.Namespace) -> int:
    from murgat.grounding.compare import is_ground_run, summarize_ground_runs

    if args.runs and is_ground_run(args.runs[0]):
        return summarize_ground_runs(args)
    from murgat.console import console
    from murgat.engine.folder import read_kind
    from murgat.pipeline.report import compare, comparison_table, summary_table
    from murgat.pipeline.rundir import RunDir

    runs = []
    kinds = {str(p): read_kind(p) for p in args.runs}
    others = {p: k for p, k in kinds.items() if k not in (None, "score")}
    if others:
        if len(args.runs) == 1:  # one folder of another kind: its summary as it is
            where = Path(args.runs[0]) / "summary.json"
            if not where.exists():
                print(f"error: {args.runs[0]} is a '{others[str(args.runs[0])]}' folder without summary.json"
                      + (" (summarize the program run above it)" if others[str(args.runs[0])] == "program-variant" else ""),
                      file=sys.stderr)
                return 2
            doc = json.loads(where.read_text(encoding="utf-8"))
            print(json.dumps({"kind": others[str(args.runs[0])], "summary": doc}, indent=2, ensure_ascii=False))
            return 0
        print("error: murgat summarize compares score runs; " + ", ".join(f"{p} is a '{k}' run" for p, k in others.items()),
              file=sys.stderr)
        return 2
    for path in args.runs:
        if not (Path(path) / "summary.json").exists():
            print(f"error: {path} has no summary.json (run murgat score first)", file=sys.stderr)
            return 2
        rd = RunDir(path, repair=False)
        for note in rd.notices:
            print(f"warning: {note}", file=sys.stderr)
        runs.append((str(path), rd.latest_results(), rd.summary()))
    doc = compare(runs, n_resamples=args.bootstrap, seed=args.seed)
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    con = console()
    if len(runs) == 1:
        con.print(summary_table(runs[0][2], str(runs[0][0])))
    else:
        con.print(comparison_table(doc))
        for d in doc["differences"]:
            if d.get("note"):
                con.print(d["note"], soft_wrap=True)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("score", help="score responses with MURGAT-S")
    p.add_argument("input", help="murgat JSONL or the authors' JSON list")
    from murgat.engine import options

    options.add(p, options.Place)
    p.add_argument("--judge", required=True, help="provider[:model] for every stage, e.g. gemini:gemini-2.5-flash, embedded")
    p.add_argument("--judge-verify", default=None)
    p.add_argument("--judge-decompose", default=None)
    p.add_argument("--judge-entail", default=None)
    p.add_argument("--judge-decontextualize", default=None, help="enables decontextualization with this judge")
    p.add_argument("--decontextualize", action="store_true", help="decontextualize with --judge before splitting")
    p.add_argument("-J", "--judge-option", action="append", default=[], metavar="KEY=VALUE")
    options.add(p, options.Folder, only=("out", "cache"), required=("out",))
    p.add_argument("--verify-variant", choices=["simple", "cot", "json"], default="simple")
    p.add_argument("--decompose-variant", choices=["sentence", "response", "single-pass"], default="sentence")
    p.add_argument("--entail-variant", choices=["simple", "json"], default="simple")
    p.add_argument("--precision-mode", choices=["alce", "strict", "individual"], default="alce")
    p.add_argument("--empty-policy", choices=["zero", "exclude"], default="zero")
    p.add_argument("--pad", type=float, default=0.0, help="pad_s: widen every evidence segment")
    p.add_argument("--fps", type=float, default=1.0)
    p.add_argument("--max-frames", type=int, default=8)
    p.add_argument("--visual-as", choices=["frames", "clip"], default="frames")
    p.add_argument("--audio-point-pad", type=float, default=1.0)
    p.add_argument("--end-tolerance", type=float, default=1.0)
    p.add_argument("--box-units", choices=["norm", "1000", "px"], default="norm",
                   help="what a bare 'box' in a citation means: 0-1 fractions, 0-1000, or pixels")
    p.add_argument("--box-order", choices=["xyxy", "yxyx"], default="xyxy",
                   help="number order of boxes (Gemini writes y first: yxyx)")
    p.add_argument("--box-frame-size", default=None, metavar="WxH",
                   help="frame the model saw when pixel boxes refer to a resized frame (default: the native frame)")
    p.add_argument("--evidence-text", action="store_true", help="also send ASR/OCR text of each segment")
    p.add_argument("--asr-model", default=None)
    p.add_argument("--ocr-fps", type=float, default=1.0)
    p.add_argument("--no-sound-events", dest="sound_events", action="store_false",
                   help="with evidence text, do not tag sound events (music, engines, silence…) in cited audio")
    options.add(p, options.Requests)  # the judge role's defaults (yes/no answers)
    # None: as many items as judge requests in flight (at least 4)
    options.add(p, options.Folder, only=("item_concurrency",), defaults={"item_concurrency": None})
    p.add_argument("--bootstrap", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cluster-by-video", action="store_true")
    p.add_argument("--attributed-threshold", type=float, default=0.5)
    p.add_argument("--gold", default=None,
                   help="gold evidence JSONL (murgat gold import): add the grounding figures of 'murgat ground' to the summary")
    options.add(p, options.Selection)
    p.add_argument("--dry-run", action="store_true", help="count calls and estimate cost; nothing is sent")
    p.add_argument("--record", default=None, help="append every judge exchange to this JSONL cassette")
    options.add(p, options.Folder, only=("retry_errors",))
    from murgat.scaleout import add_executor_options

    add_executor_options(p)
    options.add(p, options.Folder, only=("overwrite", "max_undetermined"))
    p.add_argument("--max-response-chars", type=int, default=200_000,
                   help="longer responses get an error record instead of being scored")
    # defaults live in murgat.pipeline.config (not imported to build the parser)
    p.add_argument("--max-citations-per-fact", type=int, default=None,
                   help="a fact citing more segments is undetermined, not judged: bounds calls per fact (default 16)")
    p.add_argument("--max-evidence-s", type=float, default=None,
                   help="most seconds of cited media one entailment request carries; longer evidence leaves the "
                   "fact undetermined (default 900)")
    p.add_argument("--decompose-context", type=int, default=3,
                   help="earlier sentences shown to the decomposer (bounded: cost stays linear in response length)")
    p.add_argument("--decompose-context-chars", type=int, default=1500, help="character cap on that context")
    options.add(p, options.Folder, only=("print_json",))
    p.add_argument("--copy-media", action="store_true", help="copy media next to report.html (portable run folder)")
    p.add_argument("--save-evidence", action="store_true", help="save cited frames/audio for report.html")
    options.add(p, options.Folder, only=("quiet",))
    p.set_defaults(func=_cmd_score)

    p = sub.add_parser("summarize", help="compare runs side by side with paired bootstrap CIs")
    p.add_argument("runs", nargs="+")
    p.add_argument("--json", action="store_true")
    p.add_argument("--bootstrap", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_summarize)
