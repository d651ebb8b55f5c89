"""Grounding metrics against annotated (gold) evidence, as pure functions: spans in, figures out.

MURGAT-S asks a judge whether cited moments *support* a fact; these figures ask whether the
cited moments are *where the annotators put the evidence*. No media and no judge are needed.
All times are seconds, all boxes are ``(x1, y1, x2, y2)`` normalised to 0–1 from the top-left.

NExT-GQA (reproduces the official ``eval_ground.py``)
    The predicted span of a response is the hull of its valid visual citations
    (:func:`hull`); a single point stays a point. Against one gold segment ``g`` and a
    predicted span ``p`` (:func:`nextgqa_iou_iop`): a point gets IoU 0 and IoP 1 when
    ``g.start <= p <= g.end`` (ends included), else 0; a span gets
    ``inter = min(ends) - max(starts)`` (not clipped), IoU = inter / (max(ends) - min(starts))
    and IoP = inter / (p.end - p.start). IoU and IoP are each maximised *separately* over
    the gold segments of the question, starting from 0 (:func:`nextgqa_best`), so a
    negative overlap counts as 0. Thresholds are inclusive (``>=``). Acc@GQA counts a
    question when its best IoP ``>= 0.5`` and its answer is right. A response without a
    valid visual citation is not in the denominator (it is counted apart).

ReXTime / E.T.Bench
    Temporal IoU (:func:`temporal_iou`, overlap clipped at 0; a zero-length union is 0) of
    the *first* valid visual citation with the best gold window; R1@t = IoU >= t; a
    response without a visual citation scores IoU 0 and stays in the denominator.

murgat's set-level overlap (per response and per fact or sentence)
    Cited time C and gold time G are unions of intervals, kept apart per modality
    (visual time never meets audio time). Point citations are widened by the resolution
    they were written at (:func:`written_resolution`: ±1 s for ``M:SS``, ±0.1 s for
    ``M:SS.s``, …). IoP = |C ∩ G| / |C| (how much of what was cited is gold evidence),
    IoG = |C ∩ G| / |G| (how much of the gold was cited), IoU = |C ∩ G| / |C ∪ G|
    (:func:`set_overlap`). No citation scores 0 on all three, it is not skipped.

Evidence recall / precision (CiteVQA-style)
    A citation *hits* a gold item (:func:`hits`) when the modality matches; for pages
    the doc and page match, for time the temporal IoU (points widened as above) is
    ``>= 0.5``; and, when both carry boxes, the best box IoU over the pairs is ``>= 0.5``
    (gold boxes annotated at times inside the citation's span when there are any, else
    all of its boxes). Recall = crucial gold items hit / crucial items (``need="any"``:
    1 when any crucial item is hit); precision = citations that hit a gold item /
    citations. ``compat=True`` reproduces CiteVQA's released scorer, which puts the
    number of *gold items matched* in the precision numerator instead (capped at the
    number of citations so it cannot exceed 1).

Boxes over time (VidSTG / HC-STVG vIoU)
    On a time grid of step ``1/fps``, vIoU = Σ_{t ∈ T_i} IoU(pred box_t, gold box_t) / |T_u|,
    T_i the grid times in both the predicted and the gold span, T_u those in either
    (:func:`viou`). The gold box at ``t`` is the annotated box nearest in time; the
    predicted box at ``t`` is the best of the boxes of the citations covering ``t``.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

Span = tuple[float, float]
Box = tuple[float, float, float, float]

# ---------------------------------------------------------------- NExT-GQA


def hull(spans: Iterable[Span]) -> Span | None:
    """Smallest span holding every span; ``None`` when there is none."""
    spans = list(spans)
    if not spans:
        return None
    return (min(s for s, _ in spans), max(e for _, e in spans))


def nextgqa_iou_iop(gold: Span, pred: Span) -> tuple[float, float]:
    """IoU and IoP of one predicted span against one gold segment, by the official rules.

    Not clipped: a prediction disjoint from the segment gets a negative overlap, which
    :func:`nextgqa_best` then turns into 0 by starting its maxima at 0.
    """
    g0, g1 = gold
    p0, p1 = pred
    if p0 == p1:
        return 0.0, (1.0 if g0 <= p0 <= g1 else 0.0)
    inter = min(g1, p1) - max(g0, p0)
    union = max(g1, p1) - min(g0, p0)
    iou = inter / union if union > 0 else 0.0
    iop = inter / (p1 - p0) if p1 > p0 else 0.0
    return iou, iop


def nextgqa_best(golds: Sequence[Span], pred: Span) -> tuple[float, float]:
    """IoU and IoP each maximised separately over the gold segments, from 0."""
    best_iou = best_iop = 0.0
    for g in golds:
        iou, iop = nextgqa_iou_iop(g, pred)
        best_iou = max(best_iou, iou)
        best_iop = max(best_iop, iop)
    return best_iou, best_iop


# ---------------------------------------------------------------- temporal sets


def temporal_iou(a: Span, b: Span) -> float:
    """Standard temporal IoU; overlap clipped at 0; 0 when both are empty."""
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else 0.0


def best_iou(golds: Sequence[Span], pred: Span) -> float:
    """Best :func:`temporal_iou` of ``pred`` over the gold windows (0 when there is none)."""
    return max((temporal_iou(g, pred) for g in golds), default=0.0)


def merge(spans: Iterable[Span]) -> list[Span]:
    """Union of intervals as sorted, disjoint intervals (touching ones joined)."""
    out: list[list[float]] = []
    for s, e in sorted((min(a, b), max(a, b)) for a, b in spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def length(spans: Iterable[Span]) -> float:
    """Total length of the union of ``spans``."""
    return sum(e - s for s, e in merge(spans))


def intersection_length(a: Iterable[Span], b: Iterable[Span]) -> float:
    """Length of (∪a) ∩ (∪b)."""
    ma, mb = merge(a), merge(b)
    i = j = 0
    total = 0.0
    while i < len(ma) and j < len(mb):
        lo = max(ma[i][0], mb[j][0])
        hi = min(ma[i][1], mb[j][1])
        if hi > lo:
            total += hi - lo
        if ma[i][1] < mb[j][1]:
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True)
class Overlap:
    """Set-level overlap of cited and gold time."""

    iop: float
    iog: float
    iou: float


def set_overlap(cited: Mapping[str, Sequence[Span]], gold: Mapping[str, Sequence[Span]]) -> Overlap:
    """IoP, IoG and IoU of the cited time against the gold time, per modality then summed.

    Each argument maps a modality to its intervals. Empty cited time scores 0 on all
    three; the caller decides what to do when the gold has no time at all.
    """
    inter = sum(intersection_length(cited.get(m, ()), gold.get(m, ())) for m in set(cited) | set(gold))
    c = sum(length(v) for v in cited.values())
    g = sum(length(v) for v in gold.values())
    union = c + g - inter
    return Overlap(
        iop=inter / c if c > 0 else 0.0,
        iog=inter / g if g > 0 else 0.0,
        iou=inter / union if union > 0 else 0.0,
    )


_TIME_TOKEN = re.compile(r"[0-9]+(?::[0-9]{1,2}){0,2}(?:\.[0-9]+)?")


def written_resolution(raw: str, seconds: float) -> float:
    """The resolution ``seconds`` was written at in ``raw``: 1 s for ``0:12``, 0.1 s for ``0:12.5``.

    ``raw`` may hold several times (``visual, 0:12, 0:15.5``); the token whose value is
    ``seconds`` decides. 1 s when none matches (a citation built in code).
    """
    from murgat.core.citations import parse_time

    for tok in _TIME_TOKEN.findall(raw):
        value, problem = parse_time(tok) if ":" in tok else (float(tok), None)  # "12s" is read as 12
        if problem is None and abs(value - seconds) < 1e-6:
            return 10.0 ** -len(tok.split(".", 1)[1]) if "." in tok else 1.0
    return 1.0


def widen_point(t: float, resolution: float, duration: float | None = None) -> Span:
    """``t ± resolution`` clipped to ``[0, duration]``."""
    lo = max(0.0, t - resolution)
    hi = t + resolution
    if duration is not None:
        hi = min(hi, duration)
    return (lo, max(lo, hi))


# ---------------------------------------------------------------- boxes and evidence hits


def box_iou(a: Box, b: Box) -> float:
    """Area IoU of two ``(x1, y1, x2, y2)`` boxes; 0 when both are empty."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def best_box_iou(a: Sequence[Box], b: Sequence[Box]) -> float:
    """Best IoU over the pairs (several boxes = any of them)."""
    return max((box_iou(x, y) for x in a for y in b), default=0.0)


