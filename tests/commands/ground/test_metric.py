"""Hand-computed cases for every grounding metric (murgat/commands/ground/metric.py)."""

from __future__ import annotations

import pytest

from murgat.commands.ground import metric as gm


def test_nextgqa_span_against_one_segment() -> None:
    # inter = 20 - 15 = 5, union = 25 - 10 = 15, predicted length 10
    iou, iop = gm.nextgqa_iou_iop((10, 20), (15, 25))
    assert iou == pytest.approx(5 / 15) and iop == pytest.approx(0.5)


def test_nextgqa_point_stays_a_point() -> None:
    assert gm.nextgqa_iou_iop((10, 20), (15, 15)) == (0.0, 1.0)
    assert gm.nextgqa_iou_iop((10, 20), (20, 20)) == (0.0, 1.0)  # ends included
    assert gm.nextgqa_iou_iop((10, 20), (21, 21)) == (0.0, 0.0)


def test_nextgqa_disjoint_is_negative_per_segment_and_zero_at_best() -> None:
    # inter = 20 - 25 = -5, union = 30 - 10 = 20: the official rule does not clip
    iou, iop = gm.nextgqa_iou_iop((10, 20), (25, 30))
    assert iou == pytest.approx(-0.25) and iop == pytest.approx(-1.0)
    assert gm.nextgqa_best([(10, 20)], (25, 30)) == (0.0, 0.0)


def test_nextgqa_iou_and_iop_maximised_separately_over_segments() -> None:
    # pred 8-13. seg 0-10: inter 2, union 13, IoP 2/5. seg 12-13: inter 1, union 5, IoP 1/5
    iou, iop = gm.nextgqa_best([(0, 10), (12, 13)], (8, 13))
    assert iou == pytest.approx(1 / 5)  # from the second segment
    assert iop == pytest.approx(2 / 5)  # from the first


def test_hull() -> None:
    assert gm.hull([(3, 5), (40, 40)]) == (3, 40)
    assert gm.hull([(7, 7)]) == (7, 7)
    assert gm.hull([]) is None


def test_temporal_iou() -> None:
    assert gm.temporal_iou((0, 10), (5, 15)) == pytest.approx(5 / 15)
    assert gm.temporal_iou((0, 10), (5, 5)) == 0.0
    assert gm.temporal_iou((0, 10), (20, 30)) == 0.0
    assert gm.best_iou([(0, 10), (20, 30)], (22, 30)) == pytest.approx(0.8)
    assert gm.best_iou([], (0, 1)) == 0.0


def test_set_overlap_of_disjoint_spans() -> None:
    # cited ∪ = [0,3] ∪ [10,12] (5 s); gold [2,11] (9 s); ∩ = [2,3] + [10,11] = 2 s
    o = gm.set_overlap({"visual": [(0, 2), (1, 3), (10, 12)]}, {"visual": [(2, 11)]})
    assert o.iop == pytest.approx(2 / 5) and o.iog == pytest.approx(2 / 9) and o.iou == pytest.approx(2 / 12)


def test_set_overlap_keeps_modalities_apart() -> None:
    # 5 s of audio adds to the cited time but never meets the visual gold
    o = gm.set_overlap({"visual": [(0, 2), (1, 3), (10, 12)], "audio": [(2, 7)]}, {"visual": [(2, 11)]})
    assert o.iop == pytest.approx(2 / 10) and o.iog == pytest.approx(2 / 9) and o.iou == pytest.approx(2 / 17)


def test_no_citation_scores_zero() -> None:
    o = gm.set_overlap({}, {"visual": [(2, 11)]})
    assert (o.iop, o.iog, o.iou) == (0.0, 0.0, 0.0)


def test_written_resolution_and_widening() -> None:
    assert gm.written_resolution("visual, 0:12", 12) == 1.0
    assert gm.written_resolution("visual, 0:12, 0:15.5", 15.5) == pytest.approx(0.1)
    assert gm.written_resolution("visual, 0:12, 0:15.5", 12) == 1.0
    assert gm.written_resolution("audio, 1:02.25", 62.25) == pytest.approx(0.01)
    assert gm.written_resolution("visual, 12s", 12) == 1.0
    assert gm.written_resolution("visual, 00:01:02", 62) == 1.0
    assert gm.widen_point(0.5, 1.0) == (0.0, 1.5)
    assert gm.widen_point(89.5, 1.0, 90) == (88.5, 90)


def test_merge_and_lengths() -> None:
    assert gm.merge([(5, 6), (0, 2), (1, 3), (3, 4)]) == [(0, 4), (5, 6)]
    assert gm.length([(0, 2), (1, 3)]) == 3
    assert gm.intersection_length([(0, 5)], [(1, 2), (4, 8)]) == 2


def test_box_iou() -> None:
    # inter 0.25² = 0.0625; union 0.25 + 0.25 - 0.0625
    assert gm.box_iou((0, 0, .5, .5), (.25, .25, .75, .75)) == pytest.approx(0.0625 / 0.4375)
    assert gm.box_iou((0, 0, .1, .1), (.5, .5, .6, .6)) == 0.0
    assert gm.best_box_iou([(0, 0, .1, .1), (0, 0, .5, .5)], [(0, 0, .5, .5)]) == 1.0


def test_hits_on_pages() -> None:
    box = ((None, (.1, .1, .4, .2)),)
    gold = gm.Unit("page", page=3, doc="a.pdf", boxes=box)
    assert gm.hits(gm.Unit("page", page=3, doc="a.pdf", boxes=box), gold)
    assert not gm.hits(gm.Unit("page", page=4, doc="a.pdf", boxes=box), gold)
    assert not gm.hits(gm.Unit("page", page=3, doc="b.pdf", boxes=box), gold)
    assert not gm.hits(gm.Unit("page", page=3, doc="a.pdf", boxes=((None, (.6, .6, .9, .9)),)), gold)
    assert gm.hits(gm.Unit("page", page=3, doc="a.pdf"), gold)  # no box cited: page match suffices
    assert not gm.hits(gm.Unit("visual", span=(0, 1)), gold)


