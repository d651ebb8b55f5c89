"""``murgat program``: plan-then-execute answers for a dataset, per variant, optionally scored.

Output folder (a run folder of kind ``program``: one process at a time, resumable like ``score``)::

    OUT/config.json                 kind and settings; a rerun with different ones is refused
    OUT/cache.sqlite                planner/executor/checker answers (shared by variants)
    OUT/<variant>/results.jsonl     one line per item: {id, record, trace} (what the engine appends)
    OUT/<variant>/responses.jsonl   ``murgat score`` input, one line per item, in input order
    OUT/<variant>/traces.jsonl      program, validation, every operation, verdict and timing
    OUT/summary.json                per variant: items, errors, calls per item, check outcomes
    OUT/<variant>/run/              with --score: the ``murgat score`` run of that variant

``responses.jsonl`` and ``traces.jsonl`` are rewritten from ``results.jsonl`` at the end of each
run (:class:`murgat.engine.folder.PairFolder`), so a crash can never leave them disagreeing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from murgat.cliutil import add_model_options


def _variants(spec: str) -> list[str]:
    from programs.runner import VARIANTS

    if spec.strip() == "all":
        return list(VARIANTS)
    out = [v.strip() for v in spec.split(",") if v.strip()]
    bad = [v for v in out if v not in VARIANTS]
    if bad or not out:
        raise ValueError(f"unknown variant(s) {', '.join(bad) or '(none)'}; choose from {', '.join(VARIANTS)} or all")
    return out


def _score_config(args: argparse.Namespace, judge_spec: str, opts: dict[str, str]) -> Any:
    from media.evidence import EvidenceConfig
    from murgat.engine.options import Requests, build
    from murgat.pipeline.config import JudgeSpec, ScoreConfig

    js = JudgeSpec(spec=judge_spec, options=opts)
    # every request of the run (planner, executor, checker) is sent with these settings
    gen = build(Requests, args).generate_config()
    return ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js, generate=gen,
                       evidence=EvidenceConfig(fps=args.fps, max_frames=args.max_frames), evidence_text=args.evidence_text)


async def _run(args: argparse.Namespace, items: list[Any], variants: list[str], out: Path, con: Any) -> dict[str, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache
    from programs.ops import ProgramSettings
    from programs.runner import Judges
    from programs.safety import Limits

    cache = ResponseCache(out / "cache.sqlite")
    for note in cache.notices:
        print(f"warning: {note}", file=sys.stderr)
    popts = parse_options(args.planner_option)
    eopts = parse_options(args.executor_option) if args.executor_option else popts
    jopts = parse_options(args.judge_option) if args.judge_option else eopts
    executor_spec = args.executor or args.planner
    judge_spec = args.judge or executor_spec
    cfg = _score_config(args, judge_spec, jopts)
    try:
        planner = make_judge(args.planner, popts, cache=cache, config=cfg.generate)
        executor = planner if executor_spec == args.planner and eopts == popts else make_judge(
            executor_spec, eopts, cache=cache, config=cfg.generate)
        checker = None
        if not args.no_check:
            checker = executor if judge_spec == executor_spec and jopts == eopts else make_judge(
                judge_spec, jopts, cache=cache, config=cfg.generate)
    except (ValueError, FileNotFoundError, ImportError):
        cache.discard()  # a bad model spec leaves no cache.sqlite behind
        raise
    if checker is not None and (checker.needs_evidence_text or args.evidence_text):
        cfg.evidence.text = True
    judges = Judges(planner=planner, executor=executor, checker=checker)
    settings = ProgramSettings(find_backend=args.find, check=not args.no_check, check_retries=args.check_retries,
                               asr_model=args.asr_model)
    limits = Limits(max_ops=args.max_ops, max_seconds=args.program_timeout)
    if getattr(args, "run_on", "local") == "ray":
        return _run_on_ray(args, items, variants, out, con, cfg, settings, limits,
                           {"planner": (args.planner, popts), "executor": (executor_spec, eopts),
                            "checker": (judge_spec, jopts) if checker is not None else None}, cache)
    from murgat.engine.loop import plan
    from murgat.engine.loop import run_items as engine_run
    from programs.task import ProgramTask

    place = _place(args)
    report: dict[str, Any] = {}
    order = [it.id for it in items]
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=con, disable=args.quiet or args.json)
    with progress:
        for variant in variants:
            folder = _variant_folder(out, variant)
            task = ProgramTask(variant, judges, cfg, settings, limits, args.replan, place)
            todo = plan(task, items, folder, args.retry_errors).todo
            bar = progress.add_task(variant, total=len(items), completed=len(items) - len(todo))
            try:
                await engine_run(task, todo, folder, concurrency=args.item_concurrency,
                                 on_item=lambda _rec, bar=bar: progress.advance(bar))
            finally:
                folder.export(order)
            report[variant] = _variant_summary(folder, set(order))
    stats = {j.name: j.stats.model_dump() for j in {id(j): j for j in (planner, executor, checker) if j}.values()}
    for j in {id(j): j for j in (planner, executor, checker) if j}.values():
        await j.aclose()
    cache.close()
    return {"variants": report, "judges": stats, "check": not args.no_check, "find": args.find}


def _place(args: argparse.Namespace) -> Any:
    from murgat.engine.preflight import MediaPlace

    return MediaPlace.of(args)


def _variant_folder(out: Path, variant: str) -> Any:
    """``OUT/VARIANT/``: the variant's :class:`~murgat.engine.folder.PairFolder` (made, repaired, adopted)."""
    from murgat.engine.folder import PairFolder

    folder = PairFolder(out / variant)
    for note in folder.notices:
        print(f"warning: {note}", file=sys.stderr)
    return folder


