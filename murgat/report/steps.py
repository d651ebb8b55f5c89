"""Viewer pages for step-shaped runs: ``murgat faithfulness``, ``murgat reflect``, ``murgat program``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from murgat.engine.folder import PairFolder
from murgat.report.viewer import cite_doc, figure, media_for, probes_note, steps_item, write_viewer


def _cites(raws: list[str]) -> list[dict[str, Any]]:
    from murgat.core.citations import parse_citations

    return [cite_doc(c) for raw in raws for c in parse_citations(f"({raw})")]


def faithfulness_report(out: Path, results: list[Any], summary: dict[str, Any], media_root: str | None,
                        annotator: str | None = None, sample_design: dict[str, Any] | None = None) -> Path:
    """The page of a faithfulness run; with ``annotator``, its blind step-labelling page (``murgat annotate``)."""
    from murgat.human_eval.labels import response_digest, text_digest

    items = []
    for r in results:
        rows = []
        for st in r.steps:
            badges = [st.type or "undetermined"]
            if st.type == "perception":
                badges += [st.modality or "?", "faithful" if st.faithful else "unfaithful" if st.faithful is False
                           else "undetermined"]
            if st.status != "labelled":
                badges.append(st.status)
            rows.append({"text": st.text, "citations": [cite_doc(c) for c in st.citations], "badges": badges,
                         "detail": f"evidence: {st.evidence}\nreason: {st.reason or ''}\n\n{st.raw or ''}",
                         "step": st.index, **({"digest": text_digest(st.text)} if annotator is not None else {})})
        head = (f"UPR {r.upr:.3f} ({r.n_unfaithful}/{r.n_perception})" if r.upr is not None else "no UPR") + (
            f" · answer {r.predicted_option} (gold {r.gold})" if r.gold else "") + (
            f" · answer not read: {r.answer_problem}" if getattr(r, "answer_problem", None) else "")
        items.append(steps_item(r.id, r.case, media_for(r.video, media_root, out.parent), [{"title": "steps", "rows": rows}],
                                error=r.error, headline=head, score=r.upr))
        if annotator is not None:  # what the exported label lines are bound to (murgat calibrate checks it)
            items[-1]["digest"] = response_digest([st.text for st in sorted(r.steps, key=lambda st: st.index)])
    keys = ("upr", "upr_per_response_mean", "accuracy", "accuracy_answered", "n_answer_unknown", "perception_steps",
            "unfaithful_steps", "undetermined_steps", "n_no_perception", "answer_x_faithfulness")
    run = {"name": out.parent.name, "kind": "step faithfulness", "summary": {k: summary.get(k) for k in keys},
           "headline": [figure("UPR (unfaithful / perception steps; lower is better)", summary.get("upr")),
                        figure("accuracy", summary.get("accuracy"))],
           "items": items, "probes": probes_note(summary.get("probes"))}
    if annotator is not None:
        run["annotate"] = {"annotator": annotator, **({"sample": sample_design} if sample_design else {})}
    return write_viewer(out, [run], None, f"murgat faithfulness — {out.parent.name}", kind="faithfulness")


def reflect_report(out: Path, traces: list[dict[str, Any]], responses: dict[str, dict[str, Any]],
                   summary: dict[str, Any], media_root: str | None) -> Path:
    items = []
    for t in traces:
        rec = responses.get(t["id"], {})
        tr = t.get("trace") or {}
        rows = []
        for ev in tr.get("events", []):
            detail = "\n".join(f"attempt {a['attempt']}: {a.get('text')} → {a.get('verdict')} ({a.get('reason') or ''})"
                               for a in ev.get("attempts", []))
            if ev.get("continuation"):
                detail += f"\ncontinued with: {ev['continuation']}"
            badges = [ev["verdict"]] + (["resolved" if ev.get("resolved") else "unresolved"] if ev.get("attempts") else [])
            rows.append({"text": ev["text"], "citations": [], "badges": badges,
                         "detail": (f"reason: {ev.get('reason') or ''}\n" + detail).strip()})
        blocks = [{"title": "original chain", "pre": tr.get("original", "")},
                  {"title": "checked steps (Algorithm 2)", "rows": rows},
                  {"title": "final chain", "pre": tr.get("final", "")}]
        b, a = t.get("before") or {}, t.get("after") or {}
        head = (f"unfaithful {b.get('unfaithful')}/{b.get('perception')} → {a.get('unfaithful')}/{a.get('perception')} · "
                f"regenerations {tr.get('regenerations', 0)} · extra calls {t.get('extra_calls', 0)}")
        items.append(steps_item(t["id"], "reflected" if "trace" in t else "error",
                                media_for(rec.get("media"), media_root, out.parent), blocks,
                                error=t.get("error"), headline=head))
    keys = ("upr_before", "upr_after", "upr_difference", "accuracy_before", "accuracy_after", "n_answer_unknown_before",
            "n_answer_unknown_after", "regenerations_invoked", "resolved_after_attempts", "unresolved",
            "extra_calls_per_item")
    run = {"name": out.parent.name, "kind": "self-reflection", "summary": {k: summary.get(k) for k in keys},
           "headline": [figure("UPR before", summary.get("upr_before")), figure("UPR after", summary.get("upr_after")),
                        figure("UPR after − before", summary.get("upr_difference")),
                        figure("accuracy before", summary.get("accuracy_before")),
                        figure("accuracy after", summary.get("accuracy_after"))],
           "items": items, "probes": probes_note(summary.get("probes"))}
    return write_viewer(out, [run], None, f"murgat reflect — {out.parent.name}", kind="reflect")


def program_report(out: Path, variants: dict[str, list[dict[str, Any]]], summary: dict[str, Any],
                   media_root: str | None, records: dict[str, dict[str, dict[str, Any]]]) -> Path:
    items = []
    for variant, traces in variants.items():
        for t in traces:
            rec = records.get(variant, {}).get(t["id"], {})
            rows = []
            for op in t.get("ops", []):
                checks = " → ".join(str(c.get("verdict")) for c in op.get("check", []))
                rows.append({"text": f"{op['op']}({json.dumps(op.get('inputs'), ensure_ascii=False)[:300]})"
                                     + (f" → {json.dumps(op.get('output'), ensure_ascii=False)[:500]}" if op.get("output") else ""),
                             "citations": _cites(op.get("citations") or []), "badges": [op["op"], op.get("status", "")],
                             "detail": f"check: {checks or '—'}\ncalls: {op.get('calls')} · {op.get('seconds', 0):.2f} s"
                                       + (f"\nerror: {op['error']}" if op.get("error") else "")})
            blocks = [{"title": "program", "pre": t.get("program") or "(no program)"},
                      {"title": "operations", "rows": rows},
                      {"title": "answer (input for murgat score)", "pre": rec.get("response", "")}]
            items.append(steps_item(f"{t['id']} · {variant}", t.get("status", "ok"),
                                    media_for(rec.get("media"), media_root, out.parent), blocks, error=t.get("error"),
                                    headline=f"{t.get('judge_calls', 0)} calls · {t.get('seconds', 0):.1f} s · "
                                             f"{t.get('interpreter_steps', 0)} interpreter steps"))
    flat = {f"{v} {k}": s.get(k) for v, s in summary.get("variants", {}).items()
            for k in ("items", "errors", "calls_per_item", "accuracy", "n_answer_unknown")}
    head = [figure(f"{v} accuracy", s.get("accuracy")) for v, s in summary.get("variants", {}).items()]
    run = {"name": out.parent.name, "kind": "plan-then-execute programs", "summary": flat, "headline": head,
           "items": items, "probes": probes_note(summary.get("probes"))}
    return write_viewer(out, [run], None, f"murgat program — {out.parent.name}", kind="program")


def program_run_report(out: Path, variants: list[str], ids: set[str] | None, doc: dict[str, Any], media_root: str | None,
            page: Path | None = None) -> Path:
    rows = {v: PairFolder(out / v, repair=False).latest_results(want=ids) for v in variants}
    traces = {v: [r["trace"] for r in rows[v]] for v in variants}
    recs = {v: {r["id"]: r["record"] for r in rows[v]} for v in variants}
    return program_report(page or out / "report.html", traces, doc, media_root, recs)


def rewrite_program_report(run: Path, page: Path, media_root: str | None) -> Path:
    """``murgat view`` on a program run folder: its page again, from the summary and every variant
    folder it holds (the same page ``murgat program`` writes)."""
    doc = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    variants = [v for v in doc.get("variants", {}) if (run / v).is_dir()]
    return program_run_report(run, variants, None, doc, media_root, page)
