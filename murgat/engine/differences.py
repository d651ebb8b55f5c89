"""What differs between two runs: settings, prompts, judges, probes, versions, and verdicts.

Two runs of "the same" evaluation disagree for reasons a researcher must be able to see: a changed
default, an edited prompt, another model behind the same alias, a judge that failed its probes in
one run only, another library version. :func:`run_differences` reads both folders' ``config.json``
and ``summary.json`` and lists every value that differs, grouped:

* ``setting`` — any field of the run's configuration (evidence, prompts' variants, generation…);
* ``prompt`` — the hash of a prompt template (``prompt_hashes``);
* ``judge`` — the judge named for a stage, with its options, and the judge as the provider reported
  itself (``judge_identity``: model version strings, system fingerprints);
* ``probes`` — each probe's outcome per judge and path, and the probe clip's hash (``probes``);
* ``version`` — murgat's and its libraries' versions, the text channels' models (``versions``);
* ``input`` — the input file and media folder.

and, from ``results.jsonl``, how many verdicts changed between the items both runs hold
(:func:`verdict_changes`): per judge question for ``score`` runs (verifiability of each sentence,
each entailment question of each fact, matched by sentence and fact text, the stage and the citations
shown), per step for ``faithfulness`` runs. ``murgat diff A B`` prints it; ``summarize`` can print the
same table (:func:`print_diff`; at most :data:`SHOWN_DIFFERENCES` rows, the JSON has every one).

A folder's files are read as data that may have been damaged or written by hand: a ``config.json`` or
``summary.json`` that cannot be read, is nested absurdly or is not an object is said in
:attr:`RunDiff.problems` (its values then read as absent), and a field of the wrong type is read as
absent, never a crash of ``summarize`` or ``diff``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from murgat.core.jsonl import loads_line
from murgat.engine.folder import read_kind

Section = Literal["setting", "prompt", "judge", "probes", "version", "input"]
SECTIONS: tuple[str, ...] = ("judge", "probes", "prompt", "setting", "version", "input")
#: at most this many differences are drawn as rows (``murgat diff A B --json`` lists every one)
SHOWN_DIFFERENCES = 60


class Difference(BaseModel):
    section: str
    key: str
    a: Any = None
    b: Any = None
    in_a: bool = Field(default=True, description="the key exists in run A (else A has no such setting)")
    in_b: bool = True


class VerdictChanges(BaseModel):
    """How the verdicts of the items both runs hold compare."""

    kind: str
    items_compared: int = 0
    items_only_a: int = 0
    items_only_b: int = 0
    compared: int = Field(default=0, description="questions (or steps) both runs answered for the same item")
    changed: int = 0
    only_a: int = Field(default=0, description="questions only run A asked (another decomposition, say)")
    only_b: int = 0
    by_stage: dict[str, int] = Field(default_factory=dict, description="changed verdicts per stage")
    examples: list[dict[str, Any]] = Field(default_factory=list, description="the first changed verdicts")
    unreadable_lines: int = 0


class RunDiff(BaseModel):
    a: str
    b: str
    kind_a: str | None = None
    kind_b: str | None = None
    differences: list[Difference] = Field(default_factory=list)
    verdicts: VerdictChanges | None = None
    note: str | None = None
    problems: list[str] = Field(default_factory=list, description="files of either folder that could not be read")

    @property
    def same(self) -> bool:
        v = self.verdicts
        # runs holding different items differ, even when every verdict both hold is the same
        return not self.differences and (v is None or not (v.changed or v.only_a or v.only_b or v.items_only_a
                                                             or v.items_only_b))


def _read_json(path: Path, problems: list[str] | None = None, required: bool = False) -> dict[str, Any]:
    """``path``'s JSON object, else ``{}`` with the reason added to ``problems`` (a missing file only
    when ``required``: a run in progress has no ``summary.json`` yet)."""
    why = None
    try:
        doc = loads_line(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        doc, why = {}, "missing" if required else None
    except OSError as exc:
        doc, why = {}, f"cannot be read ({exc.strerror or exc})"
    except ValueError as exc:  # not JSON, not UTF-8, nested too deeply
        doc, why = {}, f"not readable JSON ({str(exc)[:120]})"
    if why is None and not isinstance(doc, dict):
        doc, why = {}, f"not a JSON object (a {type(doc).__name__})"
    if why is not None and problems is not None:
        problems.append(f"{path}: {why}; its values read as absent")
    return doc if isinstance(doc, dict) else {}  # a dict by now (checked above); said again for the type


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else ``{}`` (a field of another type reads as absent)."""
    return value if isinstance(value, dict) else {}