def _run_on_ray(args: argparse.Namespace, items: list[Any], variants: list[str], out: Path, con: Any, cfg: Any,
                settings: Any, limits: Any, specs: dict[str, Any], cache: Any) -> dict[str, Any]:
    """``--run-on ray``: each variant's items not done yet through the engine's Ray path (one Ray
    instance for all variants)."""
    import dataclasses

    from murgat.engine.loop import plan
    from murgat.scaleout.driver import init_ray, report_extra, shutdown, summed_stats
    from murgat.scaleout.tasks import TaskSpec, run_on_ray
    from programs.task import ProgramTask

    cache.close()  # the cluster's cache service owns the database while the tasks run
    place = _place(args).resolved()
    order = [it.id for it in items]
    common = {"config": cfg.model_dump(mode="json"), "settings": dataclasses.asdict(settings),
              "limits": dataclasses.asdict(limits), "replan": args.replan, "place": place.to_json(),
              "judges": {role: {"spec": v[0], "options": v[1]} if v else None for role, v in specs.items()}}
    report: dict[str, Any] = {}
    stats: dict[str, Any] = {}
    totals = {"tasks": 0, "workers": 0, "resubmitted": 0, "duplicates_ignored": 0, "lost": 0, "seconds": 0.0}
    started = init_ray(getattr(args, "ray_address", None), getattr(args, "ray_cpus", None))
    try:
        for variant in variants:
            folder = _variant_folder(out, variant)
            task = ProgramTask(variant, None, cfg, settings, limits, args.replan, place)
            todo = plan(task, items, folder, args.retry_errors).todo
            spec = TaskSpec("programs.task:ray_task", {**common, "variant": variant}, concurrency=args.item_concurrency)
            try:
                ray_report = run_on_ray(spec, task, todo, folder, args, label=f"program {variant}", total=len(items),
                                        con=con, cache_path=out / "cache.sqlite")
            finally:
                folder.export(order)
            for name, st in summed_stats(ray_report)[2].items():
                acc = stats.setdefault(name, {})
                for k, val in st.model_dump().items():
                    acc[k] = acc.get(k, 0) + val
            for k, val in report_extra(ray_report).items():
                if k in totals:
                    totals[k] += val
            report[variant] = _variant_summary(folder, set(order))
    finally:
        shutdown(started)
    return {"variants": report, "judges": stats, "check": not args.no_check, "find": args.find, "ray": totals}


def _variant_summary(folder: Any, ids: set[str]) -> dict[str, Any]:
    rows = folder.latest_results(want=ids)
    recs = {r["id"]: r["record"] for r in rows}
    trs = {r["id"]: r["trace"] for r in rows}
    n = len(recs)
    statuses: dict[str, int] = {}
    checks: dict[str, int] = {}
    regenerations = 0
    for t in trs.values():
        statuses[t["status"]] = statuses.get(t["status"], 0) + 1
        for op in t.get("ops", []):
            if op["op"] == "describe":
                checks[op["status"]] = checks.get(op["status"], 0) + 1
                regenerations += max(0, len(op.get("check", [])) - 1)
    calls = [t.get("judge_calls", 0) for t in trs.values()]
    gold = [r for r in recs.values() if r.get("correct") is not None]
    return {
        "items": n, "errors": sum(1 for r in recs.values() if r.get("generation_error")), "status": statuses,
        "descriptions": checks, "regenerations": regenerations,
        "calls_per_item": (sum(calls) / len(calls)) if calls else 0.0,
        "accuracy": (sum(1 for r in gold if r["correct"]) / len(gold)) if gold else None,
        "interpreter_seconds_per_item": (sum(t.get("interpreter_seconds", 0.0) for t in trs.values()) / len(trs))
        if trs else 0.0,
    }


