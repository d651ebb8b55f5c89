"""``murgat generate`` and ``murgat sweep``."""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from murgat.judges.effort import arg_type as _effort


def _load(args: argparse.Namespace) -> Any:
    from murgat.cliutil import select_items
    from murgat.generation.datasets import load_dataset

    return select_items(load_dataset(args.data), args.ids, args.limit)


def _missing_report(items: Any, args: argparse.Namespace) -> list[str]:
    from murgat.inputs import MediaOutsideRoot, resolve_media

    missing = []
    for i in items:
        try:
            if resolve_media(i, args.media_root, args.data.split(":", 1)[-1],
                             allow_outside_root=args.allow_media_outside_root) is None:
                missing.append(i.id)
        except MediaOutsideRoot:
            missing.append(i.id)
    if args.media_root is not None and not Path(args.media_root).is_dir():
        print(f"warning: --media-root {args.media_root} does not exist or is not a folder", file=sys.stderr)
    if missing:
        shown = ", ".join(missing[:8]) + (" …" if len(missing) > 8 else "")
        print(f"{len(missing)} of {len(items)} items have no media under {args.media_root}: {shown}", file=sys.stderr)
    return missing


async def _generate(args: argparse.Namespace, effort: str | None, out: Path, cache_path: Path) -> tuple[list[dict], Any]:
    from murgat.generation.generate import generate_all
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache
    from murgat.judges.types import GenerateConfig

    items = _load(args)
    base = None
    if args.mode == "posthoc":
        if not args.base:
            raise ValueError("--mode posthoc needs --base RESPONSES (a base-mode responses file)")
        from murgat.inputs import load_items

        base = {it.id: it.response for it in load_items(args.base)}
    cfg = GenerateConfig(temperature=args.temperature, max_tokens=args.max_tokens, reasoning_effort=effort,
                         concurrency=args.concurrency, timeout_s=args.timeout, retries=args.retries,
                         backoff_max_s=args.backoff_max, max_retry_time_s=args.max_retry_time)
    if getattr(args, "run_on", "local") == "ray":
        from murgat.console import console
        from murgat.judges.base import JudgeStats
        from murgat.scaleout.commands import generate_on_ray

        stats, _report = generate_on_ray(args, items, out, cache_path, cfg, parse_options(args.model_option), base,
                                         console(stderr=True))
        return [], stats or JudgeStats()
    judge = make_judge(args.model, parse_options(args.model_option), cache=ResponseCache(cache_path), config=cfg)
    try:
        recs = await generate_all(judge, items, out, args.mode, cfg, media_root=args.media_root,
                                  input_path=args.data.split(":", 1)[-1], fps=args.fps, max_frames=args.max_frames,
                                  base=base, concurrency=args.concurrency, retry_errors=args.retry_errors,
                                  allow_outside_root=args.allow_media_outside_root)
    finally:
        await judge.aclose()
    return recs, judge.stats


def _all_records(path: Path) -> list[dict[str, Any]]:
    from murgat.jsonl import read_records

    return [rec for _, rec in read_records(path)[0]]


def _cmd_generate(args: argparse.Namespace) -> int:
    from murgat.generation.generate import accuracy_table
    from murgat.inputs import InputError

    try:
        items = _load(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _missing_report(items, args)
    out = Path(args.out)
    from murgat.jsonl import ResultsWriteError
    from murgat.pipeline.rundir import NotWritable, check_writable_dir
    from murgat.runlock import RunLock, RunLocked

    try:
        check_writable_dir(out.parent, "--out")
        lock = RunLock(out, is_dir=False).acquire()
    except (NotWritable, RunLocked) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        _, stats = asyncio.run(_generate(args, args.effort, out, Path(args.cache or f"{out}.cache.sqlite")))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ResultsWriteError as exc:
        print(f"error: {exc}; stopped, records written so far are intact; rerun to resume", file=sys.stderr)
        return 5
    finally:
        lock.release()
    ids = {i.id for i in items}
    table = accuracy_table([r for r in _all_records(out) if r["id"] in ids])
    table["judge"] = stats.model_dump()
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
        print(f"model calls {stats.calls}, cache hits {stats.cache_hits}, retries {stats.retries}, cost ${stats.cost_usd:.4f}")
    if table["n_errors"]:
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
    _missing_report(items, args)
    root = Path(args.out)
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for effort in efforts:
        d = root / f"effort-{effort}"
        responses = d / "responses.jsonl"
        try:
            asyncio.run(_generate(args, effort, responses, root / "generate-cache.sqlite"))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        cmd = [sys.executable, "-m", "murgat", "score", str(responses), "--judge", args.judge, "--out", str(d / "run"),
               "--cache", str(root / "score-cache.sqlite"), "--quiet", "--json"]
        if args.media_root:
            cmd += ["--media-root", args.media_root]
        for opt in args.judge_option:
            cmd += ["-J", opt]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode not in (0, 1) or not proc.stdout.strip():  # 1: scored, with some failed items
            print(f"error: scoring effort {effort} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
            return proc.returncode
        rows.append({"effort": effort, "summary": json.loads(proc.stdout)})
    doc = sweep_table(rows)
    (root / "sweep.json").write_text(json.dumps(doc, indent=2))
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
    p.add_argument("--media-root", default=None)
    p.add_argument("--fps", type=float, default=1.0, help="frame rate for providers that take frames")
    p.add_argument("--max-frames", type=int, default=64)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=4096)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--retries", type=int, default=5)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--ids", default=None)
    p.add_argument("--retry-errors", action="store_true", help="generate again for ids whose record is an error")
    p.add_argument("--backoff-max", type=float, default=60.0, help="longest wait between retries; caps Retry-After")
    p.add_argument("--max-retry-time", type=float, default=900.0, help="most seconds one request may take with retries")
    p.add_argument("--allow-media-outside-root", action="store_true",
                   help="read media wherever the data names it (default: only inside --media-root)")
    p.add_argument("--json", action="store_true")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("generate", help="generate (cited) answers with an omni/vision model")
    _common(p)
    p.add_argument("--effort", default=None, type=_effort, help="none|minimal|low|medium|high|dynamic (mapped per provider)")
    p.add_argument("--out", required=True, help="responses JSONL (appended; rerun resumes)")
    p.add_argument("--cache", default=None, help="response cache (default: OUT.cache.sqlite)")
    from murgat.scaleout import add_executor_options

    add_executor_options(p)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser("sweep", help="generate and score at several reasoning efforts")
    _common(p)
    p.add_argument("--efforts", default="minimal,low,medium,high")
    p.add_argument("--judge", required=True, help="judge for scoring, as for murgat score")
    p.add_argument("-J", "--judge-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out", required=True, help="sweep folder")
    p.set_defaults(func=_cmd_sweep)