def _hashable(value: Any) -> Any:
    """A value as part of a verdict's key: itself when a JSON scalar, else its canonical JSON text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for k in sorted(value, key=str):
            yield from _flatten(value[k], f"{prefix}.{k}" if prefix else str(k))
    else:
        yield prefix, value


def _probe_view(doc: Any) -> dict[str, Any]:
    """A probe report (``murgat.judging.probes.results.ProbeReport`` as JSON) as flat comparable values."""
    if not isinstance(doc, dict):
        return {}
    out: dict[str, Any] = {k: doc.get(k) for k in ("setting", "seed", "probes_version", "clip_sha256", "espeak",
                                                   "problem") if k in doc}
    results = doc.get("results")
    for r in results if isinstance(results, list) else []:
        if isinstance(r, dict):
            out[f"{r.get('judge')} {r.get('stage')} {r.get('probe')}"] = r.get("outcome")
    return out


def _identity_view(doc: Any) -> dict[str, Any]:
    """Judge identities (a list of ``JudgeIdentity`` or a mapping of name → identity) as flat values."""
    items = list(doc.values()) if isinstance(doc, dict) else doc if isinstance(doc, list) else []
    out: dict[str, Any] = {}
    for ident in items:
        if isinstance(ident, dict) and ident.get("name"):
            name = ident["name"]
            out[f"{name} reported"] = sorted(_dict(ident.get("reported")), key=str) or None
            out[f"{name} system_fingerprint"] = sorted(_dict(ident.get("system_fingerprints")), key=str) or None
    return out


def _section(key: str) -> str:
    head = key.split(".", 1)[0]
    if head == "prompt_hashes":
        return "prompt"
    if head == "versions":
        return "version"
    if head.startswith("judge") or head in ("options", "model", "detector", "detector_options", "model_options"):
        return "judge"
    if head in ("input", "media_root", "data"):
        return "input"
    return "setting"


def _values(run: Path, problems: list[str]) -> dict[str, tuple[str, Any]]:
    """Every comparable value of a run folder: ``key → (section, value)`` (unreadable files: ``problems``)."""
    cfg = _read_json(run / "config.json", problems, required=True)
    summary = _read_json(run / "summary.json", problems)
    extra = _dict(summary.get("extra"))
    full: dict[str, Any] = dict(_dict(cfg.get("config")))
    probes = full.pop("probes", None) or cfg.get("probes") or extra.get("probes") or summary.get("probes")
    ident = full.pop("judge_identity", None) or cfg.get("judge_identity") or extra.get("judge_identity")
    out: dict[str, tuple[str, Any]] = {}
    for key, value in _flatten(full):
        if key:  # an empty configuration flattens to one nameless value: nothing to compare
            out[key] = (_section(key), value)
    if "kind" in cfg:
        out["kind"] = ("setting", cfg["kind"])
    for key, value in _probe_view(probes).items():
        out[f"probes.{key}"] = ("probes", value)
    for key, value in _identity_view(ident).items():
        out[f"judge_identity.{key}"] = ("judge", value)
    judges = extra.get("judges")
    if judges:
        out["judges"] = ("judge", judges)
    return out


def run_differences(a: str | Path, b: str | Path, *, verdicts: bool = True) -> RunDiff:
    """Every difference between run folders ``a`` and ``b`` (see the module docstring)."""
    pa, pb = Path(a), Path(b)
    diff = RunDiff(a=str(pa), b=str(pb), kind_a=read_kind(pa), kind_b=read_kind(pb))
    va, vb = _values(pa, diff.problems), _values(pb, diff.problems)
    for key in sorted(set(va) | set(vb)):
        sa, xa = va.get(key, (None, None))
        sb, xb = vb.get(key, (None, None))
        if key.startswith("judge_identity.") and (xa is None or xb is None):
            continue  # a run whose last invocation heard nothing from that judge (all cached) tells nothing
        if key not in va or key not in vb or xa != xb:
            diff.differences.append(Difference(section=sa or sb or "setting", key=key, a=xa, b=xb, in_a=key in va,
                                               in_b=key in vb))
    diff.differences.sort(key=lambda d: (SECTIONS.index(d.section) if d.section in SECTIONS else len(SECTIONS), d.key))
    if verdicts:
        if diff.kind_a != diff.kind_b:
            diff.note = f"verdicts not compared: {pa} is a '{diff.kind_a}' run and {pb} a '{diff.kind_b}' run"
        elif diff.kind_a in ("score", "faithfulness"):
            diff.verdicts = verdict_changes(pa, pb, diff.kind_a)
        else:
            diff.note = f"verdicts are compared for score and faithfulness runs, not '{diff.kind_a}' runs"
    return diff


def _latest(path: Path) -> tuple[dict[str, dict[str, Any]], int]:
    """The last record of each item in ``results.jsonl`` (appended records supersede earlier ones)."""
    out: dict[str, dict[str, Any]] = {}
    bad = 0
    try:
        f = open(path / "results.jsonl", encoding="utf-8", errors="replace")
    except OSError:
        return out, 0
    with f:
        for line in f:
            if not line.strip():
                continue
            try:
                rec = loads_line(line)  # absurd nesting is a bad line, not a RecursionError
            except ValueError:
                bad += 1
                continue
            if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                out[rec["id"]] = rec
            else:
                bad += 1
    return out, bad


def _majorities(fv: dict[str, Any]) -> dict[frozenset[int], Any]:
    """A fact's verdicts by the citations each question showed, as the score used them (under
    ``--repeats`` the majority of the repeats: ``joint``, ``alone``, ``leave_one_out``), where a
    call records one repeat's answer."""
    shown = [frozenset(int(e) for e in _list(c.get("evidence")) if isinstance(e, int))
             for c in _list(fv.get("calls")) if isinstance(c, dict) and c.get("stage") == "entail"]
    if not shown:
        return {}
    joint = max(shown, key=len)
    out: dict[frozenset[int], Any] = {}
    for i, v in _dict(fv.get("leave_one_out")).items():
        if str(i).isdigit():
            out[joint - {int(i)}] = v
    for i, v in _dict(fv.get("alone")).items():
        if str(i).isdigit():
            out[frozenset({int(i)})] = v
    if fv.get("joint") is not None:
        out[joint] = fv.get("joint")
    return out


