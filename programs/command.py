"""What ``murgat program`` does, given its :class:`~programs.settings.ProgramSettings`: plan-then-execute
answers for a dataset, per variant, optionally scored (the one implementation behind the command
line and ``murgat.program(...)``).

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

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.engine.preflight import MediaPlace
from programs.settings import ProgramSettings

if TYPE_CHECKING:
    from programs.ops import OpSettings
    from programs.safety import Limits


def _variants(spec: str) -> list[str]:
    from programs.runner import VARIANTS

    if spec.strip() == "all":
        return list(VARIANTS)
    out = [v.strip() for v in spec.split(",") if v.strip()]
    bad = [v for v in out if v not in VARIANTS]
    if bad or not out:
        raise ValueError(f"unknown variant(s) {', '.join(bad) or '(none)'}; choose from {', '.join(VARIANTS)} or all")
    return out


def _score_config(s: ProgramSettings, judge_spec: str, opts: dict[str, str]) -> Any:
    from media.evidence import EvidenceConfig
    from murgat.pipeline.config import JudgeSpec, ScoreConfig

    js = JudgeSpec(spec=judge_spec, options=opts)
    # every request of the run (planner, executor, checker) is sent with these settings
    gen = s.generate_config()
    return ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js, generate=gen,
                       evidence=EvidenceConfig(fps=s.fps, max_frames=s.max_frames), evidence_text=s.evidence_text)


async def _run(s: ProgramSettings, items: list[Any], variants: list[str], out: Path, con: Any) -> dict[str, Any]:
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache
    from programs.ops import OpSettings
    from programs.runner import Judges
    from programs.safety import Limits

    cache = ResponseCache(s.cache_path())
    for note in cache.notices:
        print(f"warning: {note}", file=sys.stderr)
    popts = parse_options(s.planner_option)
    eopts = parse_options(s.executor_option) if s.executor_option else popts
    jopts = parse_options(s.judge_option) if s.judge_option else eopts
    executor_spec = s.executor or s.planner
    judge_spec = s.judge or executor_spec
    cfg = _score_config(s, judge_spec, jopts)
    try:
        planner = make_judge(s.planner, popts, cache=cache, config=cfg.generate)
        executor = planner if executor_spec == s.planner and eopts == popts else make_judge(
            executor_spec, eopts, cache=cache, config=cfg.generate)
        checker = None
        if not s.no_check:
            checker = executor if judge_spec == executor_spec and jopts == eopts else make_judge(
                judge_spec, jopts, cache=cache, config=cfg.generate)
    except (ValueError, FileNotFoundError, ImportError):
        cache.discard()  # a bad model spec leaves no cache.sqlite behind
        raise
    if checker is not None and (checker.needs_evidence_text or s.evidence_text):
        cfg.evidence.text = True
    judges = Judges(planner=planner, executor=executor, checker=checker)
    op_settings = OpSettings(find_backend=s.find, check=not s.no_check, check_retries=s.check_retries,
                             asr_model=s.asr_model)
    limits = Limits(max_ops=s.max_ops, max_seconds=s.program_timeout)
    if s.run_on == "ray":
        return _run_on_ray(s, items, variants, out, con, cfg, op_settings, limits,
                           {"planner": (s.planner, popts), "executor": (executor_spec, eopts),
                            "checker": (judge_spec, jopts) if checker is not None else None}, cache)
    from murgat.engine.loop import plan
    from murgat.engine.loop import run_items as engine_run
    from programs.task import ProgramTask

    place = MediaPlace.of(s)
    report: dict[str, Any] = {}
    order = [it.id for it in items]
    from murgat.engine.progress import item_progress

    progress = item_progress(None, disable=s.quiet or s.print_json)  # one bar per variant
    with progress:
        for variant in variants:
            folder = _variant_folder(out, variant)
            task = ProgramTask(variant, judges, cfg, op_settings, limits, s.replan, place)
            todo = plan(task, items, folder, s.retry_errors).todo
            bar = progress.add_task(variant, total=len(items), completed=len(items) - len(todo))
            try:
                await engine_run(task, todo, folder, concurrency=s.item_concurrency,
                                 on_item=lambda _rec, bar=bar: progress.advance(bar))
            finally:
                folder.export(order)
            report[variant] = _variant_summary(folder, set(order))
    stats = {j.name: j.stats.model_dump() for j in {id(j): j for j in (planner, executor, checker) if j}.values()}
    for j in {id(j): j for j in (planner, executor, checker) if j}.values():
        await j.aclose()
    cache.close()
    return {"variants": report, "judges": stats, "check": not s.no_check, "find": s.find}



def _variant_folder(out: Path, variant: str) -> Any:
    """``OUT/VARIANT/``: the variant's :class:`~murgat.engine.folder.PairFolder` (made, repaired, adopted)."""
    from murgat.engine.folder import PairFolder

    folder = PairFolder(out / variant)
    for note in folder.notices:
        print(f"warning: {note}", file=sys.stderr)
    return folder


