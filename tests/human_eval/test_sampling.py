"""The labelling sample: drawn by a rule anyone can redo, recorded, and checked against the labels."""

from __future__ import annotations

import json

import pytest

from murgat.human_eval.sampling import SampleDesign, check_labels, draw_sample, new_seed

IDS = [f"item-{k:03d}" for k in range(200)]
VIDEOS = {i: f"video-{int(i[-3:]) // 5}" for i in IDS}  # 40 videos of 5 items


def test_uniform_draw_is_a_reproducible_subset_that_depends_on_the_seed() -> None:
    a, da = draw_sample(IDS, 30, seed=7)
    b, db = draw_sample(list(reversed(IDS)), 30, seed=7)  # the input order does not matter
    assert a == b == sorted(a) and len(a) == 30 and set(a) <= set(IDS)
    assert da == db and da.method == "uniform" and da.sample_size == 30 and da.population_size == 200
    c, _ = draw_sample(IDS, 30, seed=8)
    assert c != a
    everything, d_all = draw_sample(IDS, 500, seed=1)
    assert everything == sorted(IDS) and d_all.sample_size == 200


def test_uniform_draw_is_uniform() -> None:
    # over many seeds every item is drawn about n/N of the time
    hits = dict.fromkeys(IDS, 0)
    for seed in range(400):
        for i in draw_sample(IDS, 20, seed=seed)[0]:
            hits[i] += 1
    rates = [h / 400 for h in hits.values()]
    assert min(rates) > 0.04 and max(rates) < 0.17  # expected 0.1 each; binomial sd 0.015


def test_video_draw_takes_whole_videos() -> None:
    ids, d = draw_sample(IDS, 6, seed=3, videos=VIDEOS)
    assert d.method == "video" and d.sample_videos == 6 and d.n_videos == 40 and d.sample_size == 30
    assert {VIDEOS[i] for i in ids}.__len__() == 6
    assert all(i in ids for i in IDS if VIDEOS[i] in {VIDEOS[j] for j in ids})
    with pytest.raises(ValueError, match="no video"):
        draw_sample(IDS, 2, seed=1, videos={IDS[0]: "v"})


def test_bad_requests() -> None:
    with pytest.raises(ValueError):
        draw_sample(IDS, 0, seed=1)
    with pytest.raises(ValueError, match="repeat"):
        draw_sample(["a", "a"], 1, seed=1)
    assert new_seed().isdigit() and 0 <= int(new_seed()) < 2**31
    for bad in ("", "a b", "1|2", "x" * 101):
        with pytest.raises(ValueError, match="seed"):
            draw_sample(IDS, 1, seed=bad)


def test_seeds_are_text_so_no_reader_rounds_them() -> None:
    """Two seeds a double cannot tell apart (2**53 + 1 and 2**53) draw different samples and are
    recorded digit for digit; an older design's integer seed reads as its digits, the same draw."""
    big, near = str(2**53 + 1), str(2**53)
    a, da = draw_sample(IDS, 30, seed=big)
    b, _ = draw_sample(IDS, 30, seed=near)
    assert a != b and da.seed == big and json.loads(da.model_dump_json())["seed"] == big
    old = SampleDesign.model_validate({**da.model_dump(), "seed": 2**53 + 1})
    assert old.seed == big and draw_sample(IDS, 30, seed=old.seed)[1].sample_digest == da.sample_digest
    assert draw_sample(IDS, 30, seed=7)[0] == draw_sample(IDS, 30, seed="7")[0]


def test_labels_of_the_drawn_sample_pass_the_check() -> None:
    ids, d = draw_sample(IDS, 25, seed=11)
    ok = check_labels([d] * 25, ids, IDS)
    assert ok.ok and not ok.problems and ok.design == d and ok.n_sampled_unlabelled == 0
    partial = check_labels([d] * 20, ids[:20], IDS)
    assert partial.ok and partial.n_sampled_unlabelled == 5 and "missing at random" in partial.notes[0]


