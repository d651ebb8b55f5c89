"""``murgat ground``: responses + gold evidence → grounding figures with bootstrap CIs.

Reads a response file (any format :mod:`murgat.core.inputs` reads) and a gold JSONL
(:mod:`murgat.core.gold`), parses each response's citations with murgat's citation
grammar (and CiteVQA-style ``<bbox page=…>`` tags), and scores them with the pure
functions of :mod:`murgat.commands.ground.metric`. No media and no judge: durations come from
the gold file. Answer correctness is the score command's rule (option letter of the
response against the gold option); free-form answers take a grade the response record
carries (``correct``, or a 0–5 judge ``answer_score``, right at ≥ 4). MURGAT-S for
``SAA_cite`` comes from a score run folder or a ``murgat_s`` field of the record.

A run folder holds ``config.json`` (``kind: ground``), ``results.jsonl`` (one
:class:`GroundRecord` per response) and ``summary.json`` (:class:`GroundSummary`), each
written whole and renamed into place: the figures take seconds, so a rerun recomputes
instead of resuming. The folder is claimed by the one output rule (:mod:`murgat.engine.outputs`):
a score run's folder, or one holding files no ground run wrote, is refused.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from murgat.commands.ground import metric as gm
from murgat.core.answers import Grade
from murgat.core.gold import GoldItem, load_gold
from murgat.core.grounding import ClaimOverlap, GroundRecord, GroundSummary
from murgat.core.metric import AnswerState
from murgat.core.schema import Citation, Interval, Item


class GroundSettings(BaseModel):
    """Options of ``murgat ground`` (one field per option)."""

    model_config = ConfigDict(extra="forbid")

    citevqa_compat: bool = Field(default=False, description="evidence precision as CiteVQA's released scorer counts it "
                                                            "(gold items matched / citations)")
    attributed_threshold: float = Field(default=0.5, description="MURGAT-S needed for SAA_cite")
    recall_threshold: float = Field(default=0.6, description="evidence recall needed for SAA (CiteVQA's 0.6)")
    time_iou_threshold: float = Field(default=0.5, description="time IoU for a citation to hit a gold item")
    box_iou_threshold: float = Field(default=0.5, description="box IoU for a citation to hit a gold item")
    end_tolerance_s: float = Field(default=1.0, description="citations may end this far past the gold duration")
    cluster_by_video: bool = Field(default=False, description="bootstrap resamples whole videos")
    n_resamples: int = Field(default=2000, description="bootstrap resamples")
    seed: int = Field(default=0, description="bootstrap seed")
    score_run: str | None = Field(default=None, description="a murgat score run folder: MURGAT-S per item and facts")
    max_response_chars: int = Field(default=200_000, ge=1, description="a longer response gets a response_too_long "
                                                                       "error record instead of being read")


class GroundResult(BaseModel):
    summary: GroundSummary
    records: list[GroundRecord]
    #: ``ground --by``: the figures per group of item fields (:func:`ground_breakdown`), else None
    breakdown: dict[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        """``summary.json`` (and ``--json``): the summary, with ``breakdown`` only when ``--by`` asked for it."""
        doc = self.summary.model_dump(mode="json")
        return doc if self.breakdown is None else {**doc, "breakdown": self.breakdown}


# ---------------------------------------------------------------- per response


def _gold_time(gold: GoldItem) -> dict[str, list[gm.Span]]:
    out: dict[str, list[gm.Span]] = {}
    for e in gold.evidence:
        if e.modality != "page" and e.start is not None and e.end is not None:
            out.setdefault(e.modality, []).append((e.start, e.end))
    return out


def _cited_span(c: Citation, duration: float | None) -> gm.Span:
    """The time a valid citation covers, a point widened by its written resolution."""
    assert c.start is not None and c.end is not None
    if c.start == c.end:
        return gm.widen_point(c.start, gm.written_resolution(c.raw, c.start), duration)
    return (c.start, c.end)


def _boxes_of(c: Citation) -> tuple[tuple[float | None, gm.Box], ...]:
    return tuple((None, (b.x1, b.y1, b.x2, b.y2)) for b in (getattr(c, "boxes", None) or []))


def _units(cites: Sequence[Citation], pages: Sequence[Any], n_bad_pages: int, duration: float | None) -> list[gm.Unit]:
    units: list[gm.Unit] = []
    for c in cites:
        if c.valid and c.modality in ("visual", "audio") and c.start is not None and c.end is not None:
            units.append(gm.Unit(c.modality, span=_cited_span(c, duration), boxes=_boxes_of(c)))
        else:
            units.append(gm.Unit("invalid"))
    for p in pages:
        units.append(gm.Unit("page", page=p.page, doc=p.doc, boxes=tuple((b.t, b.xyxy()) for b in p.boxes)))
    units.extend(gm.Unit("invalid") for _ in range(n_bad_pages))
    return units


def _gold_units(gold: GoldItem) -> list[gm.Unit]:
    return [gm.Unit(e.modality, span=None if e.modality == "page" else (e.start or 0.0, e.end or 0.0),
                    page=e.page, doc=e.doc, boxes=tuple((b.t, b.xyxy()) for b in e.boxes),
                    crucial=e.role == "crucial") for e in gold.evidence]


def _cited_time(cites: Sequence[Citation], duration: float | None) -> dict[str, list[gm.Span]]:
    out: dict[str, list[gm.Span]] = {}
    for c in cites:
        if c.valid and c.modality in ("visual", "audio") and c.start is not None and c.end is not None:
            out.setdefault(c.modality, []).append(_cited_span(c, duration))
    return out


def _viou(gold: GoldItem, visual: Sequence[Citation]) -> float | None:
    tubes = [e for e in gold.evidence if e.modality == "visual" and any(b.t is not None for b in e.boxes)]
    if not tubes:
        return None
    predicted = [(_cited_span(c, gold.duration), [b for _, b in _boxes_of(c)]) for c in visual if _boxes_of(c)]
    values = []
    for e in tubes:
        pairs = sorted((b.t, b.xyxy()) for b in e.boxes if b.t is not None)
        if gold.fps:
            step = 1.0 / gold.fps
        else:
            gaps = [b[0] - a[0] for a, b in itertools.pairwise(pairs) if b[0] > a[0]]
            step = min(gaps) if gaps else 1.0
        values.append(gm.viou(pairs, (e.start or 0.0, e.end or 0.0), predicted, step) if predicted else 0.0)
    return max(values) if gold.need == "any" else sum(values) / len(values)


def _options_seen(item: Item, gold: GoldItem) -> list[str] | None:
    """The options the model saw: the response's own when it lists them, else the gold's choices."""
    return item.options or (list(gold.answer.choices) if gold.answer and gold.answer.choices else None)


def _correct(item: Item, gold: GoldItem, pre: Any, score: Any) -> tuple[Grade, str | None]:
    """How the response's answer is graded, and by what rule. The option rule is the one every command
    uses (:func:`murgat.core.answers.grade` of the reading :func:`~murgat.core.answers.read_answer` made): an
    answer that cannot be read is unknown (``correct`` None with the reason), never wrong."""
    from murgat.core.answers import LETTERS, gold_option, grade

    if gold.answer is not None and gold.answer.index is not None:
        # the letter is read in the options the model saw: the response's own when it lists them
        # (the gold text found there), else the gold's choices
        text = gold.answer.text or ""
        own = item.options and any(o.strip().lower() == text.strip().lower() for o in item.options)
        if own:
            return grade(pre.reading, text, item.options), "option rule"
        return grade(pre.reading, LETTERS[gold.answer.index], gold.answer.choices), "option rule"
    if item.gold and item.options and gold_option(item.gold, item.options) is not None:
        return grade(pre.reading, item.gold, item.options), "option rule"
    extra = item.model_extra or {}
    if isinstance(extra.get("correct"), bool):
        return Grade(extra["correct"]), "record grade"
    score_0_5 = extra.get("answer_score")
    if isinstance(score_0_5, int | float) and not isinstance(score_0_5, bool):
        return Grade(score_0_5 >= 4), "answer_score"
    if score is not None and score.correct is not None:
        return Grade(score.correct), "score run"
    if score is not None and score.answer_problem is not None:
        return Grade(None, score.answer_problem), "score run"
    return Grade(None), None


def ground_response(item: Item, gold: GoldItem, s: GroundSettings, score: Any = None) -> GroundRecord:
    """All grounding figures of one response against its gold (see the metric module)."""
    from murgat.core.gold import bbox_tags

    rec = GroundRecord(id=item.id, video=gold.video or item.media)
    pre, sents, cites = _citations_of(item, gold, s)
    pages, bad_pages, _ = bbox_tags(item.response, item.id, strict=False)
    rec.n_citations = len(cites) + len(pages) + len(bad_pages)
    rec.n_invalid = sum(1 for c in cites if not c.valid) + len(bad_pages)
    visual = [c for c in cites if c.valid and c.modality == "visual" and c.start is not None and c.end is not None]
    rec.n_valid_visual = len(visual)
    _time_figures(rec, gold, visual, cites, sents, score)
    # CiteVQA-style evidence recall / precision
    if gold.evidence:
        ev = gm.evidence_scores(_units(cites, pages, len(bad_pages), gold.duration), _gold_units(gold), gold.need,
                                s.citevqa_compat, s.time_iou_threshold, s.box_iou_threshold)
        rec.evidence_recall, rec.evidence_precision, rec.gold_hit = ev.recall, ev.precision, ev.gold_hit
    rec.viou = _viou(gold, visual)
    _answer_figures(rec, item, gold, pre, score, s)
    return rec


def _citations_of(item: Item, gold: GoldItem, s: GroundSettings) -> tuple[Any, list[Any], list[Citation]]:
    """The response read as score reads it: its answer split off, its sentences, and every citation
    (the answer's too), checked against the gold's duration when it has one."""
    from murgat.core.citations import check_durations, parse_citations
    from murgat.core.text import preprocess, split_sentences

    options = _options_seen(item, gold)
    pre = preprocess(item.response, len(options or []) or 10, options)
    durations: dict[str, float | None] = {"visual": gold.duration, "audio": gold.duration}
    sents = split_sentences(pre.reasoning)
    answer_cites = parse_citations(pre.answer) if pre.answer else []
    if gold.duration is not None:
        sents = [x.model_copy(update={"citations": check_durations(x.citations, durations, s.end_tolerance_s)})
                 for x in sents]
        answer_cites = check_durations(answer_cites, durations, s.end_tolerance_s)
    return pre, sents, [c for x in sents for c in x.citations] + answer_cites


def _time_figures(rec: GroundRecord, gold: GoldItem, visual: list[Citation], cites: list[Citation],
                  sents: list[Any], score: Any) -> None:
    """NExT-GQA (hull of the valid visual citations), ReXTime (the first one) and murgat's set-level
    overlap per response and per claim (a fact of the score run where there is one, else a sentence)."""
    gold_time = _gold_time(gold)
    gold_visual = gold_time.get("visual", [])
    if visual:
        rec.predicted_span = gm.hull((c.start, c.end) for c in visual)  # type: ignore[misc]
        rec.first_span = (visual[0].start, visual[0].end)  # type: ignore[assignment]
    if gold_visual:
        if rec.predicted_span is not None:
            rec.nextgqa_iou, rec.nextgqa_iop = gm.nextgqa_best(gold_visual, rec.predicted_span)
        rec.rextime_iou = gm.best_iou(gold_visual, rec.first_span) if rec.first_span else 0.0
    if not gold_time:
        return
    ov = gm.set_overlap(_cited_time(cites, gold.duration), gold_time)
    rec.iop, rec.iog, rec.iou = ov.iop, ov.iog, ov.iou
    claims: list[tuple[str, int, list[Citation]]]
    if score is not None and score.sentences:
        claims = [("fact", f.index, list(f.citations)) for sr in score.sentences for f in sr.facts if f.citations]
    else:
        claims = [("sentence", x.index, list(x.citations)) for x in sents if x.citations]
    for unit, idx, cs in claims:
        o = gm.set_overlap(_cited_time(cs, gold.duration), gold_time)
        rec.claims.append(ClaimOverlap(unit=unit, index=idx, iop=o.iop, iog=o.iog, iou=o.iou))  # type: ignore[arg-type]


def _answer_figures(rec: GroundRecord, item: Item, gold: GoldItem, pre: Any, score: Any, s: GroundSettings) -> None:
    """The answer graded, MURGAT-S where known, and strict attributed accuracy (SAA, SAA_cite)."""
    g, rec.correct_from = _correct(item, gold, pre, score)
    rec.correct, rec.answer_problem = g.correct, g.answer_problem
    extra = item.model_extra or {}
    if score is not None and score.scores.murgat_s is not None:
        rec.murgat_s = score.scores.murgat_s
    elif isinstance(extra.get("murgat_s"), int | float) and not isinstance(extra.get("murgat_s"), bool):
        rec.murgat_s = float(extra["murgat_s"])
    # an unread answer is not correct: SAA and SAA_cite are False for it (as the official scorers count it)
    right = rec.correct if rec.answer_problem is None else False
    if right is not None and rec.evidence_recall is not None:
        evidence_ok = rec.evidence_recall >= s.recall_threshold
        rec.saa = right and evidence_ok
        if rec.murgat_s is not None:
            rec.saa_cite = right and (evidence_ok or rec.murgat_s >= s.attributed_threshold)


def _state(r: GroundRecord) -> AnswerState | None:
    """How a record counts towards accuracy, Acc@GQA and ReXTime's acc&IoU (``None``: no gold answer)."""
    if r.answer_problem is not None:
        return "unknown"
    return None if r.correct is None else "right" if r.correct else "wrong"


# ---------------------------------------------------------------- run level


def _ci(rows: Sequence[tuple[float, str]], s: GroundSettings, scale: float = 1.0) -> dict[str, Any]:
    from murgat.core.metric import bootstrap_ci

    vals = [v for v, _ in rows]
    clusters = [c for _, c in rows] if s.cluster_by_video else None
    iv = bootstrap_ci(vals, clusters, s.n_resamples, s.seed)
    if iv.value is None:
        return iv.model_dump()
    lo, hi = iv.ci_low, iv.ci_high
    if clusters is not None and len(set(clusters)) < 2:
        lo = hi = None  # resampling one video gives it back every time: no interval, not a zero-width one
    return Interval(value=iv.value * scale, ci_low=None if lo is None else lo * scale,
                    ci_high=None if hi is None else hi * scale, n=iv.n).model_dump()


def _rows(ok: Sequence[GroundRecord], f: Any, keep: Any = lambda r: True) -> list[tuple[float, str]]:
    """``(f(record), cluster)`` for each record ``keep`` admits (the cluster: its video, else its id)."""
    return [(float(f(r)), r.video or r.id) for r in ok if keep(r)]


def _nextgqa(ok: Sequence[GroundRecord], s: GroundSettings) -> dict[str, Any]:
    with_time = [r for r in ok if r.rextime_iou is not None]  # gold has visual time
    if not with_time:
        return {}
    ng = [r for r in with_time if r.nextgqa_iop is not None]
    iop: Callable[[GroundRecord], Any] = lambda r: r.nextgqa_iop  # noqa: E731
    iou: Callable[[GroundRecord], Any] = lambda r: r.nextgqa_iou  # noqa: E731
    has: Callable[[GroundRecord], bool] = lambda r: r.nextgqa_iop is not None  # noqa: E731
    # Acc@GQA as the official eval_ground.py counts it: over every question with a predicted span, an
    # answer that could not be read being not correct
    graded = [r for r in ng if _state(r) is not None]
    return {
        "acc_gqa": _ci([(float(r.correct is True and (r.nextgqa_iop or 0.0) >= 0.5), r.video or r.id)
                        for r in graded], s, 100)
        if graded else None,
        "miop": _ci(_rows(ok, iop, has), s, 100),
        "iop@0.3": _ci(_rows(ok, lambda r: iop(r) >= 0.3, has), s, 100),
        "iop@0.5": _ci(_rows(ok, lambda r: iop(r) >= 0.5, has), s, 100),
        "miou": _ci(_rows(ok, iou, has), s, 100),
        "iou@0.3": _ci(_rows(ok, lambda r: iou(r) >= 0.3, has), s, 100),
        "iou@0.5": _ci(_rows(ok, lambda r: iou(r) >= 0.5, has), s, 100),
        "n": len(ng),
        "n_without_visual_citation": len(with_time) - len(ng),
        "n_answer_unknown": sum(1 for r in graded if _state(r) == "unknown"),
        "n_without_gold_answer": len(ng) - len(graded),
    }


def _rextime(ok: Sequence[GroundRecord], s: GroundSettings) -> dict[str, Any]:
    with_time = [r for r in ok if r.rextime_iou is not None]
    if not with_time:
        return {}
    in_t = lambda r: r.rextime_iou is not None  # noqa: E731
    rextime: dict[str, Any] = {f"r1@{t}": _ci(_rows(ok, lambda r, t=t: r.rextime_iou >= t, in_t), s, 100)
                               for t in (0.3, 0.5, 0.7)}
    rextime["miou"] = _ci(_rows(ok, lambda r: r.rextime_iou, in_t), s, 100)
    answered = [r for r in with_time if _state(r) is not None]
    for t in (0.3, 0.5, 0.7):
        rextime[f"acc&iou@{t}"] = (_ci([(float(r.correct is True and (r.rextime_iou or 0.0) >= t), r.video or r.id)
                                        for r in answered], s, 100) if answered else None)
    rextime["n"] = len(with_time)
    return rextime


def _overlap(ok: Sequence[GroundRecord], s: GroundSettings) -> dict[str, Any]:
    timed = [r for r in ok if r.iop is not None]
    if not timed:
        return {}
    overlap: dict[str, Any] = {k: _ci(_rows(ok, lambda r, k=k: getattr(r, k), lambda r: r.iop is not None), s)
                               for k in ("iop", "iog", "iou")}
    with_claims = lambda r: bool(r.claims)  # noqa: E731
    for k in ("iop", "iog", "iou"):
        overlap[f"claim_{k}"] = _ci(_rows(ok, lambda r, k=k: sum(getattr(c, k) for c in r.claims) / len(r.claims),
                                          with_claims), s)
    overlap["n"] = len(timed)
    overlap["n_claims"] = sum(len(r.claims) for r in timed)
    overlap["claim_unit"] = "fact" if any(c.unit == "fact" for r in timed for c in r.claims) else "sentence"
    return overlap


def _evidence(ok: Sequence[GroundRecord], s: GroundSettings) -> dict[str, Any]:
    ev = [r for r in ok if r.evidence_recall is not None]
    if not ev:
        return {}
    return {
        "recall": _ci(_rows(ok, lambda r: r.evidence_recall, lambda r: r.evidence_recall is not None), s),
        "precision": _ci(_rows(ok, lambda r: r.evidence_precision, lambda r: r.evidence_recall is not None), s),
        "precision_rule": "citevqa-compat (gold items matched / citations)" if s.citevqa_compat
        else "citations that hit a gold item / citations",
        "n": len(ev),
    }


def _boxes(ok: Sequence[GroundRecord], s: GroundSettings) -> dict[str, Any]:
    bx = [r for r in ok if r.viou is not None]
    if not bx:
        return {}
    has_v = lambda r: r.viou is not None  # noqa: E731
    return {"m_viou": _ci(_rows(ok, lambda r: r.viou, has_v), s),
            "viou@0.3": _ci(_rows(ok, lambda r: r.viou >= 0.3, has_v), s),
            "viou@0.5": _ci(_rows(ok, lambda r: r.viou >= 0.5, has_v), s), "n": len(bx)}


def _answers(ok: Sequence[GroundRecord], s: GroundSettings) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    graded = [r for r in ok if _state(r) is not None]
    if graded:
        # an answer that could not be read counts as not correct; accuracy_answered is over the answers read
        answers["accuracy"] = _ci(_rows(ok, lambda r: r.correct is True, lambda r: _state(r) is not None), s)
        read = [r for r in graded if _state(r) != "unknown"]
        answers["accuracy_answered"] = _ci(_rows(ok, lambda r: r.correct is True,
                                                 lambda r: _state(r) in ("right", "wrong")), s) if read else None
        sa = [r for r in graded if r.saa is not None]
        answers["saa"] = _ci(_rows(ok, lambda r: r.saa, lambda r: r.saa is not None), s) if sa else None
        sc = [r for r in graded if r.saa_cite is not None]
        answers["saa_cite"] = _ci(_rows(ok, lambda r: r.saa_cite, lambda r: r.saa_cite is not None), s) if sc else None
        answers["n"] = len(graded)
        answers["n_without_murgat_s"] = len(sa) - len(sc)
        answers["recall_threshold"] = s.recall_threshold
        answers["attributed_threshold"] = s.attributed_threshold
    answers["n_answer_unknown"] = sum(1 for r in graded if _state(r) == "unknown")
    answers["n_without_gold_answer"] = len(ok) - len(graded)
    return answers


def summarize_ground(records: Sequence[GroundRecord], gold: dict[str, GoldItem], s: GroundSettings) -> GroundSummary:
    """Run-level figures with seeded bootstrap CIs (records in id order, so the CIs do not depend on input order)."""
    records = sorted(records, key=lambda r: r.id)
    ok = [r for r in records if r.error is None]
    seen = {r.id for r in records}
    notes = []
    videos = {r.video or r.id for r in ok}
    if s.cluster_by_video and len(videos) < 2:
        notes.append(f"--cluster-by-video: the responses are about {len(videos)} video(s); a bootstrap over whole "
                     "videos cannot estimate an interval from fewer than 2, so no CI is given")
    return GroundSummary(
        n_responses=len(records), n_errors=len(records) - len(ok), n_gold=len(gold),
        n_gold_without_response=sum(1 for k in gold if k not in seen), notes=notes,
        nextgqa=_nextgqa(ok, s), rextime=_rextime(ok, s), overlap=_overlap(ok, s), evidence=_evidence(ok, s),
        boxes=_boxes(ok, s), answers=_answers(ok, s),
        settings=s.model_dump() | {"bootstrap": {"n_resamples": s.n_resamples, "seed": s.seed,
                                                 "clustered_by": "video" if s.cluster_by_video else None}},
    )


#: a ground record's own fields ``--by`` can group on, beside its item's (:func:`murgat.core.breakdown.item_fields`)
GROUND_OUTCOME_FIELDS = ("video", "correct", "gold")
#: what a family of figures needs, for the reason a group has none of them
FAMILY_NEEDS = {"nextgqa": "gold visual time", "rextime": "gold visual time", "overlap": "gold time",
                "evidence": "gold evidence", "boxes": "gold boxes over time", "answers": "a gold answer"}


def _undefined(summary: GroundSummary) -> dict[str, str]:
    """Why a group's figures are undefined (``family`` or ``family.figure`` → reason): null, never 0."""
    out: dict[str, str] = {}
    doc = summary.model_dump()
    for family, needs in FAMILY_NEEDS.items():
        figures = {k: v for k, v in doc[family].items() if isinstance(v, dict) or v is None}
        if not figures or all(v is None for v in figures.values()):
            out[family] = f"no response of this group has {needs}"
            continue
        for k, v in figures.items():
            if v is None or v.get("value") is None:
                out[f"{family}.{k}"] = "no response of this group has this figure"
    return out


def ground_breakdown(records: Sequence[GroundRecord], fields: dict[str, dict[str, Any]], gold: dict[str, GoldItem],
                     s: GroundSettings, by: Sequence[str]) -> dict[str, Any]:
    """``ground --by``: the grounding figures per group of ``by`` (:func:`murgat.core.breakdown.grouped` over
    ``fields``, id → the fields of the record's item and its own), each group's exactly
    :func:`summarize_ground` of its records and their gold, with ``n`` and why a figure is undefined."""
    from murgat.core.breakdown import field_names, grouped, label_of

    groups, list_valued = grouped(list(records), by, lambda r: fields.get(r.id, {}))
    out = []
    for key, members in groups:
        summary = summarize_ground(members, {r.id: gold[r.id] for r in members if r.id in gold}, s)
        doc = summary.model_dump(mode="json", exclude={"settings", "kind", "n_gold_without_response"})
        out.append({"values": list(key), "label": label_of(key), "n_items": len(members), **doc,
                    "undefined": _undefined(summary)})
    return {"by": list(field_names(by)), "n_items": len(records), "list_valued": list_valued,
            "note": (f"list-valued field(s) {', '.join(list_valued)}: a response counts once in each of its values, "
                     "so the groups' n add up to more than the run's") if list_valued else None, "groups": out}


def _score_records(folder: str) -> dict[str, Any]:
    from murgat.engine.folder import RunFolder

    p = Path(folder)
    if not (p / "results.jsonl").is_file():
        raise FileNotFoundError(f"{p}: not a murgat score run (no results.jsonl)")
    return {r.id: r for r in RunFolder(p, repair=False).latest_results()}


#: what a ground run folder holds (``.lock`` while a ground run writes it)
GROUND_FILES = ("config.json", "results.jsonl", "summary.json")


def ground(responses: str | Path, gold: str | Path | dict[str, GoldItem], out: str | Path | None = None,
           settings: GroundSettings | None = None, by: Sequence[str] = ()) -> GroundResult:
    """Score ``responses`` against ``gold``; write a run folder to ``out`` when given.

    ``out`` is claimed first by the one output rule (:mod:`murgat.engine.outputs`): a folder of
    another kind (a score run) or holding files no ground run wrote is refused before any work,
    and the folder is locked while it is written. Responses are read as ``murgat score`` reads
    them (a repeated id is refused, in JSONL and JSON-list files alike). A response whose id has
    no gold gets an error record with the reason, and so does one over ``max_response_chars``
    (``response_too_long``, never read) and one whose grounding fails (an ``internal_error``,
    named); the others are scored. ``by`` (``--by``): the figures per group of those item fields
    as well (:func:`ground_breakdown`); a field no response's item has is
    :class:`~murgat.core.breakdown.UnknownField`, before anything is written.
    """
    from murgat.core.breakdown import check_by, fields_available, item_fields
    from murgat.core.datasets import load_responses

    s = settings or GroundSettings()
    claim = None

    def claim_out(where: str | Path) -> Any:
        from murgat.engine.outputs import claim_output

        return claim_output(where, role="folder", kind="ground", files=GROUND_FILES, what=f"--out {out}",
                            inputs=[responses, None if isinstance(gold, dict) else gold,
                                    Path(s.score_run) / "results.jsonl" if s.score_run else None])

    if out is not None:
        claim = claim_out(out)
    gold_items = gold if isinstance(gold, dict) else load_gold(gold)
    scores = _score_records(s.score_run) if s.score_run else {}
    # read as score reads it (a dataset spec too): a repeated id is refused there, naming it; a response over the
    # cap is marked, never read
    items = load_responses(str(responses), max_response_chars=s.max_response_chars)
    fields = {it.id: item_fields(it) | {"gold": it.gold} for it in items}
    if by:
        check_by(by, fields_available([*fields.values(), dict.fromkeys(GROUND_OUTCOME_FIELDS)]))
    records = [_record(item, gold_items.get(item.id), s, scores.get(item.id)) for item in items]
    summary = summarize_ground(records, gold_items, s)
    result = GroundResult(summary=summary, records=records)
    if by:
        for r in records:
            fields[r.id] = {**fields.get(r.id, {}), "video": r.video, "correct": r.correct}
        result.breakdown = ground_breakdown(records, fields, gold_items, s, by)
    if claim is not None:
        # absolute paths: the viewer re-reads the gold later, from wherever it is run
        config = json.dumps({"kind": "ground", "responses": str(Path(responses).resolve()),
                             "gold": None if isinstance(gold, dict) else str(Path(gold).resolve()),
                             "settings": s.model_dump()}, indent=2)
        _write_run(claim, claim_out, config, result)
    return result


def _record(item: Item, g: GoldItem | None, s: GroundSettings, score: Any) -> GroundRecord:
    """One response's ground record, or its error record (over the cap, no gold, a grounding that failed)."""
    if item.input_problem:
        return GroundRecord(id=item.id, video=g.video if g else item.media, error=item.input_problem)
    if g is None:
        return GroundRecord(id=item.id, video=item.media, error="no_gold: the gold file has no item with this id")
    try:
        return ground_response(item, g, s, score)
    except Exception as exc:
        return GroundRecord(id=item.id, video=g.video or item.media, error=f"internal_error: {type(exc).__name__}: {exc}")


def _write_run(claim: Any, claim_out: Callable[[Path], Any], config: str, result: GroundResult) -> None:
    """The run folder's three files, under the folder's lock (one ground process writes it at a time)."""
    from murgat.core.jsonl import escape_line
    from murgat.engine.runlock import RunLock

    with RunLock(claim.target):
        # claimed again under the lock: a command that made the folder its run while this one
        # worked (a score run started on the same --out) keeps it, as it would have before
        claim = claim_out(claim.path)
        claim.file("config.json").write_text(config)
        # JSONL lines escape U+2028/U+2029/U+0085 like every murgat stream
        claim.file("results.jsonl").write_text("".join(escape_line(r.model_dump_json()) + "\n" for r in result.records))
        claim.file("summary.json").write_text(result.summary.model_dump_json(indent=2) if result.breakdown is None
                                              else json.dumps(result.document(), indent=2, ensure_ascii=False))


def ground_score_run(args: Any, run: Path) -> dict[str, Any]:
    """The ``murgat score … --gold GOLD`` hook: ground the scored input into ``RUN/grounding``.

    Uses the score run just written for MURGAT-S (``SAA_cite``) and its facts (per-fact
    overlap), and the score command's bootstrap settings. Returns what goes into the score
    summary's ``extra``: ``{"grounding": summary}``, or ``{"grounding_error": reason}`` when
    the gold cannot be used (the scores are kept either way).
    """
    import sys

    from murgat.core.breakdown import UnknownField
    from murgat.core.gold import GoldFormatError
    from murgat.core.inputs import InputError
    from murgat.engine.folder import NotWritable
    from murgat.engine.runlock import RunLocked

    s = GroundSettings(attributed_threshold=args.attributed_threshold, cluster_by_video=args.cluster_by_video,
                       n_resamples=args.bootstrap, seed=args.seed, end_tolerance_s=args.end_tolerance,
                       score_run=str(run), **({"max_response_chars": args.max_response_chars}
                                              if getattr(args, "max_response_chars", None) else {}))
    by = list(getattr(args, "by", None) or ())
    try:
        try:
            res = ground(args.input, args.gold, run / "grounding", s, by=by)
        except UnknownField as exc:  # a score record's own field (case, predicted_option): the grounding is kept
            print(f"note: the grounding figures are not broken down: {exc}", file=sys.stderr)
            res = ground(args.input, args.gold, run / "grounding", s)
    except (GoldFormatError, InputError, NotWritable, RunLocked, OSError, ValueError) as exc:
        # whatever makes the gold unusable (unreadable, not UTF-8, a bad field, RUN/grounding not ours
        # to write): said, and the scores are kept — the summary and report are still written
        print(f"error: grounding against --gold not computed: {exc}", file=sys.stderr)
        return {"grounding_error": str(exc)}
    return {"grounding": res.summary.model_dump() if res.breakdown is None else res.document()}