def _run_on_ray(s: ProgramSettings, items: list[Any], variants: list[str], out: Path, con: Any, cfg: Any,
                op_settings: OpSettings, limits: Limits, specs: dict[str, Any], cache: Any) -> dict[str, Any]:
    """``--run-on ray``: each variant's items not done yet through the engine's Ray path (one Ray
    instance for all variants)."""
    import dataclasses

    from murgat.engine.loop import plan
    from murgat.scaleout.driver import init_ray, report_extra, shutdown, summed_stats
    from murgat.scaleout.tasks import TaskSpec, run_on_ray
    from programs.task import ProgramTask

    cache.close()  # the cluster's cache service owns the database while the tasks run
    place = MediaPlace.of(s).resolved()
    order = [it.id for it in items]
    common = {"config": cfg.model_dump(mode="json"), "settings": dataclasses.asdict(op_settings),
              "limits": dataclasses.asdict(limits), "replan": s.replan, "place": place.to_json(),
              "judges": {role: {"spec": v[0], "options": v[1]} if v else None for role, v in specs.items()}}
    report: dict[str, Any] = {}
    stats: dict[str, Any] = {}
    totals = {"tasks": 0, "workers": 0, "resubmitted": 0, "duplicates_ignored": 0, "lost": 0, "seconds": 0.0}
    started = init_ray(s.ray_address, s.ray_cpus)
    try:
        for variant in variants:
            folder = _variant_folder(out, variant)
            task = ProgramTask(variant, None, cfg, op_settings, limits, s.replan, place)
            todo = plan(task, items, folder, s.retry_errors).todo
            spec = TaskSpec("programs.task:ray_task", {**common, "variant": variant}, concurrency=s.item_concurrency)
            try:
                ray_report = run_on_ray(spec, task, todo, folder, s, label=f"program {variant}", total=len(items),
                                        con=con, cache_path=s.cache_path())
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
    return {"variants": report, "judges": stats, "check": not s.no_check, "find": s.find, "ray": totals}


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


def _score_variants(s: ProgramSettings, out: Path, variants: list[str]) -> tuple[int, dict[str, Any] | None]:
    """Score each variant (and --baseline) with ``murgat score``; compare against the baseline or the first."""
    from murgat.engine.folder import RunDir
    from murgat.pipeline.report import compare

    judge = s.judge or s.executor or s.planner
    targets = [(v, out / v / "responses.jsonl", out / v / "run") for v in variants]
    if s.baseline:
        targets.insert(0, ("baseline", Path(s.baseline), out / "baseline-run"))
    from murgat.pipeline.command import run_score
    from murgat.pipeline.settings import ScoreSettings

    runs = []
    for name, responses, run in targets:
        # --overwrite starts the scoring folders again too (else another --judge is refused)
        scoring = ScoreSettings.scoring_of(s, input=str(responses), judge=judge, out=str(run),
                                           judge_option=s.judge_option or s.executor_option or s.planner_option,
                                           cache=str(out / "score-cache.sqlite"))
        code = run_score(scoring, echo=False)
        if code not in (0, 1) or not (run / "summary.json").exists():
            print(f"error: scoring {name} failed (exit {code})", file=sys.stderr)
            return code or 2, None
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


