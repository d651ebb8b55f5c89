"""What ``murgat generate`` and ``murgat sweep`` do, given their settings
(:mod:`murgat.generation.settings`): the one implementation behind the command line and
``murgat.generate(...)``/``murgat.sweep(...)``. ``sweep`` scores each effort with the score
command's own function, in this process."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from murgat.engine.preflight import MediaPlace
from murgat.generation.settings import GenerateSettings, SweepSettings


def _load(s: GenerateSettings | SweepSettings) -> list[Any]:
    from murgat.engine.guards import select_items
    from murgat.generation.datasets import load_dataset

    return select_items(load_dataset(s.data), s.ids, s.limit)


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



def _fingerprint(s: GenerateSettings | SweepSettings, effort: str | None) -> dict[str, Any]:
    from murgat.judges import parse_options

    return {"model": s.model, "options": parse_options(s.model_option), "mode": s.mode,
            "generate": s.generate_config(effort).cache_fields(), "fps": s.fps, "max_frames": s.max_frames,
            "base": str(Path(s.base).resolve()) if s.base else None}


async def _generate(s: GenerateSettings | SweepSettings, effort: str | None, folder: Any, cache_path: Path,
                    items: list[Any]) -> Any:
    from murgat.generation.generate import generate_all
    from murgat.judges import make_judge, parse_options
    from murgat.judges.cache import ResponseCache

    base = None
    if s.mode == "posthoc":
        if not s.base:
            raise ValueError("--mode posthoc needs --base RESPONSES (a base-mode responses file)")
        from murgat.inputs import load_items

        base = {it.id: it.response for it in load_items(s.base)}
    cfg = s.generate_config(effort)
    if s.run_on == "ray":
        from murgat.console import console
        from murgat.engine.loop import plan
        from murgat.generation.generate import GenerateTask
        from murgat.judges.base import JudgeStats
        from murgat.scaleout.driver import summed_stats
        from murgat.scaleout.tasks import TaskSpec, run_on_ray

        place = MediaPlace.of(s).resolved()
        task = GenerateTask(None, s.mode, cfg, place, fps=s.fps, max_frames=s.max_frames, base=base,
                            model=s.model)
        todo = plan(task, items, folder, s.retry_errors).todo
        spec = TaskSpec("murgat.generation.generate:ray_task", {
            "config": cfg.model_dump(mode="json"), "model": s.model, "options": parse_options(s.model_option),
            "mode": s.mode, "place": place.to_json(), "fps": s.fps, "max_frames": s.max_frames,
            "base": {it.id: base[it.id] for it in todo if base and it.id in base}}, concurrency=s.item_concurrency or 8)
        try:
            report = run_on_ray(spec, task, todo, folder, s, label="generate", total=len(items),
                                con=console(stderr=True), cache_path=cache_path)
        finally:
            folder.compact([it.id for it in items])
        _, _, totals = summed_stats(report)
        return next(iter(totals.values()), None) or JudgeStats()
    cache = ResponseCache(cache_path)
    try:
        judge = make_judge(s.model, parse_options(s.model_option), cache=cache, config=cfg)
    except (ValueError, FileNotFoundError, ImportError):
        cache.discard()
        raise
    from murgat.engine.progress import item_progress

    progress = item_progress(f"generate{f' ({effort})' if effort else ''}", disable=s.quiet or s.print_json)
    try:
        with progress:
            bar = progress.add_task("items", total=len(items))
            await generate_all(judge, items, folder, s.mode, cfg, place=MediaPlace.of(s), fps=s.fps,
                               max_frames=s.max_frames, base=base, concurrency=s.item_concurrency or 8,
                               retry_errors=s.retry_errors, on_item=lambda _r: progress.advance(bar))
    finally:
        await judge.aclose()
        cache.close()
    return judge.stats


def _check_adopted(folder: Any, s: GenerateSettings | SweepSettings, effort: str | None) -> None:
    """A responses file from before run folders (no config.json yet) is adopted only when its records
    were made by this model, mode and effort (each record names them): otherwise one file would mix
    two settings under one accuracy."""
    from murgat.engine.folder import RunConfigMismatch

    if folder.config_path.exists():
        return
    for r in folder.latest_results(slim=True):
        made = (r.get("model"), r.get("mode"), r.get("effort"))
        if made[0] not in (None, s.model) or made[1] not in (None, s.mode) or made[2] not in (None, effort):
            raise RunConfigMismatch(f"{folder.results_path} holds responses of {made[0]} (mode {made[1]}, effort "
                                    f"{made[2]}), not of {s.model} (mode {s.mode}, effort {effort}); use another "
                                    "--out, or --overwrite")


def run_generate(s: GenerateSettings | SweepSettings, items: list[Any], out: Path, effort: str | None) -> tuple[int, dict[str, Any]]:
    """Generate into the run folder of ``out`` (lock, config, resume, summary); (exit code, summary)."""
    from murgat.engine.folder import RunFolder, refuse_own_outputs
    from murgat.engine.guards import take_output
    from murgat.generation.generate import accuracy_table

    folder_path, responses = output_paths(out)
    refuse_own_outputs([s.data, s.base], [responses])
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
        if s.overwrite:
            folder.reset()
        for note in folder.notices:
            print(f"warning: {note}", file=sys.stderr)
        _check_adopted(folder, s, effort)
        legacy = Path(f"{responses}.cache.sqlite")
        cache_path = Path(s.cache) if s.cache else (legacy if legacy.exists() else folder_path / "cache.sqlite")
        try:
            folder.check_config(_fingerprint(s, effort), {**_fingerprint(s, effort), "data": s.data,
                                "media_root": s.media_root}, kind="generate")
            stats = asyncio.run(_generate(s, effort, folder, cache_path, items))
        except ValueError as exc:  # bad settings (posthoc without --base, a bad --model, no Ray): exit 2; a folder
            # of other settings and a failed write go on to murgat.cli.main / murgat.api.execute (exit 2 / 5)
            print(f"error: {exc}", file=sys.stderr)
            return 2, {}
        except ExceptionGroup as group:  # a replay miss (exit 3) or a failed write (exit 5) stops the run
            from murgat.engine.guards import exit_code_of

            return exit_code_of(group, f" ({responses})"), {}
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


def run_generate_command(s: GenerateSettings, *, echo: bool = True) -> int:
    """``murgat generate``: the exit status (0 done, 1 some items have no response, 2 bad input)."""
    from murgat.engine.preflight import BadMediaRoot, check_media_root, missing_hint
    from murgat.inputs import InputError

    try:
        check_media_root(s.media_root)
        items = _load(s)
    except (InputError, BadMediaRoot, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    code, table = run_generate(s, items, Path(s.out), s.effort)
    if code:
        return code
    out = table["responses"]
    if echo and s.print_json:
        print(json.dumps(table, indent=2))
    elif echo:
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
        hint = missing_hint(errors, MediaPlace.of(s))
        if hint:
            print(hint, file=sys.stderr)
        print(f"FAILED: {table['n_errors']} of {table['n']} item(s) have no response (see generation_error in {out}); "
              "rerun with --retry-errors once fixed", file=sys.stderr)
        return 1
    return 0


def run_sweep(s: SweepSettings, *, echo: bool = True) -> int:
    """``murgat sweep``: generate and score per effort, then ``sweep.json``/``sweep.png``; the exit status."""
    from murgat.engine.preflight import BadMediaRoot, check_media_root
    from murgat.generation.sweep import plot_sweep, sweep_table
    from murgat.inputs import InputError
    from murgat.judges.effort import check

    try:
        check_media_root(s.media_root)  # before any work, as in generate: no effort is generated into error records
        efforts = [check(e) for e in s.efforts.split(",") if e.strip()]
        if not efforts:  # an empty sweep would exit 0 with an empty table
            raise ValueError(f"--efforts {s.efforts!r} names no effort; e.g. --efforts low,high")
        items = _load(s)
    except (ValueError, InputError, BadMediaRoot) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    root = Path(s.out)
    root.mkdir(parents=True, exist_ok=True)
    from murgat.engine.runs import load_run
    from murgat.pipeline.command import run_score
    from murgat.pipeline.settings import ScoreSettings

    rows = []
    failed: list[str] = []  # efforts with items that have no response or could not be scored: exit 1, as generate/score
    for effort in efforts:
        d = root / f"effort-{effort}"
        code, table = run_generate(s, items, d, effort)
        if code:
            return code
        if table.get("n_errors"):
            failed.append(effort)
        scoring = ScoreSettings.scoring_of(s, input=table["responses"], judge=s.judge, judge_option=s.judge_option,
                                           out=str(d / "run"), cache=str(root / "score-cache.sqlite"))
        code = run_score(scoring, echo=False)
        summary = load_run(scoring.out).summary if code in (0, 1) else {}
        if not summary:  # 1: scored, with some failed items
            print(f"error: scoring effort {effort} failed (exit {code})", file=sys.stderr)
            return code or 1
        if code == 1 and effort not in failed:
            failed.append(effort)
        rows.append({"effort": effort, "summary": summary})
    doc = sweep_table(rows)
    from murgat.engine.folder import write_atomic

    write_atomic(root / "sweep.json", json.dumps(doc, indent=2))
    png = plot_sweep(doc, root / "sweep.png")
    if echo and s.print_json:
        print(json.dumps(doc, indent=2))
    elif echo:
        _print_sweep(s, doc, root, png)
    if failed:
        print(f"FAILED: effort(s) {', '.join(failed)} have items without a response or a score (see each "
              f"{root}/effort-*/run/results.jsonl); rerun with --retry-errors once fixed", file=sys.stderr)
    return 1 if failed else 0


def _print_sweep(s: SweepSettings, doc: dict[str, Any], root: Path, png: Any) -> None:
    """The sweep's table on stdout."""
    from rich.table import Table

    from murgat.console import console

    t = Table(title=f"{s.model} — {s.mode} — accuracy and MURGAT-S by reasoning effort")
    for col in ("effort", "accuracy [95% CI]", "MURGAT-S [95% CI]", "coverage", "F1", "items", "errors"):
        t.add_column(col)
    for r in doc["rows"]:
        t.add_row(r["effort"], r["accuracy_text"], r["murgat_s_text"], r["coverage_text"], r["f1_text"], str(r["n_items"]),
                  str(r["n_errors"]))
    con = console()
    con.print(t)
    con.print(f"wrote {root / 'sweep.json'} and {png}")


