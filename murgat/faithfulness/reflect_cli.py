"""``murgat reflect``: Algorithm 2 over a dataset, with before/after UPR and accuracy.

Output folder::

    OUT/responses.jsonl   final responses (input for ``murgat score`` and ``murgat faithfulness``)
    OUT/traces.jsonl      per item: every checked step, regeneration attempt, verdict, reason, continuation
    OUT/summary.json      UPR (measured by --judge) and accuracy before vs after (paired bootstrap CIs of the
                          differences), the detector's own view, regenerations, successes after 1/2/3 attempts,
                          unresolved, extra calls and cost per item
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any


async def _reflect_all(args: argparse.Namespace, items: list[Any], out: Path) -> dict[str, Any]:
    from murgat.faithfulness.cli import _config
    from murgat.faithfulness.label import STEP_PROMPTS, Labeller
    from murgat.faithfulness.metric import summarize_reflection
    from murgat.faithfulness.reflect import Reflector, reflect_item
    from murgat.faithfulness.runner import item_context
    from murgat.generation.generate import generate_one
    from murgat.inputs import load_items
    from murgat.jsonl import append_line, cut_torn_tail, dumps, read_records
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache
    from murgat.pipeline.runner import gold_letter
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
    judge_note = None
    if args.judge:
        judge = make_judge(args.judge, parse_options(args.judge_option), cache=cache, config=cfg.generate)
    else:
        judge = detector_judge
        judge_note = (f"--judge not given: before/after UPR are measured by the detector's judge ({args.detector}"
                      + (", i.e. the model grading itself" if args.detector == "self" else "")
                      + "), the one that drove the regenerations — not an independent measurement")
        print(f"warning: {judge_note}", file=sys.stderr)
    pool = CallPool()
    labeller = Labeller(judge=detector_judge, pool=pool, variant=variant, granularity="step", max_frames=args.max_frames,
                        step_prompt=STEP_PROMPTS[args.detector_prompt])
    judge_labeller = Labeller(judge=judge, pool=pool, variant=args.variant, granularity=args.granularity,
                              max_frames=args.max_frames)
    reflector = Reflector(model=model, detector=labeller, pool=pool, k=args.k, cite=args.mode == "cite",
                          max_regenerations=args.max_regenerations, max_steps=args.max_steps)
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
            row, trace = await reflect_item(item.id, original, ctx, reflector, judge_labeller, item.question or "",
                                            list(item.options or []))
            pre = preprocess(original, len(item.options or []) or 10)
            gl = gold_letter(item)
            fpre = preprocess(trace.final, len(item.options or []) or 10)
            rec.update(response=trace.final, original_response=original, predicted_option=fpre.option,
                       reflect={"regenerations": trace.regenerations, "unresolved": trace.unresolved,
                                "resolved_after": trace.resolved_after, "undetermined": trace.undetermined,
                                "stopped": trace.stopped})
            row.update(correct_before=None if gl is None else pre.option == gl,
                       correct_after=None if gl is None else fpre.option == gl)
            if gl is not None:
                rec["correct"] = row["correct_after"]
            append_line(traces, dumps(row))
            append_line(resp, dumps(rec))

    async with asyncio.TaskGroup() as tg:
        for it in items:
            if it.id not in done:
                tg.create_task(one(it))
    for j in {id(j): j for j in (model, detector_judge, judge)}.values():
        await j.aclose()
    cache.close()
    ids = {it.id for it in items}
    rows = [r for _, r in read_records(traces)[0] if isinstance(r, dict) and r.get("id") in ids and "trace" in r]
    rows.sort(key=lambda r: r["id"])
    return {**summarize_reflection(rows, len(ids), args.bootstrap, args.seed),
        "k": args.k, "detector": args.detector, "detector_variant": variant,
        "detector_prompt": args.detector_prompt, "max_regenerations": args.max_regenerations,
        "max_steps": args.max_steps,
        "measured_by": {"judge": args.judge or args.detector, "note": judge_note,
                        # the same provider:model as the detector (or, for 'self', the model) is not independent
                        "independent": args.judge not in (None, args.detector, args.model if args.detector == "self"
                                                          else None),
                        "variant": args.variant, "granularity": args.granularity}}


def _cmd_reflect(args: argparse.Namespace) -> int:
    from murgat.cliutil import failure_code, take_output
    from murgat.faithfulness.cli import _select
    from murgat.generation.datasets import load_dataset
    from murgat.inputs import InputError

    if args.k < 1 or args.max_steps < 1 or args.max_regenerations < 0:
        print("error: --k and --max-steps must be at least 1 and --max-regenerations at least 0", file=sys.stderr)
        return 2
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
    from murgat.faithfulness.cli import _pct

    t = Table(title=f"murgat reflect (K = {doc['k']}, detector {doc['detector']})")
    t.add_column("measure")
    t.add_column("before")
    t.add_column("after")
    t.add_column("difference (95% CI)")
    who = doc["measured_by"]["judge"] + ("" if doc["measured_by"]["independent"] else ", not independent")
    t.add_row(f"UPR (judge: {who})", _pct(doc["upr_before"]), _pct(doc["upr_after"]), _pct(doc["upr_difference"]))
    dv = doc.get("detector_view")
    if dv:
        t.add_row("UPR (detector's own verdicts)", _pct(dv["upr_before"]), _pct(dv["upr_after"]),
                  _pct(dv["upr_difference"]))
    if doc["accuracy_before"] is not None:
        t.add_row("accuracy", f"{doc['accuracy_before']:.1%}", f"{doc['accuracy_after']:.1%}",
                  _pct(doc["accuracy_difference"]))
    console().print(t)
    console().print(f"regenerations {doc['regenerations_invoked']} · resolved after attempts "
                    f"{doc['resolved_after_attempts']} · unresolved {doc['unresolved']} · undetermined checks "
                    f"{doc['undetermined_steps']} · extra calls/item "
                    f"{doc['extra_calls_per_item']:.1f} · cost/item ${doc['cost_usd_per_item']:.4f}")


def register_reflect(sub: argparse._SubParsersAction, common: Any) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("reflect", help="self-reflection: regenerate the first unfaithful perception step (≤ K tries), "
                                       "continue, repeat (Algorithm 2)")
    p.add_argument("data", help="questions: murgat JSONL/CSV, videommmu:PATH, nextgqa:PATH or hf:PATH")
    p.add_argument("--model", required=True, help="provider:model that writes, regenerates and continues chains")
    p.add_argument("-M", "--model-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--detector", required=True, help="provider:model of the step checker, or 'self'")
    p.add_argument("-D", "--detector-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--detector-prompt", choices=["detect", "label"], default="detect",
                   help="detect: question-aware, flags only errors that matter to the question (default); "
                        "label: the labelling prompt of 'murgat faithfulness'")
    p.add_argument("--judge", default=None, help="provider:model that measures UPR before/after (independent "
                                                 "labeller; default: the detector, with a warning)")
    p.add_argument("-J", "--judge-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--k", type=int, default=3, help="regeneration attempts per unfaithful step")
    p.add_argument("--max-regenerations", type=int, default=15,
                   help="regeneration attempts per item, all steps together (later unfaithful steps are left as they are)")
    p.add_argument("--max-steps", type=int, default=100,
                   help="steps checked per item, continuations included (later steps are kept unchecked)")
    p.add_argument("--from", dest="from_", default=None, help="start from these responses instead of generating chains")
    p.add_argument("--mode", choices=["base", "cite"], default="base", help="chains with or without citations")
    p.add_argument("--out", required=True)
    common(p)
    p.set_defaults(func=_cmd_reflect)
