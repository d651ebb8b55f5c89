"""``murgat citations TEXT``: how murgat reads one text — its sentences, each citation (modality, start, end,
valid, reason, raw), the time-like text that is not a citation, and the answer."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from murgat.core.boxes import BoxConvention, BoxError, parse_frame_size
from murgat.core.citations import apply_box_convention
from murgat.core.inputs import response_problem
from murgat.core.text import preprocess, split_sentences
from murgat.engine.errors import SettingsError
from murgat.engine.options import add_command
from murgat.settings.citations import CitationsSettings


def citations_doc(text: str, boxes: BoxConvention | None = None) -> dict[str, Any]:
    """How ``murgat citations`` reads ``text``: its sentences with their citations and time-like
    text, and the answer. A text over the size cap gives ``{"error": …}`` instead."""
    problem = response_problem(text)
    if problem is not None:
        return {"error": problem}
    pre = preprocess(text)
    sents = split_sentences(pre.reasoning)
    if boxes is not None:
        sents = apply_box_convention(sents, pre.reasoning, boxes)
    return {
        "sentences": [
            {
                "index": s.index,
                "text": s.text,
                "citations": [
                    {"modality": c.modality, "start": c.start, "end": c.end, "valid": c.valid,
                     "reason": c.reason, "raw": c.raw,
                     **({"boxes": [b.model_dump() for b in c.boxes]} if c.boxes else {})}  # as in records
                    for c in s.citations
                ],
                "time_like": [t.model_dump() for t in s.time_like],
            }
            for s in sents
        ],
        "answer": pre.answer or None,
        "option": pre.option,
        "answer_problem": pre.reading.reason if pre.option is None and text.strip() else None,
    }


def _citation_cells(c: dict[str, Any] | None, boxed: bool) -> list[Any]:
    """One citation's cells of the table (plain Text: "[audio, 00:01:02.5]" is a citation, not rich markup)."""
    from rich.text import Text

    if c is None:
        return [""] * (6 if boxed else 5)
    boxes = [Text("\n".join(",".join(f"{b[k]:.3f}" for k in ("x1", "y1", "x2", "y2")) for b in c.get("boxes", [])))]
    # no modality read (the reason column says why): a dash, not Python's "None"
    return [Text(c["modality"] or "–"), f"{c['start']:g}" if c["start"] is not None else "",
            f"{c['end']:g}" if c["end"] is not None else "", *(boxes if boxed else []),
            "yes" if c["valid"] else "NO", Text(c["reason"] or "")]


def _citations_table(doc: dict[str, Any]) -> Any:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="sentences and citations", show_lines=True)
    sentences: list[dict[str, Any]] = doc["sentences"]
    boxed = any("boxes" in c for s in sentences for c in s["citations"])
    for col in ("#", "sentence", "modality", "start", "end", *(["boxes (x1,y1,x2,y2 of 0-1)"] if boxed else []),
                "valid", "reason"):
        table.add_column(col)
    for s in sentences:
        for j, c in enumerate(s["citations"] or [None]):
            table.add_row(str(s["index"]) if j == 0 else "", Text(s["text"]) if j == 0 else "",
                          *_citation_cells(c, boxed))
    return table


def _cmd_citations(s: CitationsSettings) -> int:
    text = sys.stdin.read() if s.text == "-" else s.text
    try:
        frame = parse_frame_size(s.box_frame_size) if s.box_frame_size else None
    except BoxError as exc:
        raise SettingsError(f"--box-frame-size: {exc.reason}") from None
    doc = citations_doc(text, BoxConvention(units=s.box_units, order=s.box_order, frame_size=frame))
    if "error" in doc:
        raise SettingsError(doc["error"])
    if s.print_json:
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    from rich.text import Text

    from murgat.core.console import console  # rich: only when a table is drawn

    con = console()
    con.print(_citations_table(doc))
    for sent in doc["sentences"]:  # time-like text that is not a citation: said, never dropped
        for t in sent["time_like"]:
            con.print(Text(f"warning: sentence {sent['index']}: '{t['text']}' is not a citation ({t['reason']})"
                           + (f"; nearest accepted spelling: {t['nearest']}" if t["nearest"] else "")))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_command(sub, CitationsSettings, _cmd_citations, help="show the sentences of TEXT and their parsed citations")
