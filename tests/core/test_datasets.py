"""``murgat.core.datasets.load_responses``: what ``score`` and ``ground`` read — a response file exactly as
:func:`murgat.core.inputs.load_items` reads it, or a dataset spec whose rows carry the model's answers
(its own fields kept in ``meta``), a row without an answer refused (never scored as empty), a
questions-only dataset refused with what to do, responses over the size cap marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.core.datasets import is_dataset_spec, load_responses
from murgat.core.inputs import InputError, load_items
from murgat.engine.preflight import MediaPlace

WORLDSENSE = Path(__file__).resolve().parents[1] / "data" / "worldsense"


def _rows(tmp: Path, answer: bool = True) -> Path:
    rows = json.loads((WORLDSENSE / "worldsense_rows.json").read_text())
    p = tmp / "rows.json"
    p.write_text(json.dumps([{**r, **({"prediction": f"It is so (audio, 0:01).\nAnswer: {r['answer'][0]}"}
                                      if answer else {})} for r in rows]))
    return p


def test_a_response_file_reads_exactly_as_the_response_reader(tmp_path: Path) -> None:
    p = tmp_path / "in.jsonl"
    p.write_text(json.dumps({"id": "a", "media": "m.mp4", "response": "x" * 50, "task_type": "t"}) + "\n"
                 + json.dumps({"id": "b", "media": "m.mp4", "response": "y"}) + "\n")
    assert not is_dataset_spec(str(p)) and not is_dataset_spec(str(tmp_path))  # a folder is a run folder here
    assert load_responses(str(p), max_response_chars=10) == load_items(p, max_response_chars=10)
    assert [i.id for i in load_responses(str(p), 1)] == ["a"]
    assert load_responses(f"jsonl:{p}") == load_items(p)


def test_worldsense_rows_with_answers_keep_their_fields(tmp_path: Path) -> None:
    p = _rows(tmp_path)
    for spec in (f"worldsense:{p}", str(p)):  # recognised unprefixed too
        assert is_dataset_spec(spec)
        items = load_responses(spec, max_response_chars=40)
        assert [i.id for i in items] == ["0", "1", "2", "3", "4"]
        assert items[0].meta["task_type"] == "Human Emotions" and items[4].meta["audio_class"] == []
        assert items[0].options == ["A meeting", "A bad humor", "The hospital", "A good mood"]
        assert items[0].response.endswith("Answer: B") and items[0].input_problem is None
    assert load_responses(f"worldsense:{p}", max_response_chars=5)[0].input_problem.startswith("response_too_long")
    assert len(load_responses(f"worldsense:{p}", 2)) == 2


def test_media_are_looked_for_beside_the_dataset_file(tmp_path: Path) -> None:
    p = _rows(tmp_path)

    class S:
        input, media_root, allow_media_outside_root = f"worldsense:{p}", None, False

    assert MediaPlace.of(S()).roots() == [tmp_path]


def test_rows_without_answers_and_question_sets_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"item 0 \(index 0\): no response field \(response or prediction\)"):
        load_responses(f"worldsense:{_rows(tmp_path, answer=False)}")
    csv = tmp_path / "q.csv"
    csv.write_text("id,media,question,a0,a1,answer\nq1,m.mp4,Who?,a,b,a\n")
    for spec in (str(csv), f"csv:{csv}"):
        with pytest.raises(InputError, match="holds questions without the model's answers"):
            load_responses(spec)
    with pytest.raises(InputError, match="does not exist"):
        load_responses(f"worldsense:{tmp_path / 'nope.json'}")


@pytest.mark.parametrize(("spec", "content", "reason"), [
    ("videommmu:v.json", b"{bad", "not valid JSON at line 1"),
    ("videommmu:v.json", json.dumps({"t": [{"id": "1"}]}).encode(), "a videommmu record lacks the field 'question'"),
    ("videommmu:v.json", b"[1]", "not a videommmu file as murgat reads it"),
    ("videommmu:v.json", b'{"t": []}\xff', r"not valid UTF-8 \(byte 9\)"),
    ("nextgqa:val.csv", b"video_id,question\n1,q\n", "a nextgqa record lacks the field 'answer'"),
    ("q.csv", b"id,media,question\n1,a.mp4,\xff\n", r"not valid UTF-8 \(byte 26\)"),
    ("q.csv", b"id,media,question\n1,a.mp4,q,stray\n", "line 2: 4 cells, more than the header's 3 columns"),
])
def test_a_malformed_question_set_is_an_input_error_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   spec: str, content: bytes, reason: str) -> None:
    from murgat.core.datasets import load_dataset

    monkeypatch.chdir(tmp_path)
    (tmp_path / spec.split(":")[-1]).write_bytes(content)
    with pytest.raises(InputError, match=reason):
        load_dataset(spec)


def test_a_csv_with_empty_trailing_cells_reads(tmp_path: Path) -> None:
    from murgat.core.datasets import load_dataset

    p = tmp_path / "q.csv"
    p.write_text("id,media,question\n1,a.mp4,q,,\n")
    [item] = load_dataset(str(p))
    assert item.id == "1" and item.meta == {}


def test_a_spec_is_said_when_it_names_no_file_or_another_than_meant(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from murgat.core.datasets import load_dataset

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"^worldsense:: names no file \(write worldsense:FILE\)$"):
        load_responses("worldsense:")
    (tmp_path / "csv:rows.json").write_text(_rows(tmp_path).read_text())  # a file whose name starts as a spec
    (tmp_path / "rows.json").unlink()
    with pytest.raises(InputError, match=r"read as a csv dataset spec; the file named csv:rows.json is ./csv:rows.json"):
        load_dataset("csv:rows.json")
    assert len(load_responses("./csv:rows.json")) == 5  # the way to name it
