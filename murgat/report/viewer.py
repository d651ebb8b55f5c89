"""``report.html``: a self-contained, offline viewer for one run or two runs side by side.

One HTML file, no CDN and no build step: the page's script and style are in
``murgat/report/viewer.html`` (vanilla JS) and the run's data is embedded as JSON. Media are
referenced by paths relative to the report (``--copy-media`` copies them next to it so the
folder can be moved); a citation chip plays exactly its segment and stops at its end.
Numbers are rounded for people (3 decimals); the JSON files keep full precision.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.core.metric import items_covered
from murgat.core.schema import ResponseResult, RunSummary

if TYPE_CHECKING:
    from murgat.engine.outputs import Claim

TEMPLATE = Path(__file__).resolve().parent / "viewer.html"


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(float(x), nd)


def _iv(iv: Any) -> dict[str, Any] | None:
    if iv is None:
        return None
    d = iv.model_dump() if hasattr(iv, "model_dump") else dict(iv)
    return {"value": _r(d.get("value")), "lo": _r(d.get("ci_low")), "hi": _r(d.get("ci_high")), "n": d.get("n", 0)}


def _dump(iv: Any) -> Any:
    return iv.model_dump() if hasattr(iv, "model_dump") else iv


def figure(label: str, value: Any) -> dict[str, Any]:
    """One headline figure for the page: ``value`` is a number, or an interval as the summaries write
    it (``value``/``ci_low``/``ci_high``/``n``); the page shows both as ``value [lo, hi]``."""
    if isinstance(value, dict) and "value" in value:
        return {"label": label, "value": _iv(value)}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"label": label, "value": {"value": _r(value), "lo": None, "hi": None, "n": None}}
    return {"label": label, "value": None}


def probes_note(doc: Any) -> dict[str, Any] | None:
    """The judge probes of a run (its summary's ``probes``) as the run panel shows them: the headline
    and whether they passed; ``None`` when the run asked none (or the report cannot be read: said so)."""
    if doc is None:
        return None
    from pydantic import ValidationError

    from murgat.judging.probes.results import ProbeReport

    try:
        report = ProbeReport.model_validate(doc)
    except ValidationError:
        return {"ok": False, "headline": "judge probes: the report in summary.json cannot be read"}
    return {"ok": report.ok, "headline": report.headline(),
            "failures": [f"{r.probe} [{r.judge}, {r.stage}]: {r.explanation}" for r in report.failures()]}


def media_copy_name(source: Path) -> str:
    """The name of a media copy next to a report: the file's name (at most 40 safe characters) and
    16 hex digits of the SHA-256 of its *bytes*. Two files named ``clip.mp4`` in different folders
    get two copies, and a video replaced since the last copy gets a new one (by name, the second
    ``clip.mp4`` used to play the first, and a replaced video kept its stale copy)."""
    from murgat.media.cache import file_digest

    safe = "".join(ch if (ch.isascii() and ch.isalnum()) or ch in "-_." else "_" for ch in source.stem[:40])
    suffix = "".join(ch for ch in source.suffix[:12] if ch.isascii() and (ch.isalnum() or ch == "."))
    return f"{safe}-{file_digest(source)[:16]}{suffix}"


def _media_ref(media: str | None, media_root: Path | None, report_dir: Path, copy: bool,
               copied: dict[str, str], *, input_path: str | Path | None = None, allow_outside_root: bool = False,
               refused: list[str] | None = None) -> str | None:
    """A path to the item's media relative to the report (copied next to it with ``copy``).

    A copy goes into a folder meant to be shared, so it passes the same media-root check as
    scoring (:func:`murgat.core.inputs.resolve_media`): media that scoring would refuse (``/etc/passwd``,
    ``../x``, a symlink out of the root) are not copied and the item shows no media; ``refused``
    collects why. Copies are content-addressed (:func:`media_copy_name`) and written whole or not
    at all, under the output rule (:mod:`murgat.engine.outputs`). A plain link copies nothing and
    stays as it was; it is looked for where scoring looks (``media_root``, else ``input_path``'s folder)."""
    if not media:
        return None
    if copy:
        from murgat.core.inputs import MediaOutsideRoot, resolve_media
        from murgat.core.schema import Item
        from murgat.engine.outputs import claim_output

        try:
            found = resolve_media(Item(id="-", media=media), media_root, input_path,
                                  allow_outside_root=allow_outside_root)
        except MediaOutsideRoot as exc:
            if refused is not None:
                refused.append(f"not copied: {exc}")
            return None
        if found is None:
            return None
        if str(found) not in copied:
            name = media_copy_name(found)
            dest = report_dir / "media" / name
            if not dest.is_file():  # the same name is the same bytes: copied once
                claim_output(dest, role="file", inputs=[found]).copy_from(found)
            copied[str(found)] = f"media/{name}"
        return copied[str(found)]
    from murgat.core.inputs import MEDIA_EXTENSIONS

    # where scoring looks: --media-root, else the input file's folder; a bare id also with a media extension
    roots = [media_root] if media_root is not None else [Path(input_path).parent] if input_path else []
    cands = [Path(media)] if Path(media).is_absolute() else [r / media for r in roots]
    for c in cands:
        for alt in (c, *(c.with_name(c.name + ext) for ext in MEDIA_EXTENSIONS)):
            if alt.is_file():
                return os.path.relpath(alt.resolve(), report_dir.resolve())
    return None


def _call_rows(calls: Sequence[Any]) -> list[dict[str, Any]]:
    return [{"evidence": c.evidence, "verdict": c.verdict, "raw": (c.raw or "")[:2000], "error": c.error,
             "cached": c.cached, **_notes(c)} for c in calls]


def _notes(call: Any) -> dict[str, Any]:
    """What the evidence limits changed in a question (``{}`` when nothing: pages stay as they were)."""
    notes = getattr(call, "evidence_notes", None) or []
    return {"notes": [{"label": n.get("label", ""), "text": n.get("text", "")} for n in notes]} if notes else {}


def judge_prompt(fact: str, citations: Sequence[Any], variant: str) -> str:
    """The text of the joint entailment request for a fact, as the scorer renders it (same templates,
    same claim without its citations); the evidence parts between head and question are the frames
    and sound the page shows, so here they appear as one bracketed line per segment."""
    from murgat import prompts
    from murgat.core.citations import strip_citations

    head = prompts.render(f"entail_{variant}", fact=strip_citations(fact))
    tail = prompts.render(f"entail_{variant}_question")
    parts = [f"[{c.modality} evidence {c.raw}]" for c in citations if c.valid]
    return "\n\n".join([head, *parts, tail])


def cite_doc(c: Any, evidence: list[str] | None = None, with_evidence: bool = False) -> dict[str, Any]:
    """A citation as the page shows it; ``boxes`` are normalised ``[x1, y1, x2, y2]`` regions of the frame."""
    d = {"raw": c.raw, "modality": c.modality, "start": c.start, "end": c.end, "valid": c.valid, "reason": c.reason,
         "boxes": [[b.x1, b.y1, b.x2, b.y2] for b in (getattr(c, "boxes", None) or [])]}
    if with_evidence:
        d["evidence"] = evidence
    return d


def grounding_docs(run: Path) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Per item, what ``murgat score … --gold`` recorded in ``RUN/grounding/``: the gold evidence
    (from the gold file its ``config.json`` names) and the item's figures; plus a note when the
    gold file can no longer be read (the figures are still shown, the gold segments are not)."""
    from murgat.core.gold import GoldFormatError, load_gold

    folder = run / "grounding"
    if not (folder / "results.jsonl").is_file():
        return {}, None
    out: dict[str, dict[str, Any]] = {}
    from murgat.core.jsonl import loads_line, read_records

    notes: list[str] = []
    records, bad = read_records(folder / "results.jsonl")  # split at "\n" only (murgat.core.jsonl)
    if bad:
        notes.append(f"{len(bad)} line(s) of {folder / 'results.jsonl'} are not JSON (line {bad[0].lineno}) "
                     "and are not shown")
    for _, rec in records:
        if isinstance(rec, dict) and "id" in rec:
            out[str(rec["id"])] = {"record": {k: _r(rec.get(k)) if isinstance(rec.get(k), float) else rec.get(k) for k in (
                "nextgqa_iop", "nextgqa_iou", "rextime_iou", "iop", "iog", "iou", "evidence_recall",
                "evidence_precision", "viou", "saa", "saa_cite", "gold_hit", "error")}, "duration": None, "gold": []}
    try:
        cfg = loads_line((folder / "config.json").read_text(encoding="utf-8")) if (folder / "config.json").is_file() else {}
    except (OSError, ValueError) as exc:
        cfg = {}
        notes.append(f"gold segments not shown: {folder / 'config.json'} is not readable ({exc})")
    try:
        gold = load_gold(cfg["gold"]) if isinstance(cfg, dict) and cfg.get("gold") else {}
    except GoldFormatError as exc:
        gold = {}
        notes.append(f"gold segments not shown: {exc}")
    note = " ".join(notes) or None
    for gid, g in gold.items():
        d = out.setdefault(gid, {"record": None, "duration": None, "gold": []})
        d["duration"] = g.duration
        d["gold"] = [{"modality": e.modality, "start": e.start, "end": e.end, "role": e.role, "page": e.page,
                      "boxes": [{"t": b.t, "box": [b.x1, b.y1, b.x2, b.y2]} for b in e.boxes]} for e in g.evidence]
    return out, note


def item_doc(r: ResponseResult, media_ref: str | None, evidence: dict[str, list[str]],
             entail_variant: str | None = None, grounding: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the viewer needs of one result (sentences, facts, verdicts with the judge's words);
    with ``entail_variant`` (pages made with ``--save-evidence``) also each fact's rendered prompt."""
    sents = []
    for sr in r.sentences:
        facts = []
        verdicts = {fv.fact_index: fv for fv in sr.verdicts}
        for f in sr.facts:
            fv = verdicts.get(f.index)
            unasked = fv is not None and fv.status == "judged" and f.only_invalid_citations
            facts.append({
                "text": f.text,
                "citations": [cite_doc(c, evidence.get(f"{c.modality}|{c.start}|{c.end}"), True)
                              for c in f.citations],
                # a fact whose every citation is invalid was never put to a judge: its status says so
                # (the page then shows the status, not recall 0 and a red "no")
                "status": "invalid citation" if unasked else fv.status if fv else None,
                "recall": _r(fv.recall) if fv else None,
                "precision": _r(fv.precision) if fv else None,
                "joint": "invalid citation" if unasked else fv.joint if fv else None,
                "alone": {str(k): v for k, v in (fv.alone if fv else {}).items()},
                "loo": {str(k): v for k, v in (fv.leave_one_out if fv else {}).items()},
                "reason": ("no valid citation: " + "; ".join(c.reason or c.raw for c in f.citations) if unasked
                           else fv.reason if fv else None), "calls": _call_rows(fv.calls) if fv else [],
                "prompt": judge_prompt(f.text, f.citations, entail_variant) if entail_variant else None,
            })
        sents.append({
            "index": sr.sentence.index, "text": sr.sentence.text, "verifiable": sr.verifiable,
            "verdict": sr.verify_verdict, "why": (sr.verify_raw or "")[:1000], "notes": sr.notes,
            "citations": [cite_doc(c) for c in sr.sentence.citations],
            # time-like text the grammar did not read as a citation (marked on the page with the nearest spelling)
            "time_like": [{"text": t.text, "nearest": t.nearest, "reason": t.reason} for t in sr.sentence.time_like],
            "facts": facts,
        })
    s = r.scores
    return {
        "id": r.id, "case": r.case, "error": r.error, "media": media_ref, "video": r.video,
        "scores": {k: _r(getattr(s, k)) for k in ("coverage", "precision", "recall", "f1", "murgat_s")},
        "answer": r.predicted_option, "gold": r.gold, "correct": r.correct, "answer_problem": r.answer_problem,
        "question": r.meta.get("question"),
        "options": r.meta.get("options"), "n_undetermined": r.n_facts_undetermined + r.n_verify_undetermined,
        "sentences": sents, "judge_calls": r.judge_calls, "cache_hits": r.cache_hits,
        # murgat score --gold: the gold evidence (drawn on the timeline and the frame) and this item's figures
        "grounding": grounding,
    }


def run_doc(name: str, summary: RunSummary, results: Iterable[ResponseResult], *, report_dir: Path,
            media_root: Path | None, copy_media: bool, config: dict[str, Any] | None = None,
            evidence: dict[str, dict[str, list[str]]] | None = None, input_path: str | Path | None = None,
            allow_outside_root: bool = False, refused: list[str] | None = None,
            grounding: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    copied: dict[str, str] = {}
    grounding = grounding or {}
    variant = str((config or {}).get("entail_variant") or "simple") if evidence is not None else None
    items = [item_doc(r, _media_ref(r.video, media_root, report_dir, copy_media, copied, input_path=input_path,
                                    allow_outside_root=allow_outside_root, refused=refused),
                      (evidence or {}).get(r.id, {}), variant, grounding.get(r.id))
             for r in results]
    now = summary.extra.get("this_invocation") or {}
    return {
        "name": name,
        "metrics": {m: _iv(getattr(summary, m)) for m in ("coverage", "precision", "recall", "f1", "murgat_s")},
        "accuracy": _iv(summary.accuracy), "attributed_accuracy": _iv(summary.attributed_accuracy),
        "attributed_threshold": summary.attributed_threshold,
        # answers that could not be read (counted as not correct above) and time-like texts not read as citations
        "accuracy_answered": _iv(summary.accuracy_answered), "n_answer_unknown": summary.n_answer_unknown,
        "n_time_like": summary.n_time_like,
        "headline": [figure(f"MURGAT-S ({items_covered(summary.murgat_s.n, summary.n_items)})", _dump(summary.murgat_s)),
                     figure("accuracy", _dump(summary.accuracy)),
                     figure(f"attributed accuracy (correct and MURGAT-S ≥ {summary.attributed_threshold:g})",
                            _dump(summary.attributed_accuracy))]
        + ([figure(f"accuracy over the answers read ({summary.n_answer_unknown} not read, counted as not correct "
                   "above)", _dump(summary.accuracy_answered))] if summary.n_answer_unknown else []),
        "cases": summary.cases, "n_items": summary.n_items, "n_errors": summary.n_errors,
        "calls": {"requests": summary.judge_calls, "sent": summary.sent, "cache_hits": summary.cache_hits,
                  "deduplicated": summary.deduplicated, "no_answer": summary.n_judge_errors,
                  "cost_usd": _r(now.get("cost_usd"), 4)},
        "judges": summary.extra.get("judges"), "notes": summary.extra.get("judge_notes"),
        "settings": config or {}, "precision_mode": summary.precision_mode, "items": items,
        # the run's grounding summary (murgat score --gold), shown as a table in the run panel
        "grounding": summary.extra.get("grounding"), "grounding_error": summary.extra.get("grounding_error"),
        # score --repeats K: how stable the judge's verdicts and MURGAT-S were (murgat.commands.score.repeats)
        "repeats": summary.extra.get("repeats"),
        # facts' precision/recall/F1 per modality of their citations, and the modality check (murgat.core.metric)
        "by_modality": summary.extra.get("by_modality"), "modality_check": summary.extra.get("modality_check"),
        # what the judge probes found before the first item (murgat.judging.probes), a line of the run panel
        "probes": probes_note(summary.extra.get("probes")),
    }


def breakdown_views(results: Sequence[ResponseResult], by: Sequence[str], summary: RunSummary,
                    fields_of: Callable[[ResponseResult], Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The run panel's group-by views (``--by``): the groups of the combination of ``by``, then, when
    there are several fields, of each alone — the page's selector switches between them. Each group's
    figures are :func:`murgat.core.breakdown.breakdown`'s with the run's own summary options (what
    ``score --by`` writes), rounded for people; a figure over no judged item is null with its reason."""
    from murgat.core.breakdown import breakdown, record_fields, summary_options

    names = list(dict.fromkeys(by))
    views = [names] + ([[n] for n in names] if len(names) > 1 else [])
    out = []
    for view in views:
        bd = breakdown(results, view, fields_of=fields_of or record_fields, **summary_options(summary)).as_dict()
        out.append({"by": view, "label": " × ".join(view), "note": bd["note"], "n_items": bd["n_items"],
                    "groups": [{"label": g["label"], "values": g["values"], "n_items": g["n_items"],
                                "n_errors": g["n_errors"], "cases": g["cases"],
                                "metrics": {m: _iv(g[m]) for m in ("coverage", "precision", "recall", "f1", "murgat_s")},
                                "accuracy": _iv(g["accuracy"]), "attributed_accuracy": _iv(g["attributed_accuracy"]),
                                "undefined": g["undefined"]} for g in bd["groups"]]})
    return out


def write_viewer(path: Path | Claim, runs: list[dict[str, Any]], comparison: dict[str, Any] | None = None,
                 title: str = "murgat report", kind: str = "score",
                 inputs: Sequence[str | Path | None] = ()) -> Path:
    """Write the page: the template with the data embedded, every ``<`` written as ``\\u003c``.

    Inside a ``<script>`` element the HTML parser reacts to ``</script``, ``<!--`` and ``<script``
    (``<!--<script>`` makes it swallow the rest of the page); with no ``<`` left in the data it
    has nothing to react to, and ``JSON.parse`` reads ``\\u003c`` back as ``<``.

    ``path`` is claimed by the one output rule (:mod:`murgat.engine.outputs`; ``inputs`` are the
    files the page was made from) unless it is a claim already, and written whole or not at all
    (a file-size limit or a full disk leaves the old page: exit 5).

    ``kind`` ``score`` shows MURGAT-S runs; ``faithfulness``, ``reflect`` and ``program`` show
    items made of titled blocks of steps (see :func:`steps_item`)."""
    from murgat.engine.outputs import Claim, claim_output

    claim = path if isinstance(path, Claim) else claim_output(path, role="file", inputs=inputs)
    data = json.dumps({"title": title, "kind": kind, "runs": runs, "comparison": comparison}, ensure_ascii=False,
                      default=str)
    data = data.replace("<", "\\u003c")  # JSON has no "<" outside strings, so this only re-spells text
    page = TEMPLATE.read_text(encoding="utf-8")
    page = page.replace("__TITLE__", html.escape(title)).replace("__DATA__", data)
    return claim.write_text(page)


def comparison_doc(a: list[ResponseResult], b: list[ResponseResult], names: tuple[str, str],
                   n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Per-item MURGAT-S differences (B − A) and the paired bootstrap CI of their mean."""
    from murgat.core.metric import paired_bootstrap_diff

    ra = {r.id: r for r in a if r.error is None}
    rb = {r.id: r for r in b if r.error is None}
    rows: list[dict[str, Any]] = []
    for i in sorted(set(ra) & set(rb)):
        x, y = ra[i].scores.murgat_s, rb[i].scores.murgat_s
        rows.append({"id": i, "a": _r(x), "b": _r(y), "diff": None if x is None or y is None else _r(y - x)})
    pairs = [(float(r["a"]), float(r["b"])) for r in rows if r["diff"] is not None]
    ci = paired_bootstrap_diff([p for p, _ in pairs], [q for _, q in pairs], n_resamples, seed)
    return {"a": names[0], "b": names[1], "rows": rows, "mean_diff": _iv(ci),
            "note": None if rows else "the two runs have no item ids in common"}



def steps_item(item_id: str, case: str, media: str | None, blocks: list[dict[str, Any]], *, error: str | None = None,
               headline: str = "", score: float | None = None) -> dict[str, Any]:
    """One item of a step view: ``blocks`` = ``[{"title", "pre"?, "rows": [{"text", "citations", "badges",
    "detail"}]}]``."""
    return {"id": item_id, "case": case, "media": media, "blocks": blocks, "error": error, "headline": headline,
            "score": score}


def media_for(name: str | None, media_root: str | Path | None, report_dir: Path) -> str | None:
    return _media_ref(name, Path(media_root) if media_root else None, report_dir, False, {})