@dataclass(frozen=True)
class Unit:
    """One piece of evidence, cited or gold: a modality and where in it.

    Time evidence has ``span`` (points already widened); page evidence has ``page`` (and
    ``doc`` for multi-document items). ``boxes`` pairs each box with the time it was
    annotated at (``None`` for a box that holds for the whole unit).
    """

    modality: str
    span: Span | None = None
    page: int | None = None
    doc: str | None = None
    boxes: tuple[tuple[float | None, Box], ...] = ()
    crucial: bool = True


def _boxes_for(gold: Unit, span: Span | None) -> list[Box]:
    if span is not None:
        inside = [b for t, b in gold.boxes if t is not None and span[0] <= t <= span[1]]
        if inside:
            return inside
    return [b for _, b in gold.boxes]


def hits(cited: Unit, gold: Unit, time_threshold: float = 0.5, box_threshold: float = 0.5) -> bool:
    """Whether a citation hits a gold item (rules in the module docstring)."""
    if cited.modality != gold.modality:
        return False
    if gold.modality == "page":
        if cited.page != gold.page or (cited.doc or None) != (gold.doc or None):
            return False
    else:
        if cited.span is None or gold.span is None or temporal_iou(cited.span, gold.span) < time_threshold:
            return False
    if cited.boxes and gold.boxes:
        return best_box_iou([b for _, b in cited.boxes], _boxes_for(gold, cited.span)) >= box_threshold
    return True


