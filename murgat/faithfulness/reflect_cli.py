"""``murgat reflect``: Algorithm 2 over a dataset, with before/after UPR and accuracy.

A run folder of kind ``reflect`` (:mod:`murgat.engine`), resumable like every command's::

    OUT/config.json       kind and settings (model, detector, its prompt, judge, K, caps, …); other ones are refused
    OUT/results.jsonl     one line per item: {id, record, trace} — the only file the engine appends to
    OUT/responses.jsonl   final responses (input for ``murgat score`` and ``murgat faithfulness``), input order
    OUT/traces.jsonl      per item: every checked step, regeneration attempt, verdict, reason, continuation
    OUT/cache.sqlite      every model, detector and judge answer
    OUT/summary.json      UPR (measured by --judge) and accuracy before vs after (paired bootstrap CIs of the
                          differences), the detector's own view, regenerations, successes after 1/2/3 attempts,
                          unresolved, extra calls and cost per item

``responses.jsonl`` and ``traces.jsonl`` are exported from ``results.jsonl`` at the end of each run
(:class:`~murgat.engine.folder.PairFolder`): a crash between two appends can no longer leave an
item in one and not the other. ``--retry-errors`` does failed items again, ``--overwrite``
starts over (the cache stays), an edited question or replaced video is redone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from murgat.faithfulness.reflect_task import ReflectTask, build_roles


def _fingerprint(args: argparse.Namespace) -> dict[str, Any]:
    from media.cache import file_digest
    from murgat.judges import parse_options

    return {"model": args.model, "model_options": parse_options(args.model_option), "detector": args.detector,
            "detector_options": parse_options(args.detector_option), "detector_prompt": args.detector_prompt,
            "judge": args.judge, "judge_options": parse_options(args.judge_option), "k": args.k,
            "max_regenerations": args.max_regenerations, "max_steps": args.max_steps, "mode": args.mode,
            "from": file_digest(Path(args.from_)) if args.from_ else None, "variant": args.variant,
            "granularity": args.granularity, "fps": args.fps, "max_frames": args.max_frames,
            "evidence_text": args.evidence_text, "temperature": args.temperature, "max_tokens": args.max_tokens,
            "effort": args.effort}


async def _reflect_all(args: argparse.Namespace, items: list[Any], folder: Any) -> dict[str, Any]:
    from murgat.engine.loop import plan, run_items
    from murgat.engine.preflight import MediaPlace
    from murgat.faithfulness.label import STEP_PROMPTS
    from murgat.faithfulness.metric import summarize_reflection
    from murgat.faithfulness.shared_cli import _config
    from murgat.inputs import load_items
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache

    cache = ResponseCache(Path(args.cache) if args.cache else folder.path / "cache.sqlite")
    cfg = _config(args, args.model, parse_options(args.model_option))
    if not args.judge:
        print(f"warning: {judge_note(args)}", file=sys.stderr)
    start = {it.id: it.response for it in load_items(args.from_)} if args.from_ else None
    place = MediaPlace.of(args)
    judges: list[Any] = []

    def judge(spec: str, options: dict[str, Any], config: Any) -> Any:
        j = make_judge(spec, options, cache=cache, config=config)
        judges.append(j)
        return j

    try:
        roles = build_roles(_settings(args, cfg), judge)
        # a judge that cannot do its part (the embedded judge cannot write or label chains) is
        # refused before any work, as in 'murgat faithfulness'
        why = (roles.model.refusal("reflect_regenerate")
               or roles.reflector.detector.judge.refusal(STEP_PROMPTS[args.detector_prompt])
               or roles.judge.judge.refusal(f"faith_{args.granularity}"))
        if why:
            raise ValueError(why)
    except (ValueError, FileNotFoundError, ImportError):
        cache.discard()  # a bad model spec leaves no cache.sqlite behind
        raise
    task = ReflectTask(roles, cfg, place, mode=args.mode, fps=args.fps, start=start)
    todo = plan(task, items, folder, args.retry_errors).todo
    order = [it.id for it in items]
    try:
        if getattr(args, "run_on", "local") == "ray":
            _on_ray(args, cfg, place, start, todo, folder, items)
        else:
            await run_items(task, todo, folder, concurrency=args.item_concurrency)
    finally:
        folder.export(order)
        for j in {id(j): j for j in judges}.values():
            await j.aclose()
        cache.close()
    ids = set(order)
    rows = [r["trace"] for r in folder.latest_results(want=ids, order=order) if "trace" in r.get("trace", {})]
    variant = "vanilla" if args.detector == "self" else args.variant
    return {**summarize_reflection(rows, len(ids), args.bootstrap, args.seed),
            "k": args.k, "detector": args.detector, "detector_variant": variant,
            "detector_prompt": args.detector_prompt, "max_regenerations": args.max_regenerations,
            "max_steps": args.max_steps,
            "measured_by": {"judge": args.judge or args.detector, "note": None if args.judge else judge_note(args),
                            # the same provider:model as the detector (or, for 'self', the model) is not independent
                            "independent": args.judge not in (None, args.detector, args.model if args.detector == "self"
                                                              else None),
                            "variant": args.variant, "granularity": args.granularity}}


def judge_note(args: argparse.Namespace) -> str:
    return (f"--judge not given: before/after UPR are measured by the detector's judge ({args.detector}"
            + (", i.e. the model grading itself" if args.detector == "self" else "")
            + "), the one that drove the regenerations — not an independent measurement")


def _settings(args: argparse.Namespace, cfg: Any) -> dict[str, Any]:
    """What a reflect task is built from (here, or in a Ray worker)."""
    from murgat.judges import parse_options

    return {"config": cfg.model_dump(mode="json"), "model": args.model, "model_options": parse_options(args.model_option),
            "detector": args.detector, "detector_options": parse_options(args.detector_option),
            "detector_prompt": args.detector_prompt, "judge": args.judge, "judge_options": parse_options(args.judge_option),
            "variant": args.variant, "granularity": args.granularity, "max_frames": args.max_frames, "k": args.k,
            "mode": args.mode, "max_regenerations": args.max_regenerations, "max_steps": args.max_steps}


def _on_ray(args: argparse.Namespace, cfg: Any, place: Any, start: dict[str, str] | None, todo: list[Any], folder: Any,
            items: list[Any]) -> None:
    from murgat.console import console
    from murgat.scaleout.tasks import TaskSpec, run_on_ray

    place = place.resolved()
    task = ReflectTask(None, cfg, place, mode=args.mode, fps=args.fps, start=start)
    spec = TaskSpec("murgat.faithfulness.reflect_task:ray_task", {
        **_settings(args, cfg), "place": place.to_json(), "fps": args.fps,
        "start": {it.id: start[it.id] for it in todo if start and it.id in start} if start is not None else None},
        concurrency=args.item_concurrency, transcribes=cfg.evidence.text)
    run_on_ray(spec, task, todo, folder, args, label="reflect", total=len(items), con=console(stderr=True),
               cache_path=Path(args.cache) if args.cache else folder.path / "cache.sqlite")


def _cmd_reflect(args: argparse.Namespace) -> int:
    from murgat.cliutil import failure_code, take_output
    from murgat.engine.folder import PairFolder
    from murgat.engine.preflight import BadMediaRoot, check_media_root
    from murgat.faithfulness.shared_cli import _select
    from murgat.generation.datasets import load_dataset
    from murgat.inputs import InputError

    try:
        check_media_root(args.media_root)
        items = _select(load_dataset(args.data), args)
    except (ValueError, InputError, BadMediaRoot) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    from murgat.engine.folder import refuse_own_outputs

    refuse_own_outputs([args.data, args.from_], [out / "responses.jsonl", out / "traces.jsonl", out / "results.jsonl"])
    lock = take_output(out)
    if lock is None:
        return 2
    try:
        folder = PairFolder(out)
        if args.overwrite:
            folder.reset()
            for name in ("responses.jsonl", "traces.jsonl"):
                (out / name).unlink(missing_ok=True)
        for note in folder.notices:
            print(f"warning: {note}", file=sys.stderr)
        try:
            fp = _fingerprint(args)
            folder.check_config(fp, {**fp, "data": args.data, "media_root": args.media_root}, kind="reflect")
            doc = asyncio.run(_reflect_all(args, items, folder))
        except (ExceptionGroup, ValueError, FileNotFoundError, OSError) as exc:
            code = failure_code(exc)
            if code is None:
                raise
            return code
        folder.write_summary(doc)
        from murgat.viewer.steps import reflect_report

        ids = {it.id for it in items}
        rows = folder.latest_results(want=ids, order=[it.id for it in items])
        reflect_report(out / "report.html", [r["trace"] for r in rows], {r["id"]: r["record"] for r in rows}, doc,
                       args.media_root)
        if args.json:
            print(json.dumps(doc, indent=2, sort_keys=True))
        else:
            _print(doc)
        if doc["errors"]:
            print(f"FAILED: {doc['errors']} of {doc['items']} item(s) could not be reflected (see traces.jsonl); "
                  "rerun with --retry-errors once fixed", file=sys.stderr)
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
    p.add_argument("--from", dest="from_", default=None, metavar="RESPONSES",
                   help="start from these responses instead of generating chains")
    p.add_argument("--mode", choices=["base", "cite"], default="base", help="chains with or without citations")
    from murgat.engine import options

    options.add(p, options.Folder, only=("out", "cache", "retry_errors", "overwrite"), required=("out",))
    common(p, segmentation=False)
    from murgat.scaleout import add_executor_options

    add_executor_options(p)
    p.set_defaults(func=_cmd_reflect)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from murgat.faithfulness.shared_cli import _common

    register_reflect(sub, _common)