def _score_variants(args: argparse.Namespace, out: Path, variants: list[str]) -> tuple[int, dict[str, Any] | None]:
    """Score each variant (and --baseline) with ``murgat score``; compare against the baseline or the first."""
    from murgat.pipeline.report import compare
    from murgat.pipeline.rundir import RunDir

    judge = args.judge or args.executor or args.planner
    targets = [(v, out / v / "responses.jsonl", out / v / "run") for v in variants]
    if args.baseline:
        targets.insert(0, ("baseline", Path(args.baseline), out / "baseline-run"))
    from murgat.api import score

    runs = []
    for name, responses, run in targets:
        res = score(responses, judge=judge, out=run, cache=str(out / "score-cache.sqlite"), media_root=args.media_root,
                    allow_media_outside_root=args.allow_media_outside_root,
                    judge_option=list(args.judge_option or args.executor_option or args.planner_option), json=True)
        if res.exit_code not in (0, 1) or not res.summary:
            print(f"error: scoring {name} failed (exit {res.exit_code})", file=sys.stderr)
            return res.exit_code or 2, None
        rd = RunDir(run, repair=False)
        runs.append((name, rd.latest_results(), rd.summary()))
    return 0, compare(runs, n_resamples=2000, seed=0)


def _print_comparison(doc: dict[str, Any], con: Any) -> None:
    from rich.table import Table

    from murgat.pipeline.report import fmt

    t = Table(title="program variants scored with MURGAT-S (95% bootstrap CIs; Δ = paired difference vs the first row)")
    cols = ("coverage", "precision", "recall", "f1", "murgat_s", "accuracy")
    t.add_column("run")
    for c in cols:
        t.add_column(c)
    for r in doc["runs"]:
        t.add_row(r["run"], *(fmt(r.get(c)) for c in cols))
    for d in doc["differences"]:
        t.add_row(f"Δ {d['run']}", *(fmt(d[c]) if d.get(c) else "" for c in cols))
    con.print(t)


