"""Grouping run figures by item field (murgat.core.breakdown): each group is a run summary of its
records, list-valued fields count once per distinct value, missing values have their own group,
and paired differences pair by id within a group."""

from __future__ import annotations

import pytest

from murgat.core.breakdown import breakdown, group_differences, group_keys, item_fields, record_fields
from murgat.core.metric import summarize_results
from murgat.core.schema import Item, ResponseResult, Scores


def _rec(rid: str, s: float | None, correct: bool | None = None, error: str | None = None, **fields: object) -> ResponseResult:
    scores = Scores() if s is None else Scores(coverage=1.0, precision=s, recall=s, f1=s, murgat_s=s)
    return ResponseResult(id=rid, scores=scores, correct=correct, error=error, video=f"v{rid}",
                          case="error" if error else ("scored" if s is not None else "undetermined"),
                          meta={"item": dict(fields)} if fields else {})


RUN = [
    _rec("a", 1.0, True, task_type="count", audio_class=["speech", "music", "speech"]),
    _rec("b", 0.5, False, task_type="count", audio_class=["music"]),
    _rec("c", 0.0, True, task_type="sound", audio_class=[]),
    _rec("d", None, None, task_type="sound", audio_class=["speech"]),
    _rec("e", None, None, error="missing_media: gone", task_type="sound"),
    _rec("f", 0.25, True),
]


def test_item_fields_are_question_type_extras_and_meta_with_bookkeeping_left_out() -> None:
    item = Item.model_validate({"id": "x", "question_type": "mc", "source": "worldsense", "usage": {"input_tokens": 3},
                                "cached": True, "model": "m",
                                "meta": {"task_type": "count", "audio_class": ["speech"], "nested": {"a": 1}}})
    assert item_fields(item) == {"question_type": "mc", "source": "worldsense", "model": "m", "task_type": "count",
                                 "audio_class": ["speech"]}
    assert item_fields(Item(id="y")) == {}


def test_each_group_is_the_run_summary_of_its_records() -> None:
    bd = breakdown(RUN, "task_type", n_resamples=200, seed=3)
    by = {g.values: g for g in bd.groups}
    assert set(by) == {("count",), ("sound",), (None,)}
    assert by[("count",)].ids == ["a", "b"] and by[("sound",)].ids == ["c", "d", "e"] and by[(None,)].ids == ["f"]
    want = summarize_results([RUN[2], RUN[3], RUN[4]], n_resamples=200, seed=3)
    assert by[("sound",)].summary == want  # CIs, n, cases and errors exactly as a run of those items
    assert want.n_errors == 1 and want.murgat_s.n == 1 and want.cases == {"error": 1, "scored": 1, "undetermined": 1}
    assert by[(None,)].label == "(missing)" and bd.groups[0].values == ("sound",)  # largest group first


def test_one_group_of_everything_reproduces_the_run() -> None:
    bd = breakdown(RUN, "kind", fields_of=lambda r: {"kind": "all"}, n_resamples=200)
    assert len(bd.groups) == 1 and bd.groups[0].summary == summarize_results(RUN, n_resamples=200)


def test_list_valued_fields_count_once_per_distinct_value() -> None:
    bd = breakdown(RUN, "audio_class", n_resamples=100)
    by = {g.values: g.ids for g in bd.groups}
    assert by == {("speech",): ["a", "d"], ("music",): ["a", "b"], (None,): ["c", "e", "f"]}  # "a" once in speech
    assert bd.list_valued == ["audio_class"] and "more than the run's" in bd.as_dict()["note"]
    assert sum(len(g.ids) for g in bd.groups) == 7 > bd.n_items == 6


def test_several_fields_group_by_their_combinations() -> None:
    assert group_keys({"t": "x", "a": ["s", "m"]}, ["t", "a"]) == [("x", "s"), ("x", "m")]
    bd = breakdown(RUN, ["task_type", "audio_class"], n_resamples=100)
    assert {g.values: g.ids for g in bd.groups}[("count", "music")] == ["a", "b"]
    with pytest.raises(ValueError, match="at least one field"):
        breakdown(RUN, [])


def test_record_fields_include_the_outcome() -> None:
    f = record_fields(RUN[4])
    assert f["case"] == "error" and f["task_type"] == "sound" and f["video"] == "ve"
    assert {g.values for g in breakdown(RUN, "correct", n_resamples=50).groups} == {(True,), (False,), (None,)}


def test_group_differences_pair_by_id_within_each_group() -> None:
    other = [_rec("a", 0.5, False, task_type="count"), _rec("b", 1.0, True, task_type="count"),
             _rec("c", 0.5, True, task_type="sound"), _rec("f", 0.25, True)]
    diffs = {d.values: d for d in group_differences(RUN, other, "task_type", n_resamples=200)}
    count = diffs[("count",)]
    assert count.n_common == 2 and count.differences["murgat_s"].value == pytest.approx(0.0)  # (-0.5 + 0.5) / 2
    assert count.differences["accuracy"].value == pytest.approx(0.0) and count.differences["accuracy"].n == 2
    sound = diffs[("sound",)]  # d is undetermined in RUN and absent in other, e is an error: only c pairs
    assert sound.n_common == 1 and sound.differences["murgat_s"].value == pytest.approx(0.5)
    assert diffs[(None,)].differences["murgat_s"].value == pytest.approx(0.0)