@dataclass
class EvidenceScore:
    """Recall and precision of one response's citations against its gold items."""

    recall: float | None
    precision: float
    gold_hit: list[bool] = field(default_factory=list)
    citation_hit: list[bool] = field(default_factory=list)


def evidence_scores(cited: Sequence[Unit], gold: Sequence[Unit], need: str = "all", compat: bool = False,
                    time_threshold: float = 0.5, box_threshold: float = 0.5) -> EvidenceScore:
    """CiteVQA-style recall and precision; ``recall`` is ``None`` when no gold item is crucial."""
    table = [[hits(c, g, time_threshold, box_threshold) for g in gold] for c in cited]
    gold_hit = [any(row[j] for row in table) for j in range(len(gold))]
    citation_hit = [any(row) for row in table]
    crucial = [j for j, g in enumerate(gold) if g.crucial]
    if not crucial:
        recall = None
    elif need == "any":
        recall = 1.0 if any(gold_hit[j] for j in crucial) else 0.0
    else:
        recall = sum(gold_hit[j] for j in crucial) / len(crucial)
    if not cited:
        precision = 0.0
    elif compat:
        precision = min(sum(gold_hit), len(cited)) / len(cited)
    else:
        precision = sum(citation_hit) / len(cited)
    return EvidenceScore(recall, precision, gold_hit, citation_hit)


# ---------------------------------------------------------------- boxes over time


def viou(gold_boxes: Sequence[tuple[float, Box]], gold_span: Span, predicted: Sequence[tuple[Span, Sequence[Box]]],
         step: float) -> float:
    """vIoU of a predicted tube against a gold tube on a grid of ``step`` seconds.

    ``gold_boxes`` are the annotated ``(time, box)`` pairs; ``predicted`` holds, per cited
    span, the boxes the model drew for it. Grid times are multiples of ``step``.

    The sum runs over every grid time (a ``1/fps`` grid of a long span at a high frame rate has
    billions: a gold ``fps: 1e7`` once took 67 s for one response), but it is computed in time
    linear in the number of *breakpoints* — span ends and the midpoints between annotated times,
    where the gold box, the span membership or the covering citations can change: the grid
    times near each breakpoint are evaluated one by one, and each run of grid times between them,
    where every term is the same, is counted at once. The result is the grid sum (equal to
    summing every grid time up to float rounding)."""
    if step <= 0 or not math.isfinite(step):
        raise ValueError("the time step of vIoU must be positive")
    if not gold_boxes:
        return 0.0
    spans = [gold_span] + [s for s, _ in predicted]
    lo = min(s for s, _ in spans)
    hi = max(e for _, e in spans)
    eps = step * 1e-6
    by_time = dict(gold_boxes)  # a time annotated twice: its last box, as the grid sum always read it
    times = sorted(by_time)

    def term(k: int) -> tuple[bool, float]:
        t = k * step
        in_gold = gold_span[0] - eps <= t <= gold_span[1] + eps
        covering = [boxes for (s, e), boxes in predicted if s - eps <= t <= e + eps]
        if not in_gold and not covering:
            return False, 0.0
        if not (in_gold and covering):
            return True, 0.0
        g = by_time[_nearest(times, t)]
        return True, max((box_iou(b, g) for boxes in covering for b in boxes), default=0.0)

    k_lo = math.floor(lo / step - 1e-9)
    k_hi = math.ceil(hi / step + 1e-9)
    breaks = [gold_span[0], gold_span[1], *(x for (s, e), _ in predicted for x in (s, e)),
              *((a + b) / 2 for a, b in itertools.pairwise(times))]
    special = {k_lo, k_hi}
    for b in breaks:
        c = math.floor(b / step)
        special.update(k for k in range(c - 2, c + 4) if k_lo <= k <= k_hi)
    return _grid_mean(sorted(special), term)


def _nearest(times: Sequence[float], t: float) -> float:
    """The annotated time closest to ``t`` (sorted ``times``); on a tie the earlier one (the first
    minimum of the sorted times)."""
    i = bisect.bisect_left(times, t)
    if i == 0:
        return times[0]
    if i == len(times):
        return times[-1]
    a, b = times[i - 1], times[i]
    return a if abs(a - t) <= abs(b - t) else b


def _grid_mean(special: Sequence[int], term: Callable[[int], tuple[bool, float]]) -> float:
    """vIoU's mean over the grid times in the union of the tubes: ``term(k)`` at each ``special``
    step (sorted), and each run of steps between two of them counted at once from its first term
    (every grid time of such a run has the same term); 0.0 when no grid time is inside."""
    n_union = 0
    total = 0.0
    previous: int | None = None
    for k in special:
        if previous is not None and k - previous > 1:
            inside, value = term(previous + 1)  # every grid time of the run has this term
            if inside:
                n_union += k - previous - 1
                total += value * (k - previous - 1)
        inside, value = term(k)
        if inside:
            n_union += 1
            total += value
        previous = k
    return total / n_union if n_union else 0.0
