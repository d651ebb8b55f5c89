"""Loading response files in both formats, with errors that name the item and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.core.inputs import InputError, load_items, resolve_media


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def test_jsonl(tmp_path: Path) -> None:
    p = write(tmp_path, "r.jsonl", json.dumps({"id": 1, "media": "friday.mp4", "response": "x", "gold": "B",
                                               "options": ["a", "b"]}) + "\n\n")
    (it,) = load_items(p)
    assert it.id == "1" and it.gold == "B" and it.options == ["a", "b"]


def test_authors_json_list(tmp_path: Path) -> None:
    recs = [
        {"id": "v1_q", "video": "v1", "model_generation": "He waves (visual, 0:01).", "question": "q",
         "options": {"A": "x", "B": "y"}, "answer": "A"},
        {"id": "v2_q", "video": "v2", "original_full_generation": "Hi.", "question": "q", "options": ["x"], "answer": "A"},
    ]
    items = load_items(write(tmp_path, "a.json", json.dumps(recs)))
    assert [i.media for i in items] == ["v1", "v2"]
    assert items[0].response.startswith("He waves") and items[0].options == ["x", "y"] and items[0].gold == "A"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"media": "a.mp4", "response": "x"}\n', "line 1: missing field 'id'"),
        ('{"id": "a"}\n', "(id a): no response field"),
        ('{"id": "a", "response": 5}\n', "(id a): field 'response' must be a string"),
        ('{"id": "a", "response": "x"}\n{"id": "a", "response": "y"}\n', "line 2: duplicate id 'a'"),
        ('{"id": "a", "response": "x"\n', "line 1: not valid JSON"),
        ('{"id": "a", "response": "x", "options": 3}\n', "field 'options'"),
    ],
)
def test_errors_name_item_and_field(tmp_path: Path, content: str, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_items(write(tmp_path, "bad.jsonl", content))


def test_a_repeated_id_in_a_json_list_is_refused_by_every_reader(tmp_path: Path) -> None:
    """The JSON-list branch of ``iter_items`` had no duplicate check (only ``load_items`` had one),
    so readers of ``iter_items`` (question sets, ``validate``) counted one id twice."""
    from murgat.core.inputs import iter_items

    p = write(tmp_path, "two.json", json.dumps([{"id": "a", "response": "x"}, {"id": "b", "response": "y"},
                                                {"id": "a", "response": "z"}]))
    with pytest.raises(InputError, match=r"two.json: item 2: duplicate id 'a'"):
        list(iter_items(p))
    with pytest.raises(InputError, match=r"item 2: duplicate id 'a'"):
        load_items(p)


def test_responses_read_beside_a_run_mark_the_items_over_the_cap(tmp_path: Path) -> None:
    from murgat.core.inputs import responses_by_id
    from murgat.core.schema import Item

    p = write(tmp_path, "base.jsonl", json.dumps({"id": "a", "response": "fine"}) + "\n"
              + json.dumps({"id": "b", "response": "x" * 50}) + "\n")
    items = [Item(id="a"), Item(id="b"), Item(id="c")]
    got = responses_by_id(p, items, max_response_chars=10)
    assert got == {"a": "fine"}  # the long one is never handed on
    assert [i.input_problem for i in items] == [None, "response_too_long: 50 characters, over --max-response-chars 10",
                                                None]


def test_non_utf8(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="line 2: not valid UTF-8"):
        load_items(write(tmp_path, "bad.jsonl", b'{"id": "a", "response": "x"}\n{"id": "b", "response": "\xff"}\n'))


def test_resolve_media_by_id_and_extension(tmp_path: Path) -> None:
    (tmp_path / "media").mkdir()
    (tmp_path / "media" / "vid1.mp4").write_bytes(b"x")
    p = write(tmp_path, "r.jsonl", '{"id": "1", "media": "vid1", "response": "x"}\n')
    (it,) = load_items(p)
    assert resolve_media(it, tmp_path / "media", p) == tmp_path / "media" / "vid1.mp4"
    assert resolve_media(it.model_copy(update={"media": "nope"}), tmp_path / "media", p) is None


def test_deeply_nested_line_is_a_clear_input_error(tmp_path: Path) -> None:
    p = tmp_path / "deep.jsonl"
    p.write_text('{"id": "ok", "response": "x"}\n' + "[" * 200_000 + "]" * 200_000 + "\n")
    with pytest.raises(InputError, match=r"line 2: not valid JSON \(JSON nested too deeply\)"):
        load_items(p)


def test_raw_line_separators_inside_strings_are_valid_input(tmp_path: Path) -> None:
    p = tmp_path / "u.jsonl"
    p.write_text(json.dumps({"id": "u", "response": "a\u2028b\u2029c\u0085d"}, ensure_ascii=False) + "\n", encoding="utf-8")
    (item,) = load_items(p)
    assert item.response == "a\u2028b\u2029c\u0085d"


def test_validate_survives_absurd_times(tmp_path: Path, example_media: Path, capsys) -> None:
    from murgat.cli import main

    p = tmp_path / "v.jsonl"
    p.write_text(json.dumps({"id": "big", "media": "friday.mp4", "response": f"He waves (visual, {'9' * 309}s)."}) + "\n"
                 + json.dumps({"id": "ok", "media": "friday.mp4", "response": "He waves (visual, 0:01)."}) + "\n")
    assert main(["validate", str(p), "--media-root", str(example_media), "--json"]) == 0
    out = capsys.readouterr().out
    assert "too long to be a timestamp" in out and '"ok"' in out


def test_an_oversize_response_is_flagged_by_the_loader(tmp_path: Path) -> None:
    """Outside ``score`` there was no size cap: ``validate`` on 2 MB took 33 s, 5 MB 241 s."""
    from murgat.core.inputs import MAX_RESPONSE_CHARS

    big = "He waves (visual, 0:01). " * 100_000
    p = write(tmp_path, "r.jsonl", json.dumps({"id": "big", "response": big}) + "\n"
              + json.dumps({"id": "ok", "response": "He waves (visual, 0:01)."}) + "\n")
    big_item, ok = load_items(p)
    assert big_item.input_problem == (f"response_too_long: {len(big):,} characters, over --max-response-chars "
                                      f"{MAX_RESPONSE_CHARS:,}")
    assert ok.input_problem is None
    assert "input_problem" not in big_item.model_dump()  # never written out, never in the item's digest
    (again, _) = load_items(p, max_response_chars=None)
    assert again.input_problem is None and again.response == big


def test_a_user_field_cannot_fake_the_flag(tmp_path: Path) -> None:
    p = write(tmp_path, "r.jsonl", json.dumps({"id": "a", "response": "x", "input_problem": "no"}) + "\n")
    (item,) = load_items(p)
    assert item.input_problem is None


@pytest.mark.parametrize("indent", [None, 2])
def test_one_json_object_holding_the_items_is_valid_json_of_the_wrong_shape(tmp_path: Path, indent: int | None) -> None:
    """``{"items": [...]}`` (on one line or pretty-printed) is valid JSON: "line 1: not valid JSON" sent
    people looking for a syntax error; the message says what shape murgat reads."""
    from murgat.core.inputs import InputError, load_items

    p = tmp_path / "data.json"
    p.write_text(json.dumps({"items": [{"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}]},
                            indent=indent))
    with pytest.raises(InputError) as err:
        load_items(p)
    msg = str(err.value)
    assert "valid JSON, but of the wrong shape" in msg and "'items'" in msg and "not valid JSON" not in msg
    assert "JSONL" in msg and "JSON list" in msg