def test_labels_without_or_against_the_design_are_refused() -> None:
    ids, d = draw_sample(IDS, 25, seed=11)
    none = check_labels([None] * 5, ids[:5], IDS)
    assert not none.ok and "no sampling design" in none.problems[0]
    mixed = check_labels([d, None], ids[:2], IDS)
    assert not mixed.ok and "1 of 2 label lines" in mixed.problems[0]
    outside = check_labels([d] * 2, [ids[0], next(i for i in IDS if i not in ids)], IDS)
    assert not outside.ok and "not in the recorded sample" in outside.problems[0]
    grown = check_labels([d] * 25, ids, [*IDS, "item-new"])
    assert not grown.ok and "not the ones the sample was drawn from" in grown.problems[0]
    forged = SampleDesign(**{**d.model_dump(), "seed": 12})  # the same digest claimed for another seed
    assert not check_labels([forged] * 25, ids, IDS).ok
    elsewhere = SampleDesign(**{**d.model_dump(), "run": "runs/a/"})  # the same draw, made from another path
    assert check_labels([d, elsewhere], ids[:2], IDS).ok
    other = draw_sample(IDS, 25, seed=99)[1]
    two = check_labels([d, other], ids[:2], IDS)
    assert not two.ok and "different sampling designs" in two.problems[0]


def test_video_design_is_checked_with_the_videos() -> None:
    ids, d = draw_sample(IDS, 4, seed=5, videos=VIDEOS)
    assert check_labels([d] * len(ids), ids, IDS, VIDEOS).ok
    moved = {**VIDEOS, ids[0]: "video-elsewhere"}  # the run's videos changed since the draw
    assert not check_labels([d] * len(ids), ids, IDS, moved).ok


def test_a_seed_past_two_to_the_53_is_kept_exactly_as_text() -> None:
    """A browser reads a JSON number above 2^53 rounded: the label lines came back with another seed,
    and the redraw refused honest labels. The seed is its decimal text end to end."""
    seed = 2**53 + 1
    ids, d = draw_sample(IDS, 25, seed=seed)
    assert d.seed == str(seed) and '"seed":"9007199254740993"' in d.model_dump_json()
    back = SampleDesign.model_validate_json(d.model_dump_json())
    assert check_labels([back] * len(ids), ids, IDS).ok
    assert SampleDesign(**{**d.model_dump(), "seed": seed}) == d  # an integer (older labels) reads the same
    assert draw_sample(IDS, 25, seed=11)[0] == draw_sample(IDS, 25, seed="11")[0]


STRATA = {i: ("long" if k % 4 == 0 else "short") for k, i in enumerate(IDS)}


def test_a_stratified_draw_is_proportional_recorded_and_checkable() -> None:
    from murgat.human_eval.sampling import draw_stratified

    ids, d = draw_stratified(IDS, STRATA, 40, seed="s1", field="duration")
    n_long = sum(1 for i in IDS if STRATA[i] == "long")
    assert d.method == "stratified" and d.strata_field == "duration" and d.allocation == "proportional"
    assert d.strata is not None and d.strata["long"].population == n_long
    assert d.strata["long"].weight == pytest.approx(n_long / len(IDS))
    assert sum(1 for i in ids if STRATA[i] == "long") == d.strata["long"].drawn == d.strata["long"].requested
    assert sum(s.drawn for s in d.strata.values()) == len(ids) == 40
    assert draw_stratified(list(reversed(IDS)), STRATA, 40, seed="s1", field="duration")[0] == ids
    assert check_labels([d] * len(ids), ids, IDS, strata=STRATA).ok
    moved = {**STRATA, ids[0]: "long" if STRATA[ids[0]] == "short" else "short"}  # an item's field was edited
    bad = check_labels([d] * len(ids), ids, IDS, strata=moved)
    assert not bad.ok and "strata by 'duration' are not the recorded ones" in bad.problems[0]


def test_a_given_allocation_is_drawn_as_given_and_a_larger_one_contains_the_smaller() -> None:
    from murgat.human_eval.sampling import draw_stratified

    small, _ = draw_stratified(IDS, STRATA, {"long": 5, "short": 5}, seed="s2", field="duration")
    big, d = draw_stratified(IDS, STRATA, {"long": 20, "short": 8}, seed="s2", field="duration")
    assert d.allocation == "given" and len(big) == 28 and set(small) <= set(big)
    with pytest.raises(ValueError, match="must name every stratum"):
        draw_stratified(IDS, STRATA, {"long": 5}, seed="s2", field="duration")
    with pytest.raises(ValueError, match="cannot be drawn from it"):
        draw_stratified(IDS, STRATA, {"long": 5, "short": 10_000}, seed="s2", field="duration")
