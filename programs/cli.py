"""``murgat program``: plan-then-execute answers for a dataset, per variant, optionally scored.

Output folder (one process at a time, resumable like ``score``)::

    OUT/config.json                 settings; a rerun with different ones is refused
    OUT/cache.sqlite                planner/executor/checker answers (shared by variants)
    OUT/<variant>/responses.jsonl   ``murgat score`` input, one line per item
    OUT/<variant>/traces.jsonl      program, validation, every operation, verdict and timing
    OUT/summary.json                per variant: items, errors, calls per item, check outcomes
    OUT/<variant>/run/              with --score: the ``murgat score`` run of that variant
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
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
    from murgat.judges.types import GenerateConfig
    from murgat.pipeline.config import JudgeSpec, ScoreConfig

    js = JudgeSpec(spec=judge_spec, options=opts)
    GenerateConfig(temperature=args.temperature, max_tokens=args.max_tokens, concurrency=args.concurrency,
                         reasoning_effort=args.effort, timeout_s=args.timeout, retries=args.retries,
                         max_retry_time_s=args.max_retry_time)
    return ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js,
                       evidence=EvidenceConfig(fps=args.fps, max_frames=args.max_frames), evidence_text=args.evidence_text)


async def _run(args: argparse.Namespace, items: list[Any], variants: list[str], out: Path, con: Any) -> dict[str, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from murgat.jsonl import append_line, dumps
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache
    from programs.ops import ProgramSettings
    from programs.runner import Judges, run_item
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
    planner = make_judge(args.planner, popts, cache=cache, config=cfg.generate)
    executor = planner if executor_spec == args.planner and eopts == popts else make_judge(
        executor_spec, eopts, cache=cache, config=cfg.generate)
    checker = None
    if not args.no_check:
        checker = executor if judge_spec == executor_spec and jopts == eopts else make_judge(
            judge_spec, jopts, cache=cache, config=cfg.generate)
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
    sem = asyncio.Semaphore(max(1, args.item_concurrency))
    report: dict[str, Any] = {}
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=con, disable=args.quiet or args.json)
    with progress:
        for variant in variants:
            resp, traces = _variant_files(out, variant)
            todo = _todo(args, items, resp)
            task = progress.add_task(variant, total=len(items), completed=len(items) - len(todo))

            async def one(item: Any, variant: str = variant, resp: Path = resp, traces: Path = traces,
                          task: Any = task) -> None:
                async with sem:
                    record, trace = await run_item(item, variant, judges, cfg, settings, limits, args.replan,
                                                   media_root=args.media_root, input_path=args.data.split(":", 1)[-1],
                                                   allow_outside_root=args.allow_media_outside_root)
                    append_line(traces, trace.model_dump_json())
                    append_line(resp, dumps(record))
                    progress.advance(task)

            async with asyncio.TaskGroup() as tg:
                for it in todo:
                    tg.create_task(one(it))
            report[variant] = _variant_summary(resp, traces, {it.id for it in items})
    stats = {j.name: j.stats.model_dump() for j in {id(j): j for j in (planner, executor, checker) if j}.values()}
    for j in {id(j): j for j in (planner, executor, checker) if j}.values():
        await j.aclose()
    cache.close()
    return {"variants": report, "judges": stats, "check": not args.no_check, "find": args.find}


def _variant_files(out: Path, variant: str) -> tuple[Path, Path]:
    """``OUT/VARIANT/responses.jsonl`` and ``traces.jsonl``, their folder made and torn last lines cut."""
    from murgat.jsonl import cut_torn_tail

    folder = out / variant
    folder.mkdir(parents=True, exist_ok=True)
    resp, traces = folder / "responses.jsonl", folder / "traces.jsonl"
    cut_torn_tail(resp)
    cut_torn_tail(traces)
    return resp, traces


def _todo(args: argparse.Namespace, items: list[Any], resp: Path) -> list[Any]:
    """Items without a record in ``resp`` (or, with ``--retry-errors``, with a failed one)."""
    from murgat.jsonl import read_records

    done = {}
    for _, rec in read_records(resp)[0]:
        if isinstance(rec, dict) and "id" in rec:
            done[str(rec["id"])] = rec
    if args.retry_errors:
        done = {k: v for k, v in done.items() if not v.get("generation_error")}
    return [it for it in items if it.id not in done]


def _run_on_ray(args: argparse.Namespace, items: list[Any], variants: list[str], out: Path, con: Any, cfg: Any,
                settings: Any, limits: Any, specs: dict[str, Any], cache: Any) -> dict[str, Any]:
    """``--run-on ray``: every (item, variant) not done yet runs in Ray tasks grouped by media file."""
    import dataclasses

    from murgat.scaleout.commands import program_on_ray

    units = []
    for variant in variants:
        resp, _ = _variant_files(out, variant)
        units += [(it, variant) for it in _todo(args, items, resp)]
    cache.close()  # the cluster's cache service owns the database while the tasks run
    payload = {"config": cfg.model_dump(mode="json"), "settings": dataclasses.asdict(settings),
               "limits": dataclasses.asdict(limits), "replan": args.replan, "media_root": args.media_root,
               "input_path": args.data.split(":", 1)[-1], "allow_outside_root": args.allow_media_outside_root,
               "item_concurrency": args.item_concurrency,
               "judges": {role: {"spec": v[0], "options": v[1]} if v else None for role, v in specs.items()}}
    stats, ray_report = program_on_ray(args, units, out, payload, con)
    report = {v: _variant_summary(out / v / "responses.jsonl", out / v / "traces.jsonl", {it.id for it in items})
              for v in variants}
    from murgat.scaleout.driver import report_extra

    return {"variants": report, "judges": stats, "check": not args.no_check, "find": args.find,
            "ray": report_extra(ray_report)}


def _variant_summary(resp: Path, traces: Path, ids: set[str]) -> dict[str, Any]:
    from murgat.jsonl import read_records

    recs = {str(r["id"]): r for _, r in read_records(resp)[0] if isinstance(r, dict) and str(r.get("id")) in ids}
    trs = {str(t["id"]): t for _, t in read_records(traces)[0] if isinstance(t, dict) and str(t.get("id")) in ids}
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
    runs = []
    for name, responses, run in targets:
        cmd = [sys.executable, "-m", "murgat", "score", str(responses), "--judge", judge, "--out", str(run),
               "--cache", str(out / "score-cache.sqlite"), "--quiet", "--json"]
        if args.media_root:
            cmd += ["--media-root", args.media_root]
        if args.allow_media_outside_root:
            cmd += ["--allow-media-outside-root"]
        for opt in args.judge_option or args.executor_option or args.planner_option:
            cmd += ["-J", opt]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode not in (0, 1) or not proc.stdout.strip():
            print(f"error: scoring {name} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
            return proc.returncode or 2, None
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
    from murgat.cliutil import failure_code, select_items, take_output
    from murgat.console import console
    from murgat.generation.datasets import load_dataset
    from murgat.inputs import InputError
    from murgat.pipeline.rundir import canonical_json

    try:
        variants = _variants(args.variant)
        items = load_dataset(args.data)
    except (ValueError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    items = select_items(items, args.ids, args.limit)
    out = Path(args.out)
    lock = take_output(out)
    if lock is None:
        return 2
    con = console(stderr=True)
    try:
        fingerprint = canonical_json({k: getattr(args, k) for k in (
            "planner", "executor", "judge", "planner_option", "executor_option", "judge_option", "find", "no_check",
            "check_retries", "replan", "max_ops", "fps", "max_frames", "temperature", "max_tokens", "effort",
            "evidence_text")})
        cfg_path = out / "config.json"
        if cfg_path.exists() and not args.overwrite:
            old = json.loads(cfg_path.read_text(encoding="utf-8")).get("fingerprint")
            if old is not None and old != fingerprint:
                changed = sorted(k for k in fingerprint if old.get(k) != fingerprint.get(k))
                print(f"error: {out} holds program runs made with other settings ({', '.join(changed)}); use a new "
                      "--out or --overwrite", file=sys.stderr)
                return 2
        if args.overwrite:
            for v in variants:
                for name in ("responses.jsonl", "traces.jsonl"):
                    (out / v / name).unlink(missing_ok=True)
        cfg_path.write_text(json.dumps({"fingerprint": fingerprint}, indent=2, sort_keys=True))
        try:
            doc = asyncio.run(_run(args, items, variants, out, con))
        except (ExceptionGroup, ValueError, FileNotFoundError) as exc:
            code = failure_code(exc)
            if code is None:
                raise
            return code
        (out / "summary.json").write_text(json.dumps(doc, indent=2, sort_keys=True, default=str))
        _report(out, variants, {it.id for it in items}, doc, args.media_root)
        code = 0
        if args.score:
            code, comparison = _score_variants(args, out, variants)
            if comparison is not None:
                doc["comparison"] = comparison
                (out / "summary.json").write_text(json.dumps(doc, indent=2, sort_keys=True, default=str))
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
    from murgat.jsonl import read_records
    from murgat.viewer.steps import program_report

    traces = {v: [t for _, t in read_records(out / v / "traces.jsonl")[0] if isinstance(t, dict) and t.get("id") in ids]
              for v in variants}
    recs = {v: {str(r["id"]): r for _, r in read_records(out / v / "responses.jsonl")[0] if isinstance(r, dict)}
            for v in variants}
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
    p.add_argument("--media-root", default=None, help="folder the media names are resolved in")
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
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--ids", default=None)
    p.add_argument("--out", required=True)
    p.add_argument("--retry-errors", action="store_true", help="run again items whose record is an error")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--allow-media-outside-root", action="store_true")
    p.add_argument("--score", action="store_true", help="score each variant with murgat score and compare them")
    p.add_argument("--baseline", default=None, help="with --score: a `murgat generate --mode cite` file to compare against")
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", action="store_true")
    from murgat.scaleout import add_executor_options

    add_executor_options(p, executor_flag=False)  # its --executor names the executing model
    p.set_defaults(func=_cmd_program)
