"""``murgat import inspect LOG.eval --out DIR``: an inspect_ai log's answered samples as a murgat input.

Each sample whose metadata carries murgat's item fields (every sample of ``murgat_cited_qa``; any
task's sample that names its media, see :mod:`murgat.commands.imports.samples`) becomes one item of
``DIR/responses.jsonl``, its final output the response; ``DIR/inspect.json`` says where it came from
(log, task, model, eval id, media root) and lists every sample left out with the reason — a
sample that errored, has no output, or carries no media. Nothing is dropped silently: the count
and the reasons are also printed. Then ``murgat score DIR --media-root ROOT --judge J --out DIR``
makes ``DIR`` a score run (view, summarize, export, calibrate read it); scoring it with the judge
and settings of a ``murgat_scorer`` gives that scorer's figures, since the same items are written
the same way (:func:`murgat.commands.imports.samples.input_line`).

A folder already holding a ``responses.jsonl`` is only written again when it came from an inspect
log (its ``inspect.json``) and the content would not change: never over another input.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from murgat.commands.imports.samples import INPUT, KEY, MARKER, input_text, item_of_sample, media_root_of, write_input
from murgat.core.inputs import InputError
from murgat.core.schema import Item


@dataclass
class Imported:
    """What an import read and wrote."""

    items: list[Item]
    skipped: list[dict[str, Any]] = field(default_factory=list)
    media_root: str | None = None
    source: dict[str, Any] = field(default_factory=dict)
    scored_in: list[str] = field(default_factory=list)
    #: the judge ``murgat_scorer`` scored the log with (``murgat score``'s spec), when the log records one
    judges: list[str] = field(default_factory=list)


def read_log(log_path: str | Path) -> Imported:
    """The murgat items of an inspect log (``.eval`` or ``.json``); needs ``inspect_ai`` installed."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:
        raise InputError("reading an inspect log needs inspect_ai: pip install 'murgat[inspect]'") from exc
    p = Path(log_path)
    if not p.is_file():
        raise InputError(f"{p}: no inspect log there")
    try:
        log = read_eval_log(str(p))
    except Exception as exc:  # inspect raises its own errors for a damaged or foreign file
        raise InputError(f"{p}: not a readable inspect log ({type(exc).__name__}: {exc})") from exc
    model = log.eval.model
    out = Imported(items=[], source={"made_by": "murgat import inspect", "log": str(p.resolve()), "task": log.eval.task,
                                     "model": model, "eval_id": log.eval.eval_id, "status": log.status})
    roots: set[str] = set()
    runs: set[str] = set()
    judges: set[str] = {str(sc.params["judge"]) for sc in (log.results.scores if log.results else [])
                        if sc.params.get("judge")}
    for s in log.samples or []:
        where = {"sample": s.id, "epoch": s.epoch}
        if s.error is not None:
            out.skipped.append({**where, "reason": f"the sample errored: {s.error.message[:300]}"})
            continue
        if s.output is None or not s.output.choices:
            out.skipped.append({**where, "reason": "the sample has no output"})
            continue
        try:
            item = item_of_sample(s.id, s.epoch, s.metadata, s.target, s.choices, s.output.completion, model)
        except InputError as exc:
            out.skipped.append({**where, "reason": str(exc)})
            continue
        out.items.append(item)
        if root := media_root_of(s.metadata):
            roots.add(root)
        for sc in (s.scores or {}).values():
            md = (sc.metadata or {}).get(KEY)
            if isinstance(md, dict) and md.get("run"):
                runs.add(str(md["run"]))
            if isinstance(md, dict) and md.get("judge"):
                judges.add(str(md["judge"]))
    if len(roots) > 1:
        raise InputError(f"{p}: samples name {len(roots)} media roots ({', '.join(sorted(roots))}); murgat scores one "
                         "root per run")
    out.media_root = next(iter(roots), None)
    out.scored_in = sorted(runs)
    out.judges = sorted(judges)
    seen: set[str] = set()
    for it in out.items:
        if it.id in seen:
            raise InputError(f"{p}: sample id {it.id!r} occurs twice (murgat ids must be unique)")
        seen.add(it.id)
    return out


def import_log(log_path: str | Path, out: str | Path) -> Imported:
    """Write the murgat input of ``log_path`` into ``out`` (see the module docstring)."""
    got = read_log(log_path)
    if not got.items:
        reasons = "; ".join(sorted({s["reason"] for s in got.skipped})[:3]) or "the log has no samples"
        raise InputError(f"{log_path}: no sample carries murgat's item fields ({reasons})")
    folder = Path(out)
    path = folder / INPUT
    if path.exists():
        new = input_text(got.items)
        if not (folder / MARKER).exists() or path.read_text(encoding="utf-8") != new:
            raise InputError(f"{path} already holds another input: not written over (choose another --out)")
        return got
    # the output rule (murgat.engine.outputs): never into a run folder (a score run's, whose input this
    # would change under its records), never through a link out, an unwritable --out refused before work
    from murgat.engine.outputs import claim_output

    claim_output(folder, role="folder", kind=None, inputs=[log_path], what=f"--out {folder}")
    write_input(folder, got.items, {**got.source, "media_root": got.media_root, "n_samples": len(got.items) +
                                    len(got.skipped), "n_imported": len(got.items), "skipped": got.skipped})
    return got


def run_import(log_path: str, out: str) -> int:
    """``murgat import inspect``: exit 0 when every sample was imported, 1 when some were left out
    (each named, with its reason), 2 when nothing could be."""
    try:
        got = import_log(log_path, out)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for s in got.skipped[:20]:
        print(f"warning: sample {s['sample']} (epoch {s['epoch']}) left out: {s['reason']}", file=sys.stderr)
    if len(got.skipped) > 20:
        print(f"warning: … and {len(got.skipped) - 20} more (all in {Path(out) / MARKER})", file=sys.stderr)
    root = f" --media-root {got.media_root}" if got.media_root else " --media-root DIR"
    print(f"imported {len(got.items)} of {len(got.items) + len(got.skipped)} samples into {Path(out) / INPUT}")
    usable = [j for j in got.judges if not j.startswith("inspect:")]  # an inspect model answers only inside an eval
    judge = usable[0] if len(usable) == 1 and len(got.judges) == 1 else "JUDGE"
    print(f"score them: murgat score {out}{root} --judge {judge} --out {out}")
    if judge == "JUDGE" and got.judges:
        print(f"(the log was judged by {', '.join(got.judges)}: name a murgat judge, e.g. the same model through "
              "its provider)")
    for run in got.scored_in:
        print(f"this log was scored by murgat_scorer into {run} (murgat view {run})")
    return 1 if got.skipped else 0