def _score_verdicts(rec: dict[str, Any]) -> dict[tuple[Any, ...], Any]:
    out: dict[tuple[Any, ...], Any] = {}
    repeated = isinstance(_dict(rec.get("meta")).get("repeats"), dict)  # the majority is the verdict used
    for sr in _list(rec.get("sentences")):
        if not isinstance(sr, dict):
            continue
        sentence = _hashable(_dict(sr.get("sentence")).get("text"))
        out[("verify", sentence)] = sr.get("verify_verdict")
        facts = {_hashable(f.get("index")): _hashable(f.get("text")) for f in _list(sr.get("facts")) if isinstance(f, dict)}
        for fv in _list(sr.get("verdicts")):
            if not isinstance(fv, dict):
                continue
            fact = facts.get(_hashable(fv.get("fact_index")))
            used = _majorities(fv) if repeated else {}
            for call in _list(fv.get("calls")):
                if isinstance(call, dict):
                    shown = tuple(_hashable(e) for e in _list(call.get("evidence")))
                    verdict = call.get("verdict")
                    if call.get("stage") == "entail":
                        asked = frozenset(e for e in shown if isinstance(e, int))
                        verdict = used.get(asked, verdict)
                    out[(str(call.get("stage")), sentence, fact, shown)] = verdict
    return out


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list, else ``[]`` (a record's field of another type holds no verdict)."""
    return value if isinstance(value, list) else []


def _faith_verdicts(rec: dict[str, Any]) -> dict[tuple[Any, ...], Any]:
    out: dict[tuple[Any, ...], Any] = {}
    for s in _list(rec.get("steps")):
        if isinstance(s, dict):
            if s.get("status") != "labelled" or s.get("type") is None:
                label = "undetermined"
            elif s.get("type") == "reasoning":
                label = "reasoning"
            else:
                faithful = s.get("faithful")
                label = "faithful" if faithful is True else "unfaithful" if faithful is False else "undetermined"
            out[("step", _hashable(s.get("index")), _hashable(s.get("text")))] = label
    return out


def verdict_changes(a: str | Path, b: str | Path, kind: str = "score", examples: int = 10) -> VerdictChanges:
    """How many verdicts differ between the items both runs hold (see the module docstring)."""
    ra, bad_a = _latest(Path(a))
    rb, bad_b = _latest(Path(b))
    read = _score_verdicts if kind == "score" else _faith_verdicts
    vc = VerdictChanges(kind=kind, unreadable_lines=bad_a + bad_b)
    common = sorted(set(ra) & set(rb))
    vc.items_compared, vc.items_only_a, vc.items_only_b = len(common), len(set(ra) - set(rb)), len(set(rb) - set(ra))
    for item in common:
        xa, xb = read(ra[item]), read(rb[item])
        for key in xa.keys() & xb.keys():
            vc.compared += 1
            if xa[key] != xb[key]:
                vc.changed += 1
                vc.by_stage[str(key[0])] = vc.by_stage.get(str(key[0]), 0) + 1
                if len(vc.examples) < examples:
                    vc.examples.append({"id": item, "stage": key[0], "about": next((k for k in reversed(key[1:3])
                                                                                     if isinstance(k, str)), None),
                                        "a": xa[key], "b": xb[key]})
        vc.only_a += len(xa.keys() - xb.keys())
        vc.only_b += len(xb.keys() - xa.keys())
    return vc


def _short(value: Any, width: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def print_diff(diff: RunDiff, con: Any = None) -> None:
    """The differences as a table, then the verdict count (what ``murgat diff`` and ``summarize`` print)."""
    from rich.table import Table  # rich: only when a table is drawn
    from rich.text import Text

    from murgat.core.console import console

    con = con or console()
    if diff.differences:
        table = Table(title=f"what differs: A = {diff.a}, B = {diff.b}")
        for col in ("", "key", "A", "B"):
            table.add_column(col)
        for d in diff.differences[:SHOWN_DIFFERENCES]:
            table.add_row(d.section, Text(_short(d.key, 80)), Text(_short(d.a) if d.in_a else "(absent)"),
                          Text(_short(d.b) if d.in_b else "(absent)"))
        if len(diff.differences) > SHOWN_DIFFERENCES:
            table.caption = (f"{len(diff.differences) - SHOWN_DIFFERENCES} more differences not drawn (of "
                             f"{len(diff.differences)}): murgat diff {diff.a} {diff.b} --json lists every one")
        con.print(table)
    else:
        con.print(f"no setting, prompt, judge, probe or version differs between {diff.a} and {diff.b}", soft_wrap=True)
    v = diff.verdicts
    if v is not None:
        stages = ", ".join(f"{k} {n}" for k, n in sorted(v.by_stage.items()))
        con.print(f"verdicts: {v.changed} of {v.compared} changed over {v.items_compared} items both runs hold"
                  + (f" ({stages})" if stages else "")
                  + (f"; {v.only_a} asked only in A, {v.only_b} only in B" if v.only_a or v.only_b else "")
                  + (f"; items only in A {v.items_only_a}, only in B {v.items_only_b}"
                     if v.items_only_a or v.items_only_b else ""), soft_wrap=True)
        for e in v.examples:
            con.print(Text(f"  {e['id']} {e['stage']}: {_short(e['about'] or '', 70)}: {e['a']} → {e['b']}"),
                      soft_wrap=True)
    if diff.note:
        con.print(diff.note, soft_wrap=True)
    for problem in diff.problems:
        con.print(f"note: {problem}", soft_wrap=True)