def test_a_group_with_no_pair_is_listed_with_a_note() -> None:
    diffs = group_differences([_rec("a", 1.0, task_type="x")], [_rec("b", 1.0, task_type="x")], "task_type")
    assert [(d.values, d.n_common) for d in diffs] == [(("x",), 0)]
    assert diffs[0].note and diffs[0].differences["murgat_s"].value is None  # undefined, not 0


def test_check_by_names_the_unknown_fields_and_those_there_are() -> None:
    from murgat.core.breakdown import UnknownField, check_by

    assert check_by(["a", "b"], {"a", "b", "c"}) == ("a", "b")
    with pytest.raises(UnknownField, match=r"--by 'x', '': no item has these fields \(as text, a number, "
                                          r"true/false, or a list of those\); fields the items have: a, b$"):
        check_by(["a", "x", ""], ["b", "a"])
    with pytest.raises(ValueError, match="at least one field"):
        check_by([], {"a"})


def test_values_are_grouped_as_json_values_true_is_not_one_and_nan_is_missing() -> None:
    """``True == 1`` in Python merged the groups of ``true`` and ``1``; each NaN (never equal to
    itself) made a group of its own; and a NaN or Infinity, kept as null in the records, grouped
    otherwise in ``summarize`` than in ``score``."""
    import json

    run = [_rec("a", 1.0, t=1), _rec("b", 0.5, t=True), _rec("c", 0.0, t="1"), _rec("d", 0.2, t=1.0),
           *(_rec(f"n{i}", 0.5, t=float("nan")) for i in range(3)), _rec("i", 0.5, t=float("inf")), _rec("m", 0.5)]
    bd = breakdown(run, "t", n_resamples=50)
    # repr: a dict of the values would itself merge (True,) with (1,)
    assert sorted((repr(g.values), g.ids) for g in bd.groups) == [
        ("('1',)", ["c"]), ("(1,)", ["a", "d"]), ("(None,)", ["n0", "n1", "n2", "i", "m"]), ("(True,)", ["b"])]
    assert sorted(g.label for g in bd.groups) == ['"1"', "(missing)", "1", "True"]  # no two groups share a label
    json.dumps(bd.as_dict(), allow_nan=False)  # the document (and the viewer page made of it) is valid JSON
    assert repr(group_keys({"t": [1, True, 1.0, "1", float("nan"), None]}, ["t"])) == "[(1,), (True,), ('1',), (None,)]"


def test_a_field_named_twice_groups_once() -> None:
    from murgat.core.breakdown import check_by

    assert check_by(["task_type", "task_type"], {"task_type"}) == ("task_type",)
    bd = breakdown(RUN, ["task_type", "task_type"], n_resamples=50)
    assert bd.by == ("task_type",) and {g.label for g in bd.groups} == {"count", "sound", "(missing)"}
    assert {d.label for d in group_differences(RUN, RUN, ["task_type", "task_type"], n_resamples=20)} == {
        "count", "sound", "(missing)"}


def test_a_kept_field_that_is_not_a_value_is_left_out_of_the_record_fields() -> None:
    """A record's ``meta.item`` edited by hand (or written by another tool) with a nested object: left
    out as the input's own would be, not a crash of the whole breakdown on an unhashable value."""
    rec = _rec("a", 1.0, t={"nested": 1}, u=[[1], [2]], v="x")
    assert record_fields(rec)["v"] == "x" and "t" not in record_fields(rec) and "u" not in record_fields(rec)
    assert [g.values for g in breakdown([rec], "t", n_resamples=20).groups] == [(None,)]


def test_a_table_draws_the_largest_groups_and_cuts_long_labels() -> None:
    import io

    from rich.console import Console

    from murgat.report.groups import print_breakdown

    # 65 groups (40 drawn), every other one undefined (a line each), each label 10,000 characters
    run = [_rec(str(i), None if i % 2 else 0.5, t=f"v{i}" + "x" * 10_000) for i in range(65)]
    doc = breakdown(run, "t", n_resamples=20).as_dict()
    assert len(doc["groups"]) == 65 and len(doc["groups"][0]["label"]) > 10_000  # the JSON keeps every group whole
    out = io.StringIO()
    print_breakdown(doc, Console(file=out, width=200))
    text = out.getvalue()
    assert "25 smaller group(s) not drawn (of 65)" in text
    assert len(text) < 40_000 and max(len(line) for line in text.splitlines()) <= 200
