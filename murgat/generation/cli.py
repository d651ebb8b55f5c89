"""``murgat generate`` and ``murgat sweep``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any


def _load(args: argparse.Namespace) -> Any:
    from murgat.cliutil import select_items
    from murgat.generation.datasets import load_dataset

    return select_items(load_dataset(args.data), args.ids, args.limit)


def output_paths(out: str | Path) -> tuple[Path, Path]:
    """(run folder, responses file) of ``generate --out``.

    ``--out DIR`` is a run folder like every command's: ``DIR/responses.jsonl`` (the input of
    ``murgat score``), ``config.json``, ``cache.sqlite``, ``summary.json``. ``--out FILE.jsonl``
    (the spelling of earlier versions, kept working) writes the responses to ``FILE.jsonl`` and
    keeps the rest of the run folder beside it in ``FILE.run/``."""
    p = Path(out)
    if p.suffix == ".jsonl" and not p.is_dir() and not str(out).endswith(("/", "\\")):
        return p.with_suffix(".run"), p
    return p, p / "responses.jsonl"


def _place(args: argparse.Namespace) -> Any:
    from murgat.engine.preflight import MediaPlace

    return MediaPlace.of(args)


def _gen_config(args: argparse.Namespace, effort: str | None) -> Any:
    from murgat.engine.options import Requests, build

    return build(Requests, args).generate_config(effort)


def _fingerprint(args: argparse.Namespace, effort: str | None) -> dict[str, Any]:
    from murgat.judges import parse_options

    return {"model": args.model, "options": parse_options(args.model_option), "mode": args.mode,
            "generate": _gen_config(args, effort).cache_fields(), "fps": args.fps, "max_frames": args.max_frames,
            "base": str(Path(args.base).resolve()) if args.base else None}


async def _generate(args: argparse.Namespace, effort: str | None, folder: Any, cache_path: Path,
                    items: list[Any]) -> Any:
    from murgat.generation.generate import generate_all
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache

    base = None
    if args.mode == "posthoc":
        if not args.base:
            raise ValueError("--mode posthoc needs --base RESPONSES (a base-mode responses file)")
        from murgat.inputs import load_items

        base = {it.id: it.response for it in load_items(args.base)}
    cfg = _gen_config(args, effort)
    if getattr(args, "run_on", "local") == "ray":
        from murgat.console import console
        from murgat.engine.loop import plan
        from murgat.generation.generate import GenerateTask
        from murgat.judges.base import JudgeStats
        from murgat.scaleout.driver import summed_stats
        from murgat.scaleout.tasks import TaskSpec, run_on_ray

        place = _place(args).resolved()
        task = GenerateTask(None, args.mode, cfg, place, fps=args.fps, max_frames=args.max_frames, base=base,
                            model=args.model)
        todo = plan(task, items, folder, args.retry_errors).todo
        spec = TaskSpec("murgat.generation.generate:ray_task", {
            "config": cfg.model_dump(mode="json"), "model": args.model, "options": parse_options(args.model_option),
            "mode": args.mode, "place": place.to_json(), "fps": args.fps, "max_frames": args.max_frames,
            "base": {it.id: base[it.id] for it in todo if base and it.id in base}}, concurrency=args.concurrency)
        try:
            report = run_on_ray(spec, task, todo, folder, args, label="generate", total=len(items),
                                con=console(stderr=True), cache_path=cache_path)
        finally:
            folder.compact([it.id for it in items])
        _, _, totals = summed_stats(report)
        return next(iter(totals.values()), None) or JudgeStats()
    cache = ResponseCache(cache_path)
    try:
        judge = make_judge(args.model, parse_options(args.model_option), cache=cache, config=cfg)
    except (ValueError, FileNotFoundError, ImportError):
        cache.discard()
        raise
    try:
        await generate_all(judge, items, folder, args.mode, cfg, place=_place(args), fps=args.fps,
                           max_frames=args.max_frames, base=base, concurrency=args.concurrency,
                           retry_errors=args.retry_errors)
    finally:
        await judge.aclose()
        cache.close()
    return judge.stats


def _check_adopted(folder: Any, args: argparse.Namespace, effort: str | None) -> None:
    """A responses file from before run folders (no config.json yet) is adopted only when its records
    were made by this model, mode and effort (each record names them): otherwise one file would mix
    two settings under one accuracy."""
    from murgat.engine.folder import RunConfigMismatch

    if folder.config_path.exists():
        return
    for r in folder.latest_results(slim=True):
        made = (r.get("model"), r.get("mode"), r.get("effort"))
        if made[0] not in (None, args.model) or made[1] not in (None, args.mode) or made[2] not in (None, effort):
            raise RunConfigMismatch(f"{folder.results_path} holds responses of {made[0]} (mode {made[1]}, effort "
                                    f"{made[2]}), not of {args.model} (mode {args.mode}, effort {effort}); use another "
                                    "--out, or --overwrite")


def run_generate(args: argparse.Namespace, items: list[Any], out: Path, effort: str | None) -> tuple[int, dict[str, Any]]:
    """Generate into the run folder of ``out`` (lock, config, resume, summary); (exit code, summary)."""
    from murgat.cliutil import take_output
    from murgat.engine.folder import RunFolder, refuse_own_outputs
    from murgat.generation.generate import accuracy_table

    folder_path, responses = output_paths(out)
    refuse_own_outputs([args.data, getattr(args, "base", None)], [responses])
    lock = take_output(folder_path)
    if lock is None:
        return 2, {}
    # the responses file itself is locked too: `--out DIR` and `--out DIR/responses.jsonl` name one file
    file_lock = take_output(responses, is_dir=False)
    if file_lock is None:
        lock.release()
        return 2, {}
    try:
        folder = RunFolder(folder_path, record=None, results=responses.resolve(), required=frozenset({"response"}))
        if getattr(args, "overwrite", False):
            folder.reset()
        for note in folder.notices:
            print(f"warning: {note}", file=sys.stderr)
        _check_adopted(folder, args, effort)
        legacy = Path(f"{responses}.cache.sqlite")
        cache_path = Path(args.cache) if getattr(args, "cache", None) else (legacy if legacy.exists() else folder_path / "cache.sqlite")
        try:
            folder.check_config(_fingerprint(args, effort), {**_fingerprint(args, effort), "data": args.data,
                                "media_root": args.media_root}, kind="generate")
            stats = asyncio.run(_generate(args, effort, folder, cache_path, items))
        except ValueError as exc:  # a folder of other settings or a failed write: murgat.cli.main (exit 2 / 5)
            print(f"error: {exc}", file=sys.stderr)
            return 2, {}
        except ExceptionGroup as group:  # a replay miss (exit 3) or a failed write (exit 5) stops the run
            from murgat.cliutil import failure_code

            code = failure_code(group, f" ({responses})")
            if code is None:
                raise
            return code, {}
        ids = {i.id for i in items}
        records = folder.latest_results(want=ids, order=[i.id for i in items])
        table = accuracy_table(records)
        table["judge"] = stats.model_dump()
        table["responses"] = str(responses)
        folder.write_summary(table)
    finally:
        file_lock.release()
        lock.release()
    return 0, table


def _cmd_generate(args: argparse.Namespace) -> int:
    from murgat.engine.preflight import BadMediaRoot, check_media_root, missing_hint
    from murgat.inputs import InputError

    try:
        check_media_root(args.media_root)
        items = _load(args)
    except (InputError, BadMediaRoot, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    code, table = run_generate(args, items, Path(args.out), args.effort)
    if code:
        return code
    out = table["responses"]
    if args.json:
        print(json.dumps(table, indent=2))
    else:
        acc = table["accuracy"]
        print(f"wrote {out}: {table['n']} responses, {table['n_errors']} errors, "
              f"{table['n_posthoc_rejected']} post-hoc rewrites rejected")
        if acc:
            print(f"accuracy {acc['value']:.3f} [{acc['ci_low']:.3f}, {acc['ci_high']:.3f}] on {table['n_with_gold']}")
            for t, row in table["by_type"].items():
                print(f"  {t:<24} n={row['n']:<5} accuracy {row['accuracy']:.3f}")
        if table.get("n_gold_unusable"):
            print(f"  {table['n_gold_unusable']} item(s) have a gold answer that names no option (left out of accuracy)")
        st = table["judge"]
        print(f"model calls {st['calls']}, cache hits {st['cache_hits']}, retries {st['retries']}, cost ${st['cost_usd']:.4f}")
    if table["n_errors"]:
        from murgat.jsonl import read_records

        errors = [r.get("generation_error") for _, r in read_records(Path(out))[0] if isinstance(r, dict)]
        hint = missing_hint([e for e in errors], _place(args))
        if hint:
            print(hint, file=sys.stderr)
        print(f"FAILED: {table['n_errors']} of {table['n']} item(s) have no response (see generation_error in {out}); "
              "rerun with --retry-errors once fixed", file=sys.stderr)
        return 1
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from murgat.generation.sweep import plot_sweep, sweep_table
    from murgat.inputs import InputError
    from murgat.judges.effort import check

    try:
        efforts = [check(e) for e in args.efforts.split(",") if e.strip()]
        items = _load(args)
    except (ValueError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    root = Path(args.out)
    root.mkdir(parents=True, exist_ok=True)
    from murgat.api import score

    rows = []
    for effort in efforts:
        d = root / f"effort-{effort}"
        code, table = run_generate(args, items, d, effort)
        if code:
            return code
        run = score(table["responses"], judge=args.judge, out=d / "run", cache=str(root / "score-cache.sqlite"),
                    media_root=args.media_root, judge_option=list(args.judge_option), json=True)
        if run.exit_code not in (0, 1) or not run.summary:  # 1: scored, with some failed items
            print(f"error: scoring effort {effort} failed (exit {run.exit_code})", file=sys.stderr)
            return run.exit_code or 1
        rows.append({"effort": effort, "summary": run.summary})
    doc = sweep_table(rows)
    from murgat.engine.folder import write_atomic

    write_atomic(root / "sweep.json", json.dumps(doc, indent=2))
    png = plot_sweep(doc, root / "sweep.png")
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    from rich.table import Table

    from murgat.console import console

    t = Table(title=f"{args.model} — {args.mode} — accuracy and MURGAT-S by reasoning effort")
    for col in ("effort", "accuracy [95% CI]", "MURGAT-S [95% CI]", "coverage", "F1", "items", "errors"):
        t.add_column(col)
    for r in doc["rows"]:
        t.add_row(r["effort"], r["accuracy_text"], r["murgat_s_text"], r["coverage_text"], r["f1_text"], str(r["n_items"]),
                  str(r["n_errors"]))
    con = console()
    con.print(t)
    con.print(f"wrote {root / 'sweep.json'} and {png}")
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="murgat JSONL/CSV, videommmu:PATH, nextgqa:PATH or hf:PATH")
    p.add_argument("--model", required=True, help="provider:model, e.g. gemini:gemini-2.5-flash")
    p.add_argument("-M", "--model-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--mode", choices=["base", "cite", "posthoc"], default="cite")
    p.add_argument("--base", default=None, help="posthoc: the base-mode responses file to annotate")
    from murgat.engine import options

    options.add(p, options.Place)
    p.add_argument("--fps", type=float, default=1.0, help="frame rate for providers that take frames")
    p.add_argument("--max-frames", type=int, default=64)
    # the model writes whole reasoning chains: longer answers and timeouts than a judge (role defaults)
    options.add(p, options.Requests, skip=("effort",), defaults={"max_tokens": 4096, "timeout": 300.0})
    options.add(p, options.Selection)
    options.add(p, options.Folder, only=("retry_errors", "print_json"))


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("generate", help="generate (cited) answers with an omni/vision model")
    _common(p)
    from murgat.engine import options

    options.add(p, options.Requests, only=("effort",))
    # responses go to OUT/responses.jsonl; a FILE.jsonl --out (earlier versions) keeps its folder in FILE.run/
    options.add(p, options.Folder, only=("out",), required=("out",))
    options.add(p, options.Folder, only=("cache", "overwrite"))
    from murgat.scaleout import add_executor_options

    add_executor_options(p)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser("sweep", help="generate and score at several reasoning efforts")
    _common(p)
    p.add_argument("--efforts", default="minimal,low,medium,high")
    p.add_argument("--judge", required=True, help="judge for scoring, as for murgat score")
    p.add_argument("-J", "--judge-option", action="append", default=[], metavar="KEY=VALUE")
    from murgat.engine import options

    options.add(p, options.Folder, only=("out",), required=("out",))
    p.set_defaults(func=_cmd_sweep)
