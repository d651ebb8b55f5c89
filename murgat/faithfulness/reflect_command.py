"""What ``murgat reflect`` does: Algorithm 2 over a dataset, with before/after UPR and accuracy.

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

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from murgat.faithfulness.reflect_task import ReflectTask, build_roles
from murgat.faithfulness.settings import ReflectSettings


def _fingerprint(s: ReflectSettings) -> dict[str, Any]:
    from media.cache import file_digest
    from murgat.judges import parse_options

    return {"model": s.model, "model_options": parse_options(s.model_option), "detector": s.detector,
            "detector_options": parse_options(s.detector_option), "detector_prompt": s.detector_prompt,
            "judge": s.judge, "judge_options": parse_options(s.judge_option), "k": s.k,
            "max_regenerations": s.max_regenerations, "max_steps": s.max_steps, "mode": s.mode,
            "from": file_digest(Path(s.from_)) if s.from_ else None, "variant": s.variant,
            "granularity": s.granularity, "fps": s.fps, "max_frames": s.max_frames,
            "evidence_text": s.evidence_text, "temperature": s.temperature, "max_tokens": s.max_tokens,
            "effort": s.effort}


async def _reflect_all(s: ReflectSettings, items: list[Any], folder: Any) -> dict[str, Any]:
    from murgat.engine.loop import plan, run_items
    from murgat.engine.preflight import MediaPlace
    from murgat.faithfulness.label import STEP_PROMPTS
    from murgat.faithfulness.metric import summarize_reflection
    from murgat.faithfulness.shared import _config
    from murgat.inputs import load_items
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache

    cache = ResponseCache(s.cache_path())
    cfg = _config(s, s.model, parse_options(s.model_option))
    if not s.judge:
        print(f"warning: {judge_note(s)}", file=sys.stderr)
    start = {it.id: it.response for it in load_items(s.from_)} if s.from_ else None
    place = MediaPlace.of(s)
    judges: list[Any] = []

    def judge(spec: str, options: dict[str, Any], config: Any) -> Any:
        j = make_judge(spec, options, cache=cache, config=config)
        judges.append(j)
        return j

    try:
        roles = build_roles(_settings(s, cfg), judge)
        # a judge that cannot do its part (the embedded judge cannot write or label chains) is
        # refused before any work, as in 'murgat faithfulness'
        why = (roles.model.refusal("reflect_regenerate")
               or roles.reflector.detector.judge.refusal(STEP_PROMPTS[s.detector_prompt])
               or roles.judge.judge.refusal(f"faith_{s.granularity}"))
        if why:
            raise ValueError(why)
    except (ValueError, FileNotFoundError, ImportError):
        cache.discard()  # a bad model spec leaves no cache.sqlite behind
        raise
    task = ReflectTask(roles, cfg, place, mode=s.mode, fps=s.fps, start=start)
    todo = plan(task, items, folder, s.retry_errors).todo
    order = [it.id for it in items]
    try:
        if s.run_on == "ray":
            _on_ray(s, cfg, place, start, todo, folder, items)
        else:
            from murgat.engine.progress import item_progress

            with item_progress("reflect", disable=s.quiet or s.print_json) as progress:
                bar = progress.add_task("items", total=len(items), completed=len(items) - len(todo))
                await run_items(task, todo, folder, concurrency=s.item_concurrency or 8,
                                on_item=lambda _r: progress.advance(bar))
    finally:
        folder.export(order)
        for j in {id(j): j for j in judges}.values():
            await j.aclose()
        cache.close()
    ids = set(order)
    rows = [r["trace"] for r in folder.latest_results(want=ids, order=order) if "trace" in r.get("trace", {})]
    variant = "vanilla" if s.detector == "self" else s.variant
    return {**summarize_reflection(rows, len(ids), s.bootstrap, s.seed),
            "k": s.k, "detector": s.detector, "detector_variant": variant,
            "detector_prompt": s.detector_prompt, "max_regenerations": s.max_regenerations,
            "max_steps": s.max_steps,
            "measured_by": {"judge": s.judge or s.detector, "note": None if s.judge else judge_note(s),
                            # the same provider:model as the detector (or, for 'self', the model) is not independent
                            "independent": s.judge not in (None, s.detector, s.model if s.detector == "self"
                                                              else None),
                            "variant": s.variant, "granularity": s.granularity}}


def judge_note(s: ReflectSettings) -> str:
    """Why UPR before/after is not an independent measurement when ``--judge`` is not given."""
    return (f"--judge not given: before/after UPR are measured by the detector's judge ({s.detector}"
            + (", i.e. the model grading itself" if s.detector == "self" else "")
            + "), the one that drove the regenerations — not an independent measurement")


def _settings(s: ReflectSettings, cfg: Any) -> dict[str, Any]:
    """What a reflect task is built from (here, or in a Ray worker)."""
    from murgat.judges import parse_options

    return {"config": cfg.model_dump(mode="json"), "model": s.model, "model_options": parse_options(s.model_option),
            "detector": s.detector, "detector_options": parse_options(s.detector_option),
            "detector_prompt": s.detector_prompt, "judge": s.judge, "judge_options": parse_options(s.judge_option),
            "variant": s.variant, "granularity": s.granularity, "max_frames": s.max_frames, "k": s.k,
            "mode": s.mode, "max_regenerations": s.max_regenerations, "max_steps": s.max_steps}


def _on_ray(s: ReflectSettings, cfg: Any, place: Any, start: dict[str, str] | None, todo: list[Any], folder: Any,
            items: list[Any]) -> None:
    from murgat.console import console
    from murgat.scaleout.tasks import TaskSpec, run_on_ray

    place = place.resolved()
    task = ReflectTask(None, cfg, place, mode=s.mode, fps=s.fps, start=start)
    spec = TaskSpec("murgat.faithfulness.reflect_task:ray_task", {
        **_settings(s, cfg), "place": place.to_json(), "fps": s.fps,
        "start": {it.id: start[it.id] for it in todo if start and it.id in start} if start is not None else None},
        concurrency=s.item_concurrency, transcribes=cfg.evidence.text)
    run_on_ray(spec, task, todo, folder, s, label="reflect", total=len(items), con=console(stderr=True),
               cache_path=s.cache_path())


def run_reflect(s: ReflectSettings, *, echo: bool = True) -> int:
    """``murgat reflect``: reflect every item, write the folder and summary; the exit status."""
    from murgat.engine.folder import PairFolder
    from murgat.engine.guards import exit_code_of, take_output
    from murgat.engine.preflight import BadMediaRoot, check_media_root
    from murgat.faithfulness.shared import _select
    from murgat.generation.datasets import load_dataset
    from murgat.inputs import InputError

    try:
        check_media_root(s.media_root)
        items = _select(load_dataset(s.data), s)
    except (ValueError, InputError, BadMediaRoot) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(s.out)
    from murgat.engine.folder import refuse_own_outputs

    refuse_own_outputs([s.data, s.from_], [out / "responses.jsonl", out / "traces.jsonl", out / "results.jsonl"])
    lock = take_output(out)
    if lock is None:
        return 2
    try:
        folder = PairFolder(out)
        if s.overwrite:
            folder.reset()
            for name in ("responses.jsonl", "traces.jsonl"):
                (out / name).unlink(missing_ok=True)
        for note in folder.notices:
            print(f"warning: {note}", file=sys.stderr)
        try:
            fp = _fingerprint(s)
            folder.check_config(fp, {**fp, "data": s.data, "media_root": s.media_root}, kind="reflect")
            doc = asyncio.run(_reflect_all(s, items, folder))
        except (ExceptionGroup, ValueError, FileNotFoundError, OSError) as exc:
            return exit_code_of(exc)
        folder.write_summary(doc)
        from murgat.viewer.steps import reflect_report

        ids = {it.id for it in items}
        rows = folder.latest_results(want=ids, order=[it.id for it in items])
        reflect_report(out / "report.html", [r["trace"] for r in rows], {r["id"]: r["record"] for r in rows}, doc,
                       s.media_root)
        if echo and s.print_json:
            print(json.dumps(doc, indent=2, sort_keys=True))
        elif echo:
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
    from murgat.faithfulness.shared import _pct

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