def test_hits_in_time_and_boxes_at_times() -> None:
    assert gm.hits(gm.Unit("visual", span=(10, 20)), gm.Unit("visual", span=(12, 20)))  # IoU 0.8
    assert not gm.hits(gm.Unit("visual", span=(10, 30)), gm.Unit("visual", span=(12, 20)))  # IoU 0.4
    assert not gm.hits(gm.Unit("audio", span=(12, 20)), gm.Unit("visual", span=(12, 20)))
    a, b = (0, 0, .3, .3), (.6, .6, .9, .9)
    gold = gm.Unit("visual", span=(0, 10), boxes=((1.0, a), (8.0, b)))
    # only the gold box drawn inside the cited span counts
    assert gm.hits(gm.Unit("visual", span=(0, 5), boxes=((None, a),)), gold)
    assert not gm.hits(gm.Unit("visual", span=(0, 5), boxes=((None, b),)), gold)
    assert gm.hits(gm.Unit("visual", span=(0, 9), boxes=((None, b),)), gold)


def test_evidence_recall_precision_and_compat() -> None:
    gold = [gm.Unit("page", page=1), gm.Unit("page", page=2), gm.Unit("page", page=3, crucial=False)]
    cited = [gm.Unit("page", page=1), gm.Unit("page", page=3), gm.Unit("page", page=9), gm.Unit("page", page=1)]
    s = gm.evidence_scores(cited, gold)
    assert s.gold_hit == [True, False, True] and s.citation_hit == [True, True, False, True]
    assert s.recall == pytest.approx(1 / 2)  # crucial: pages 1 and 2, one hit
    assert s.precision == pytest.approx(3 / 4)  # citations that hit a gold item
    assert gm.evidence_scores(cited, gold, compat=True).precision == pytest.approx(2 / 4)  # gold items matched
    assert gm.evidence_scores(cited, gold, need="any").recall == 1.0
    none = gm.evidence_scores([], gold)
    assert none.recall == 0.0 and none.precision == 0.0
    assert gm.evidence_scores(cited, [gm.Unit("page", page=1, crucial=False)]).recall is None


def test_viou_hand_computed() -> None:
    box = (0, 0, .5, .5)
    gold = [(float(t), box) for t in range(5)]
    # grid step 1: union 0..6 = 7 times, intersection 2, 3, 4 with IoU 1
    assert gm.viou(gold, (0, 4), [((2, 6), [box])], 1.0) == pytest.approx(3 / 7)
    # the same with a box of IoU 1/7 at each shared time
    assert gm.viou(gold, (0, 4), [((2, 6), [(.25, .25, .75, .75)])], 1.0) == pytest.approx(3 * (1 / 7) / 7)
    # no prediction in time: only the gold times count, nothing shared
    assert gm.viou(gold, (0, 4), [], 1.0) == 0.0
    with pytest.raises(ValueError):
        gm.viou(gold, (0, 4), [], 0.0)


def _viou_by_grid(gold_boxes, gold_span, predicted, step):
    """The vIoU definition walked grid time by grid time (the reference the breakpoint sum must equal)."""
    import math

    spans = [gold_span] + [s for s, _ in predicted]
    lo, hi = min(s for s, _ in spans), max(e for _, e in spans)
    eps = step * 1e-6
    times = sorted(t for t, _ in gold_boxes)
    by_time = dict(gold_boxes)
    n_union, total = 0, 0.0
    for k in range(math.floor(lo / step - 1e-9), math.ceil(hi / step + 1e-9) + 1):
        t = k * step
        in_gold = gold_span[0] - eps <= t <= gold_span[1] + eps
        covering = [boxes for (s, e), boxes in predicted if s - eps <= t <= e + eps]
        if not in_gold and not covering:
            continue
        n_union += 1
        if in_gold and covering:
            nearest = min(times, key=lambda x: abs(x - t))
            total += max((gm.box_iou(b, by_time[nearest]) for boxes in covering for b in boxes), default=0.0)
    return total / n_union if n_union else 0.0


def test_viou_equals_the_grid_walk_on_generated_tubes() -> None:
    """Seeded generated cases (frame rates, spans ending on and off the grid, ties between annotated
    times, citations with no box): the breakpoint sum equals the time-by-time grid sum."""
    import random

    rng = random.Random(7)

    def box() -> tuple[float, float, float, float]:
        x, y = rng.random() * 0.5, rng.random() * 0.5
        return (x, y, x + rng.random() * 0.5 + 0.01, y + rng.random() * 0.5 + 0.01)

    for _ in range(400):
        step = rng.choice([1.0, 0.5, 0.25, 0.1, 1 / 24, 1 / 29.97, 0.04])
        nd = rng.choice([0, 1, 2])
        g0 = round(rng.uniform(0, 20), nd)
        g1 = g0 + round(rng.uniform(0, 10), nd)
        gold = [(round(rng.uniform(g0 - 2, g1 + 2), rng.choice([0, 1, 2])), box()) for _ in range(rng.randint(1, 8))]
        predicted = []
        for _ in range(rng.randint(0, 3)):
            s = round(rng.uniform(0, 30), nd)
            predicted.append(((s, s + round(rng.uniform(0, 8), nd)), [box() for _ in range(rng.randint(0, 2))]))
        assert gm.viou(gold, (g0, g1), predicted, step) == pytest.approx(
            _viou_by_grid(gold, (g0, g1), predicted, step), abs=1e-9)
