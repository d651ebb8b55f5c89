"""WorldSense annotations (tests/data/worldsense: our questions about the bundled clips, in the
benchmark's three shapes) → items: option letters stripped, the correct rule applies, every other
field kept in ``meta``; bad rows are refused naming the row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.core.answers import is_correct
from murgat.core.datasets import load_dataset
from murgat.core.inputs import InputError
from murgat.core.worldsense import load_worldsense, looks_like_worldsense, strip_option_letter

DATA = Path(__file__).resolve().parents[1] / "data" / "worldsense"
SHAPES = ("worldsense_rows.json", "WorldSense.tsv", "worldsense_qa.json")


@pytest.mark.parametrize("name", SHAPES)
def test_each_shape_reads_the_same_questions(name: str) -> None:
    items = load_worldsense(DATA / name)
    assert [i.id for i in items] == ["0", "1", "2", "3", "4"]  # VLMEvalKit's numbering for the nested file
    first = items[0]
    assert first.media == "videos/friday.mp4" and first.gold == "B" and first.source == "worldsense"  # type: ignore[attr-defined]
    assert first.options == ["A meeting", "A bad humor", "The hospital", "A good mood"]
    assert first.meta["task_type"] == "Human Emotions" and first.meta["task_domain"] == "Recognition"
    assert first.meta["duration"] == "0-10s" and first.meta["audio_class"] == ["speech"]
    assert first.meta["subtitle_path"] == "./subtitles/friday.srt" and first.meta["audio_path"] == "./audios/friday.wav"
    nasa = items[2]  # an apostrophe inside a candidate: the TSV cell is a double-quoted Python literal
    assert (nasa.options or [])[1] == "At NASA's Goddard Space Flight Center in Greenbelt, Maryland"
    assert items[4].meta["audio_class"] == [] and items[4].response == ""


def test_the_three_shapes_agree_field_for_field() -> None:
    docs = [[i.model_dump() for i in load_worldsense(DATA / n)] for n in SHAPES]
    for d in docs[2]:
        assert d["meta"].pop("task") in ("task1", "task2")  # the nested file names each question's key
    assert docs[0] == docs[1] == docs[2]


def test_a_gold_written_as_the_whole_candidate_is_its_letter_and_counts() -> None:
    item = load_worldsense(DATA / "worldsense_rows.json")[3]
    assert item.gold == "C" and item.options == ["Blue", "White", "Orange", "Green"]
    assert is_correct("C", item.gold, item.options) is True and is_correct("A", item.gold, item.options) is False


def test_option_letters_are_stripped_only_where_they_are_the_options_own() -> None:
    assert strip_option_letter("A. a dog", 0) == "a dog"
    assert strip_option_letter("(B) two cats", 1) == "two cats"
    assert strip_option_letter("C: a horn", 2) == "a horn"
    assert strip_option_letter("B. a dog", 0) == "B. a dog"  # another position's letter: the text is kept whole
    assert strip_option_letter("A. ", 0) == "A."  # nothing after the letter: kept
    assert strip_option_letter("Apple pie", 0) == "Apple pie"


def test_text_answers_match_stripped_options(tmp_path: Path) -> None:
    row = {"index": 7, "video_path": "./videos/v.mp4", "question": "What colour?", "answer": "Orange",
           "candidates": ["A. Blue", "B. Orange"], "task_type": "Attribute Recognition"}
    p = tmp_path / "rows.jsonl"
    p.write_text(json.dumps(row) + "\n")
    [item] = load_worldsense(p)
    assert is_correct("B", item.gold, item.options) is True  # without stripping "Orange" matched no option


def test_a_model_answer_in_the_row_is_kept_for_scoring(tmp_path: Path) -> None:
    rows = [{"index": 0, "video_path": "a.mp4", "question": "q", "candidates": ["A. x", "B. y"], "answer": "B",
             "prediction": "It is y (visual, 0:01).\nAnswer: B"}]
    p = tmp_path / "pred.json"
    p.write_text(json.dumps(rows))
    assert load_worldsense(p)[0].response.endswith("Answer: B")


@pytest.mark.parametrize(("row", "reason"), [
    ({"video_path": "a.mp4", "question": "q", "candidates": ["A. x"]}, "missing field 'index'"),
    ({"index": 3, "video_path": "a.mp4", "candidates": ["A. x"]}, "(index 3): missing field 'question'"),
    ({"index": 3, "video_path": "a.mp4", "question": "q"}, "missing field 'candidates'"),
    ({"index": 3, "question": "q", "candidates": 5}, "field 'candidates' must be a list"),
    # a value's Python form was read as an answer, an id, an option, a gold or a video (or broke the item)
    ({"index": 3, "question": "q", "candidates": ["A. x"], "response": {"text": "A"}},
     "field 'response' must be text, not dict"),
    ({"index": 3, "question": "q", "candidates": ["A. x"], "prediction": ["A"]}, "field 'prediction' must be text"),
    ({"index": {"a": 1}, "question": "q", "candidates": ["A. x"]}, "field 'index' must be text or a number, not dict"),
    ({"index": 3, "question": "q", "candidates": ["A. x", {"B": "y"}]}, "field 'candidates.1.' must be text"),
    ({"index": 3, "question": "q", "candidates": ["A. x"], "answer": ["A"]}, "field 'answer' must be text"),
    ({"index": 3, "question": "q", "candidates": ["A. x"], "video_path": ["a.mp4"]}, "field 'video_path' must be"),
    ({"index": 3, "question": "q", "candidates": "[" * 5000 + "]" * 5000}, "field 'candidates' is nested too deeply"),
])
def test_bad_rows_are_refused_naming_the_row(tmp_path: Path, row: dict, reason: str) -> None:
    p = tmp_path / "rows.json"
    p.write_text(json.dumps([row]))
    with pytest.raises(InputError, match=reason.replace("(", r"\(").replace(")", r"\)")) as err:
        load_worldsense(p)
    assert "item 0" in str(err.value)


def test_a_tsv_cell_that_is_not_a_list_literal_is_refused_not_evaluated(tmp_path: Path) -> None:
    head = "index\tvideo_path\tquestion\tcandidates\tanswer\ttask_type\n"
    p = tmp_path / "WorldSense.tsv"
    p.write_text(head + "0\t./videos/a.mp4\tq\t[__import__('os').system('true')]\tA\tx\n")
    with pytest.raises(InputError, match=r"line 2 \(index 0\): field 'candidates' is not a list"):
        load_worldsense(p)
    p.write_text(head + "0\t./videos/a.mp4\tq\t[" + "'x', " * 20_000 + "]\tA\tx\n")
    with pytest.raises(InputError, match="over 65,536 characters"):
        load_worldsense(p)


def test_duplicate_indices_are_refused(tmp_path: Path) -> None:
    row = {"index": 1, "video_path": "a.mp4", "question": "q", "candidates": ["A. x", "B. y"], "answer": "A"}
    p = tmp_path / "rows.json"
    p.write_text(json.dumps([row, row]))
    with pytest.raises(InputError, match="duplicate index '1'"):
        load_worldsense(p)


def test_generate_reads_worldsense_files_with_or_without_the_prefix(tmp_path: Path) -> None:
    for name in SHAPES:
        assert looks_like_worldsense(DATA / name)
        assert [i.id for i in load_dataset(str(DATA / name))] == ["0", "1", "2", "3", "4"]
    assert load_dataset(f"worldsense:{DATA / 'worldsense_rows.json'}")[0].meta["task_type"] == "Human Emotions"
    plain = tmp_path / "q.jsonl"  # murgat's own JSONL is never taken for WorldSense
    plain.write_text(json.dumps({"id": "a", "question": "q", "candidates": ["x"], "task_type": "t"}) + "\n")
    assert not looks_like_worldsense(plain) and load_dataset(str(plain))[0].id == "a"


def test_an_index_written_as_a_float_is_the_same_index(tmp_path: Path) -> None:
    row = {"video_path": "a.mp4", "question": "q", "candidates": ["A. x", "B. y"]}
    p = tmp_path / "rows.json"
    p.write_text(json.dumps([{**row, "index": 1.0}, {**row, "index": 1}]))
    with pytest.raises(InputError, match="item 1: duplicate index '1'"):
        load_worldsense(p)


def test_a_null_response_beside_a_prediction_reads_the_prediction(tmp_path: Path) -> None:
    p = tmp_path / "rows.json"
    p.write_text(json.dumps([{"index": 0, "question": "q", "candidates": ["A. x"], "response": None,
                              "prediction": "It is x (visual, 0:01).\nAnswer: A"}]))
    assert load_worldsense(p, require_response=True)[0].response.endswith("Answer: A")


def test_a_tsv_row_with_more_cells_than_columns_is_refused_and_empty_extras_are_not(tmp_path: Path) -> None:
    head = "index\tvideo_path\tquestion\tcandidates\tanswer\n"
    p = tmp_path / "WorldSense.tsv"
    p.write_text(head + "0\t./videos/a.mp4\tq\t['A. x']\tA\tstray\n")
    with pytest.raises(InputError, match="line 2: 6 cells, more than the header's 5 columns"):  # was a traceback
        load_worldsense(p)
    p.write_text(head + "0\t./videos/a.mp4\tq\t['A. x']\tA\t\t\n")  # a spreadsheet's trailing separators
    assert load_worldsense(p)[0].meta == {}


def test_a_folder_a_pipe_and_an_object_of_no_questions(tmp_path: Path) -> None:
    import os

    with pytest.raises(InputError, match="is a folder; give the WorldSense annotation file itself"):
        load_worldsense(tmp_path)  # was "does not exist"
    r, w = os.pipe()  # /dev/stdin as a pipe: read once, as murgat's own response reader reads it
    os.write(w, (DATA / "worldsense_rows.json").read_bytes())
    os.close(w)
    try:
        assert [i.id for i in load_worldsense(f"/dev/fd/{r}")] == ["0", "1", "2", "3", "4"]
    finally:
        os.close(r)
    p = tmp_path / "other.json"
    p.write_text(json.dumps({"test": {"rows": 3}}))  # was read as a benchmark of no question
    with pytest.raises(InputError, match=r"other.json: no question: none of the 1 video\(s\) has a 'task…' key"):
        load_worldsense(p)


_TSV_HEAD = "index\tvideo_path\tquestion\tcandidates\tanswer\n"


def _tsv_row(index: int, question: str = "q") -> str:
    return f"{index}\t./videos/a.mp4\t{question}\t['A. x', 'B. y']\tA\n"


def test_a_tsv_cell_opening_an_unbalanced_quote_is_refused_naming_its_row(tmp_path: Path) -> None:
    """Before: the quote swallowed the next rows into one question and the file read as fewer items."""
    p = tmp_path / "WorldSense.tsv"
    p.write_text(_TSV_HEAD + _tsv_row(0) + _tsv_row(1, '"What is shown?') + _tsv_row(2) + _tsv_row(3) + _tsv_row(4, 'x"'))
    with pytest.raises(InputError, match=r"line 3: a cell opens a quote .* closes only at line 6"):
        load_worldsense(p)
    # a quoted line break inside one cell, with nothing that reads as a row, is still read
    p.write_text(_TSV_HEAD + _tsv_row(0) + _tsv_row(1, '"Two\nlines"') + _tsv_row(2))
    assert [it.id for it in load_worldsense(p)] == ["0", "1", "2"]


def test_a_tsv_cell_past_the_readers_limit_is_an_error_naming_its_line(tmp_path: Path) -> None:
    """Before: a ``_csv.Error: field larger than field limit`` traceback."""
    p = tmp_path / "WorldSense.tsv"
    p.write_text(_TSV_HEAD + _tsv_row(0) + _tsv_row(1, "q" * 200_000))
    with pytest.raises(InputError, match=r"line 3: not a TSV row murgat can read .*at most 131,072 characters"):
        load_worldsense(p)


def test_validate_reads_a_worldsense_spec(tmp_path: Path, capsys) -> None:
    """Before: ``validate worldsense:FILE`` said the file does not exist."""
    from murgat.cli import main

    row = {"index": 0, "video_path": "a.mp4", "question": "q", "candidates": ["A. x", "B. y"], "answer": "B",
           "prediction": "It is y (visual, 0:01).\nAnswer: B"}
    p = tmp_path / "pred.json"
    p.write_text(json.dumps([row]))
    assert main(["validate", f"worldsense:{p}", "--json"]) == 0
    out = capsys.readouterr()
    assert "does not exist" not in out.err
    doc = json.loads(out.out)
    assert "a.mp4" in json.dumps(doc) and '"n_citations": 1' in json.dumps(doc).replace(", ", ", ")
