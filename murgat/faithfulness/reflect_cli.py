"""``murgat reflect``: Algorithm 2 over a dataset, with before/after UPR and accuracy.

Output folder::

    OUT/responses.jsonl   final responses (input for ``murgat score`` and ``murgat faithfulness``)
    OUT/traces.jsonl      per item: every checked step, regeneration attempt, verdict, reason, continuation
    OUT/summary.json      UPR and accuracy before vs after (paired bootstrap CIs of the differences),
                          regenerations, successes after 1/2/3 attempts, unresolved, extra calls and cost per item
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any


async def _reflect_all(args: argparse.Namespace, items: list[Any], out: Path) -> dict[str, Any]:
    from murgat.answers import is_correct
    from murgat.faithfulness.label import Labeller
    from murgat.faithfulness.metric import paired_ratio_diff, ratio_ci
    from murgat.faithfulness.records import FaithResult, tally
    from murgat.faithfulness.reflect import Reflector
    from murgat.faithfulness.runner import item_context
    from murgat.faithfulness.shared_cli import _config
    from murgat.generation.generate import generate_one
    from murgat.inputs import load_items
    from murgat.jsonl import append_line, cut_torn_tail, dumps, read_records
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache
    from murgat.metric import paired_bootstrap_diff
    from murgat.pipeline.stages import CallPool
    from murgat.text import preprocess

    cache = ResponseCache(out / "cache.sqlite")
    mopts = parse_options(args.model_option)
    cfg = _config(args, args.model, mopts)
    model = make_judge(args.model, mopts, cache=cache, config=cfg.generate)
    if args.detector == "self":
        detector_judge, variant = model, "vanilla"
    else:
        dopts = parse_options(args.detector_option)
        detector_judge = make_judge(args.detector, dopts, cache=cache, config=cfg.generate)
        variant = args.variant
    pool = CallPool()
    labeller = Labeller(judge=detector_judge, pool=pool, variant=variant, granularity="step", max_frames=args.max_frames)
    reflector = Reflector(model=model, detector=labeller, pool=pool, k=args.k, cite=args.mode == "cite")
    start = {it.id: it.response for it in load_items(args.from_)} if args.from_ else {}
    resp, traces = out / "responses.jsonl", out / "traces.jsonl"
    for p in (resp, traces):
        cut_torn_tail(p)
    done = {str(r["id"]) for _, r in read_records(resp)[0] if isinstance(r, dict)}
    sem = asyncio.Semaphore(max(1, args.item_concurrency))

    async def one(item: Any) -> None:
        async with sem:
            rec: dict[str, Any] = {"id": item.id, "media": item.media, "question": item.question, "options": item.options,
                                   "gold": item.gold, "question_type": item.question_type}
            ctx = await item_context(item, cfg, args.media_root, args.data.split(":", 1)[-1], args.allow_media_outside_root)
            if isinstance(ctx, str):
                rec.update(response="", generation_error=ctx)
                append_line(traces, dumps({"id": item.id, "error": ctx}))
                append_line(resp, dumps(rec))
                return
            original = start.get(item.id)
            if original is None and args.from_:
                rec.update(response="", generation_error="no starting chain for this id in --from")
            elif original is None:
                g = await generate_one(model, item, ctx.media, args.mode, cfg.generate, fps=args.fps)
                if g.get("generation_error"):
                    rec.update(response="", generation_error=g["generation_error"])
                original = g.get("response") or None
            if original is None:
                append_line(traces, dumps({"id": item.id, "error": rec.get("generation_error")}))
                append_line(resp, dumps(rec))
                return
            n0 = len(ctx.calls)
            # "before": every step of the original chain labelled by the detector (per step)
            pre = preprocess(original, len(item.options or []) or 10)
            before_steps, _ = await labeller.segment(pre.reasoning, ctx, "sentences")
            description = await labeller.grounding(ctx)
            await asyncio.gather(*(labeller.label_step(before_steps, i, ctx, item.question or "", description)
                                   for i in range(len(before_steps))))
            before = tally(FaithResult(id=item.id, steps=before_steps))
            n_before_calls = len(ctx.calls) - n0
            trace, final_steps, _answer = await reflector.run(item.id, original, ctx, item.question or "",
                                                             list(item.options or []))
            after = tally(FaithResult(id=item.id, steps=final_steps))
            fpre = preprocess(trace.final, len(item.options or []) or 10)
            rec.update(response=trace.final, original_response=original, predicted_option=fpre.option,
                       reflect={"regenerations": trace.regenerations, "unresolved": trace.unresolved,
                                "resolved_after": trace.resolved_after, "undetermined": trace.undetermined})
            row = {"id": item.id, "trace": trace.model_dump(),
                   "before": {"perception": before.n_perception, "unfaithful": before.n_unfaithful,
                              "undetermined": before.n_undetermined},
                   "after": {"perception": after.n_perception, "unfaithful": after.n_unfaithful,
                             "undetermined": after.n_undetermined},
                   "correct_before": is_correct(pre.option, item.gold, item.options),
                   "correct_after": is_correct(fpre.option, item.gold, item.options),
                   "calls_before_labelling": n_before_calls, "extra_calls": trace.calls,
                   "cost_usd": sum(c.cost_usd for c in ctx.calls if not c.cached)}
            if row["correct_after"] is not None:
                rec["correct"] = row["correct_after"]
            append_line(traces, dumps(row))
            append_line(resp, dumps(rec))

    async with asyncio.TaskGroup() as tg:
        for it in items:
            if it.id not in done:
                tg.create_task(one(it))
    for j in {id(j): j for j in (model, detector_judge)}.values():
        await j.aclose()
    cache.close()
    ids = {it.id for it in items}
    rows = [r for _, r in read_records(traces)[0] if isinstance(r, dict) and r.get("id") in ids and "trace" in r]
    rows.sort(key=lambda r: r["id"])
    pb = [(r["before"]["unfaithful"], r["before"]["perception"]) for r in rows]
    pa = [(r["after"]["unfaithful"], r["after"]["perception"]) for r in rows]
    gold = [r for r in rows if r["correct_before"] is not None]
    resolved: dict[str, int] = {}
    for r in rows:
        for k, v in r["trace"]["resolved_after"].items():
            resolved[k] = resolved.get(k, 0) + v
    n = len(rows)
    return {
        "items": len(ids), "reflected": n, "errors": len(ids) - n,
        "upr_before": ratio_ci([u for u, _ in pb], [p for _, p in pb]).model_dump(),
        "upr_after": ratio_ci([u for u, _ in pa], [p for _, p in pa]).model_dump(),
        "upr_difference": paired_ratio_diff(pb, pa).model_dump(),
        "accuracy_before": (sum(1 for r in gold if r["correct_before"]) / len(gold)) if gold else None,
        "accuracy_after": (sum(1 for r in gold if r["correct_after"]) / len(gold)) if gold else None,
        "accuracy_difference": paired_bootstrap_diff([1.0 if r["correct_before"] else 0.0 for r in gold],
                                                     [1.0 if r["correct_after"] else 0.0 for r in gold]).model_dump()
        if gold else None,
        "regenerations_invoked": sum(r["trace"]["regenerations"] for r in rows),
        "resolved_after_attempts": dict(sorted(resolved.items())),
        "unresolved": sum(r["trace"]["unresolved"] for r in rows),
        "undetermined_steps": sum(r["trace"]["undetermined"] for r in rows),
        "extra_calls_per_item": (sum(r["extra_calls"] for r in rows) / n) if n else 0.0,
        "labelling_calls_per_item": (sum(r["calls_before_labelling"] for r in rows) / n) if n else 0.0,
        "cost_usd_per_item": (sum(r["cost_usd"] for r in rows) / n) if n else 0.0,
        "k": args.k, "detector": args.detector, "detector_variant": variant,
    }


def _cmd_reflect(args: argparse.Namespace) -> int:
    from murgat.cliutil import failure_code, take_output
    from murgat.faithfulness.shared_cli import _select
    from murgat.generation.datasets import load_dataset
    from murgat.inputs import InputError

    try:
        items = _select(load_dataset(args.data), args)
    except (ValueError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    lock = take_output(out)
    if lock is None:
        return 2
    try:
        try:
            doc = asyncio.run(_reflect_all(args, items, out))
        except (ExceptionGroup, ValueError, FileNotFoundError) as exc:
            code = failure_code(exc)
            if code is None:
                raise
            return code
        (out / "summary.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
        from murgat.jsonl import read_records
        from murgat.viewer.steps import reflect_report

        ids = {it.id for it in items}
        traces = [r for _, r in read_records(out / "traces.jsonl")[0] if isinstance(r, dict) and r.get("id") in ids]
        recs = {str(r["id"]): r for _, r in read_records(out / "responses.jsonl")[0] if isinstance(r, dict)}
        reflect_report(out / "report.html", traces, recs, doc, args.media_root)
        if args.json:
            print(json.dumps(doc, indent=2, sort_keys=True))
        else:
            _print(doc)
        if doc["errors"]:
            print(f"FAILED: {doc['errors']} of {doc['items']} item(s) could not be reflected (see traces.jsonl)",
                  file=sys.stderr)
            return 1
        return 0
    finally:
        lock.release()


def _print(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from murgat.console import console
    from murgat.faithfulness.shared_cli import _pct

    t = Table(title=f"murgat reflect (K = {doc['k']}, detector {doc['detector']})")
    t.add_column("measure")
    t.add_column("before")
    t.add_column("after")
    t.add_column("difference (95% CI)")
    t.add_row("UPR", _pct(doc["upr_before"]), _pct(doc["upr_after"]), _pct(doc["upr_difference"]))
    if doc["accuracy_before"] is not None:
        t.add_row("accuracy", f"{doc['accuracy_before']:.1%}", f"{doc['accuracy_after']:.1%}",
                  _pct(doc["accuracy_difference"]))
    console().print(t)
    console().print(f"regenerations {doc['regenerations_invoked']} · resolved after attempts "
                    f"{doc['resolved_after_attempts']} · unresolved {doc['unresolved']} · extra calls/item "
                    f"{doc['extra_calls_per_item']:.1f} · cost/item ${doc['cost_usd_per_item']:.4f}")


def register_reflect(sub: argparse._SubParsersAction, common: Any) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("reflect", help="self-reflection: regenerate the first unfaithful perception step (≤ K tries), "
                                       "continue, repeat (Algorithm 2)")
    p.add_argument("data", help="questions: murgat JSONL/CSV, videommmu:PATH, nextgqa:PATH or hf:PATH")
    p.add_argument("--model", required=True, help="provider:model that writes, regenerates and continues chains")
    p.add_argument("-M", "--model-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--detector", required=True, help="provider:model of the step checker, or 'self'")
    p.add_argument("-D", "--detector-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--k", type=int, default=3, help="regeneration attempts per unfaithful step")
    p.add_argument("--from", dest="from_", default=None, metavar="RESPONSES",
                   help="start from these responses instead of generating chains")
    p.add_argument("--mode", choices=["base", "cite"], default="base", help="chains with or without citations")
    p.add_argument("--out", required=True)
    common(p)
    p.set_defaults(func=_cmd_reflect)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from murgat.faithfulness.shared_cli import _common

    register_reflect(sub, _common)