def _cmd_program(args: argparse.Namespace) -> int:
    from murgat.cliutil import failure_code, media_root_refused, select_items, take_output
    from murgat.console import console
    from murgat.generation.datasets import load_dataset
    from murgat.inputs import InputError
    from murgat.pipeline.rundir import canonical_json

    if media_root_refused(args.media_root):
        return 2
    if args.executor in ("ray", "local"):
        print(f"error: --executor names the model that executes programs (provider:model); to run on Ray use "
              f"--run-on {args.executor}", file=sys.stderr)
        return 2
    try:
        variants = _variants(args.variant)
        items = select_items(load_dataset(args.data), args.ids, args.limit)
    except (ValueError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    from murgat.engine.folder import refuse_own_outputs

    refuse_own_outputs([args.data, args.baseline], [out / v / name for v in variants
                                                   for name in ("responses.jsonl", "traces.jsonl", "results.jsonl")])
    lock = take_output(out)
    if lock is None:
        return 2
    con = console(stderr=True)
    try:
        from murgat.engine.folder import RunFolder

        fingerprint = canonical_json({k: getattr(args, k) for k in (
            "planner", "executor", "judge", "planner_option", "executor_option", "judge_option", "find", "no_check",
            "check_retries", "replan", "max_ops", "fps", "max_frames", "temperature", "max_tokens", "effort",
            "evidence_text")})
        parent = RunFolder(out, record=None)
        if args.overwrite:
            parent.reset()
            for v in variants:
                for name in ("results.jsonl", "results.corrupt.jsonl", "responses.jsonl", "traces.jsonl"):
                    (out / v / name).unlink(missing_ok=True)
        parent.check_config(fingerprint, {**fingerprint, "data": args.data, "media_root": args.media_root,
                                          "variants": variants}, kind="program")
        try:
            doc = asyncio.run(_run(args, items, variants, out, con))
        except (ExceptionGroup, ValueError, FileNotFoundError) as exc:
            code = failure_code(exc)
            if code is None:
                raise
            return code
        parent.write_summary(doc)
        _report(out, variants, {it.id for it in items}, doc, args.media_root)
        code = 0
        if args.score:
            code, comparison = _score_variants(args, out, variants)
            if comparison is not None:
                doc["comparison"] = comparison
                parent.write_summary(doc)
        if args.json:
            print(json.dumps(doc, indent=2, sort_keys=True, default=str))
        else:
            _print_variants(doc, console())
            if doc.get("comparison"):
                _print_comparison(doc["comparison"], console())
        errors = sum(v["errors"] for v in doc["variants"].values())
        if code:
            return code
        if errors:
            print(f"FAILED: {errors} item-variant(s) produced no program answer (see traces.jsonl)", file=sys.stderr)
            return 1
        return 0
    finally:
        lock.release()


def _report(out: Path, variants: list[str], ids: set[str], doc: dict[str, Any], media_root: str | None) -> None:
    from murgat.engine.folder import PairFolder
    from murgat.viewer.steps import program_report

    rows = {v: PairFolder(out / v, repair=False).latest_results(want=ids) for v in variants}
    traces = {v: [r["trace"] for r in rows[v]] for v in variants}
    recs = {v: {r["id"]: r["record"] for r in rows[v]} for v in variants}
    program_report(out / "report.html", traces, doc, media_root, recs)


def _print_variants(doc: dict[str, Any], con: Any) -> None:
    from rich.table import Table

    t = Table(title="murgat program — per variant")
    for c in ("variant", "items", "errors", "status", "descriptions (check)", "regenerated", "calls/item", "accuracy"):
        t.add_column(c)
    for v, s in doc["variants"].items():
        t.add_row(v, str(s["items"]), str(s["errors"]), ", ".join(f"{k} {n}" for k, n in sorted(s["status"].items())),
                  ", ".join(f"{k} {n}" for k, n in sorted(s["descriptions"].items())) or "–", str(s["regenerations"]),
                  f"{s['calls_per_item']:.1f}", "–" if s["accuracy"] is None else f"{s['accuracy']:.3f}")
    con.print(t)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("program", help="plan-then-execute answers (find / describe / synthesize), grounded by construction")
    p.add_argument("data", help="murgat JSONL/CSV, videommmu:PATH, nextgqa:PATH or hf:PATH (questions + media)")
    from murgat.engine import options

    options.add(p, options.Place)
    p.add_argument("--variant", default="all",
                   help="logic-declarative, logic-imperative, narrative-declarative, narrative-imperative (comma list) or all")
    p.add_argument("--planner", required=True, help="provider:model that writes the programs")
    p.add_argument("--executor", default=None, help="provider:model for find/describe/synthesize (default: the planner)")
    p.add_argument("--judge", default=None, help="entailment judge for the runtime check and --score (default: executor)")
    p.add_argument("-P", "--planner-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("-E", "--executor-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("-J", "--judge-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--find", choices=["model", "transcript", "ocr"], default="model",
                   help="find backend: the executor model, ASR words (audio), or on-screen text (visual)")
    p.add_argument("--no-check", action="store_true", help="skip the runtime attribution check of descriptions")
    p.add_argument("--check-retries", type=int, default=2, help="regenerations of a description the check rejects")
    p.add_argument("--replan", type=int, default=0, help="times a refused program goes back to the planner with the reason")
    p.add_argument("--max-ops", type=int, default=24, help="operation calls allowed per program")
    p.add_argument("--program-timeout", type=float, default=600.0, help="wall seconds per program")
    p.add_argument("--fps", type=float, default=1.0)
    p.add_argument("--max-frames", type=int, default=8)
    p.add_argument("--evidence-text", action="store_true", help="also send ASR/OCR text with the media")
    p.add_argument("--asr-model", default=None)
    add_model_options(p, item_concurrency=4)
    options.add(p, options.Selection)
    options.add(p, options.Folder, only=("out", "retry_errors", "overwrite", "print_json", "quiet"), required=("out",))
    p.add_argument("--score", action="store_true", help="score each variant with murgat score and compare them")
    p.add_argument("--baseline", default=None, help="with --score: a `murgat generate --mode cite` file to compare against")
    from murgat.scaleout import add_executor_options

    add_executor_options(p, executor_flag=False)  # its --executor names the executing model
    p.set_defaults(func=_cmd_program)
