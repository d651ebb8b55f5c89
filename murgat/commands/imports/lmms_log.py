"""``murgat import lmms-eval SAMPLES.jsonl --out DIR``: an lmms-eval samples log as a murgat input.

Each line of a samples log of murgat's task (``--log_samples``) holds, under each of the task's
metrics, the payload of :mod:`murgat.commands.imports.lmms_samples`; each answer in it becomes one
item of ``DIR/responses.jsonl``, written exactly as the task's aggregation writes the input of its own
murgat run, so ``murgat score DIR`` with the judge the log names gives the figures lmms-eval reported.
``DIR/lmms_eval.json`` says where it came from and lists every answer left out with the reason (a
request lmms-eval got no answer for, a line that is not JSON or not of murgat's task); the count is
printed too. lmms-eval's log keeps no document, so a log of another task cannot be imported: its
samples do not say which media they were about. Reading the log needs no lmms-eval.

A folder already holding a ``responses.jsonl`` is written again only when that file came from an
lmms-eval log (its ``lmms_eval.json``) and its content would not change.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from murgat.commands.imports.lmms_samples import MARKER, items_of, settings_of, write_input
from murgat.commands.imports.samples import INPUT, input_text
from murgat.core.inputs import InputError
from murgat.core.jsonl import iter_lines, loads_line
from murgat.core.schema import Item


def _payload(line: dict[str, Any]) -> Any:
    """The murgat payload of one logged sample (any metric's value holding one)."""
    for v in line.values():
        if isinstance(v, dict) and isinstance(v.get("murgat"), dict):
            return v
    return None


def read_samples(path: str | Path) -> tuple[list[Item], list[dict[str, Any]], dict[str, Any]]:
    """The items of a samples log, the answers left out, and the settings its samples name."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no lmms-eval samples log there")
    items: list[Item] = []
    skipped: list[dict[str, Any]] = []
    named: dict[str, Any] = {}
    for n, raw in iter_lines(p):  # split at "\n" only (murgat.core.jsonl)
        if not raw.strip():
            continue
        where = f"{p.name}: line {n}"
        try:
            line = loads_line(raw)
        except ValueError as exc:  # JSONDecodeError is one; so is nesting past the bound
            skipped.append({"sample": f"line {n}", "reason": f"not JSON ({getattr(exc, 'msg', exc)})"})
            continue
        value = _payload(line) if isinstance(line, dict) else None
        if value is None:
            skipped.append({"sample": f"line {n}", "reason": "no murgat payload (not a sample of murgat's lmms-eval task)"})
            continue
        got, left = items_of(value, where)
        items += got
        skipped += left
        s = settings_of(value)
        if named and s != named:
            raise InputError(f"{where}: names another judge, media root or task than the lines before ({s} ≠ {named})")
        named = s
    seen: set[str] = set()
    for it in items:  # one pass: a log of many samples stays linear
        if it.id in seen:
            raise InputError(f"{p}: item {it.id!r} occurs twice (a log of two runs appended? murgat ids must be unique)")
        seen.add(it.id)
    return items, skipped, named


def import_samples(path: str | Path, out: str | Path) -> tuple[list[Item], list[dict[str, Any]], dict[str, Any]]:
    """Write the murgat input of the samples log ``path`` into ``out`` (see the module docstring)."""
    items, skipped, named = read_samples(path)
    if not items:
        reasons = "; ".join(sorted({s["reason"] for s in skipped})[:3]) or "the log is empty"
        raise InputError(f"{path}: no answer of murgat's task to import ({reasons})")
    folder = Path(out)
    target = folder / INPUT
    if target.exists():
        if not (folder / MARKER).exists() or target.read_text(encoding="utf-8") != input_text(items):
            raise InputError(f"{target} already holds another input: not written over (choose another --out)")
        return items, skipped, named
    from murgat.engine.outputs import claim_output

    claim_output(folder, role="folder", kind=None, inputs=[path], what=f"--out {folder}")
    write_input(folder, items, {"made_by": "murgat import lmms-eval", "samples": str(Path(path).resolve()), **named,
                                "n_imported": len(items), "skipped": skipped})
    return items, skipped, named


def run_import(path: str, out: str) -> int:
    """``murgat import lmms-eval``: exit 0 when every answer was imported, 1 when some were left out (each
    named, with its reason), 2 when nothing could be."""
    try:
        items, skipped, named = import_samples(path, out)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for s in skipped[:20]:
        print(f"warning: {s['sample']} left out: {s['reason']}", file=sys.stderr)
    if len(skipped) > 20:
        print(f"warning: … and {len(skipped) - 20} more (all in {Path(out) / MARKER})", file=sys.stderr)
    print(f"imported {len(items)} answers into {Path(out) / INPUT} ({len(skipped)} left out)")
    options = "".join(f" --judge-option {o}" for o in named.get("judge_option") or [])
    print(f"score them as the task did: murgat score {out} --media-root {named.get('media_root')} "
          f"--judge {named.get('judge')}{options} --out {out}")
    return 1 if skipped else 0