def run_program(s: ProgramSettings, *, echo: bool = True) -> int:
    """``murgat program``: run every variant, write the folders and summary; the exit status."""
    from murgat.console import console
    from murgat.engine.folder import canonical_json
    from murgat.engine.guards import exit_code_of, media_root_refused, select_items, take_output
    from murgat.generation.datasets import load_dataset
    from murgat.inputs import InputError

    if media_root_refused(s.media_root):
        return 2
    if s.executor in ("ray", "local"):
        print(f"error: --executor names the model that executes programs (provider:model); to run on Ray use "
              f"--run-on {s.executor}", file=sys.stderr)
        return 2
    try:
        variants = _variants(s.variant)
        items = select_items(load_dataset(s.data), s.ids, s.limit)
    except (ValueError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(s.out)
    from murgat.engine.folder import refuse_own_outputs

    refuse_own_outputs([s.data, s.baseline], [out / v / name for v in variants
                                                   for name in ("responses.jsonl", "traces.jsonl", "results.jsonl")])
    lock = take_output(out)
    if lock is None:
        return 2
    con = console(stderr=True)
    try:
        from murgat.engine.folder import RunFolder

        fingerprint = canonical_json({k: getattr(s, k) for k in (
            "planner", "executor", "judge", "planner_option", "executor_option", "judge_option", "find", "no_check",
            "check_retries", "replan", "max_ops", "fps", "max_frames", "temperature", "max_tokens", "effort",
            "evidence_text")})
        parent = RunFolder(out, record=None)
        if s.overwrite:
            parent.reset()
            from programs.runner import VARIANTS

            for v in VARIANTS:  # every variant's folder: --overwrite starts the whole run again
                for name in ("results.jsonl", "results.corrupt.jsonl", "responses.jsonl", "traces.jsonl"):
                    (out / v / name).unlink(missing_ok=True)
        parent.check_config(fingerprint, {**fingerprint, "data": s.data, "media_root": s.media_root,
                                          "variants": variants}, kind="program")
        try:
            doc = asyncio.run(_run(s, items, variants, out, con))
        except (ExceptionGroup, ValueError, FileNotFoundError) as exc:
            return exit_code_of(exc)
        parent.write_summary(doc)
        _report(out, variants, {it.id for it in items}, doc, s.media_root)
        code = 0
        if s.score:
            code, comparison = _score_variants(s, out, variants)
            if comparison is not None:
                doc["comparison"] = comparison
                parent.write_summary(doc)
        if echo and s.print_json:
            print(json.dumps(doc, indent=2, sort_keys=True, default=str))
        elif echo:
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


def _report(out: Path, variants: list[str], ids: set[str] | None, doc: dict[str, Any], media_root: str | None,
            page: Path | None = None) -> Path:
    from murgat.engine.folder import PairFolder
    from murgat.viewer.steps import program_report

    rows = {v: PairFolder(out / v, repair=False).latest_results(want=ids) for v in variants}
    traces = {v: [r["trace"] for r in rows[v]] for v in variants}
    recs = {v: {r["id"]: r["record"] for r in rows[v]} for v in variants}
    return program_report(page or out / "report.html", traces, doc, media_root, recs)


def write_report(run: Path, page: Path, media_root: str | None) -> Path:
    """``murgat view`` on a program run folder: its page again, from the summary and every variant
    folder it holds (the same page ``murgat program`` writes)."""
    doc = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    variants = [v for v in doc.get("variants", {}) if (run / v).is_dir()]
    return _report(run, variants, None, doc, media_root, page)


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


