"""Importers of official annotation files and the gold JSONL reader."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from murgat.commands.gold.importers import bbox_tags, import_citevqa, import_nextgqa, import_rextime, write_gold
from murgat.core.gold import GoldFormatError, load_gold
from tests.conftest import NEXTGQA_SAMPLE

NEXTGQA = NEXTGQA_SAMPLE  # bundled: tests/data/real/nextgqa-sample (MIT, see its LICENSES.md)


def test_nextgqa_sample_imports_every_question() -> None:
    items = import_nextgqa(NEXTGQA / "gsub_test.json", NEXTGQA / "test.csv")
    gsub = json.loads((NEXTGQA / "gsub_test.json").read_text())
    assert len(items) == sum(len(v["location"]) for v in gsub.values()) == 24
    by_id = {i.id: i for i in items}
    two = by_id["7694986054_2"]  # two gold segments: alternatives
    assert [(e.start, e.end) for e in two.evidence] == [(2.6, 7.0), (39.3, 44.2)]
    assert two.need == "any" and two.duration == 64 and two.source == "nextgqa"
    first = by_id["6706220611_5"]
    assert first.answer is not None and first.answer.index == 2
    assert first.answer.choices[2] == first.answer.text == "arrange two pillows close together"
    assert first.question_type == "CW" and first.fps == pytest.approx(29.97, abs=0.01)


def test_nextgqa_map_and_bad_answer(tmp_path: Path) -> None:
    m = tmp_path / "map.json"
    m.write_text(json.dumps({"6706220611": "1025/6706220611"}))
    items = import_nextgqa(NEXTGQA / "gsub_test.json", NEXTGQA / "test.csv", m)
    assert {i.video for i in items if i.id.startswith("6706220611_")} == {"1025/6706220611"}
    bad = tmp_path / "bad.csv"
    lines = (NEXTGQA / "test.csv").read_text().splitlines()
    bad.write_text("\n".join([lines[0], lines[1].replace(",arrange two pillows close together,5,", ",flying,5,", 1)]))
    with pytest.raises(GoldFormatError, match=r"bad.csv: line 2: answer 'flying' is none of the options"):
        import_nextgqa(NEXTGQA / "gsub_test.json", bad)


def test_citevqa_tags_become_page_items(tmp_path: Path) -> None:
    f = tmp_path / "cite.json"
    f.write_text(json.dumps([{"id": "d1", "question": "What is the total?", "answer":
        'The total is 42 <bbox page="2" x1="100" y1="200" x2="550" y2="800" /> and '
        '<bbox doc="b.pdf" page="1" x1="0" y1="0" x2="1000" y2="500"/>.'}]))
    [item] = import_citevqa(f)
    assert item.answer is not None and item.answer.text == "The total is 42 and ."
    a, b = item.evidence
    assert (a.modality, a.page, a.doc) == ("page", 2, None)
    assert a.boxes[0].xyxy() == pytest.approx((0.1, 0.2, 0.55, 0.8))
    assert (b.page, b.doc) == (1, "b.pdf") and item.need == "all"


def test_citevqa_bad_tag_names_the_item(tmp_path: Path) -> None:
    f = tmp_path / "cite.jsonl"
    f.write_text(json.dumps({"id": "d0", "answer": "no tag"}) + "\n"
                 + json.dumps({"id": "d1", "answer": 'x <bbox page="2" x1="600" y1="200" x2="550" y2="800" />'}) + "\n")
    with pytest.raises(GoldFormatError, match=r"cite.jsonl: line 2: .*empty"):
        import_citevqa(f)
    items, problems, clean = bbox_tags('y <bbox page="2" x1="1" y1="2" />', "resp", strict=False)
    assert items == [] and "lacks x2" in problems[0] and clean == "y"


def test_rextime(tmp_path: Path) -> None:
    f = tmp_path / "rex.json"
    f.write_text(json.dumps([
        {"qid": "q1", "vid": "v1", "duration": 120.0, "question": "why?", "options": ["a", "b", "c", "d"], "ans": "C",
         "relevant_windows": [[10.0, 25.5]]},
        {"qid": "q2", "vid": "v1", "duration": 120.0, "options": ["a", "b"], "ans": 1, "relevant_windows": [[0, 3]]},
    ]))
    q1, q2 = import_rextime(f)
    assert q1.answer is not None and q1.answer.index == 2 and q1.evidence[0].end == 25.5 and q1.video == "v1"
    assert q2.answer is not None and q2.answer.index == 1
    f.write_text(json.dumps([{"qid": "q3", "options": ["a"], "ans": "D", "relevant_windows": [[0, 1]]}]))
    with pytest.raises(GoldFormatError, match=r"item 0: 'ans' 'D'"):
        import_rextime(f)


def test_gold_round_trip_and_errors(tmp_path: Path) -> None:
    items = import_nextgqa(NEXTGQA / "gsub_test.json", NEXTGQA / "test.csv")
    p = tmp_path / "gold.jsonl"
    assert write_gold(items, p) == 24
    assert list(load_gold(p).values()) == items
    p.write_text('{"id": "a", "evidence": [{"modality": "visual", "start": 5, "end": 2}]}\n')
    with pytest.raises(GoldFormatError, match=r"line 1: evidence.0: .*start <= end"):
        load_gold(p)
    p.write_text('{"id": "a"}\n{"id": "a"}\n')
    with pytest.raises(GoldFormatError, match="line 2: id 'a' appears twice"):
        load_gold(p)
    p.write_text('{"id": "a", "evidence": [{"modality": "page", "page": 1, "boxes": [{"x1": 10, "y1": 0, "x2": 20, "y2": 1}]}]}\n')
    with pytest.raises(GoldFormatError, match="outside 0-1"):
        load_gold(p)


# ---------------------------------------------------------------- numbers murgat could not read back


def test_nan_and_infinity_are_refused_where_they_are_read(tmp_path: Path) -> None:
    """JSON has no NaN: written as null, murgat refused its own gold file; now the import refuses it."""
    gsub = json.loads((NEXTGQA / "gsub_test.json").read_text())
    gsub["6706220611"]["duration"] = float("nan")
    (tmp_path / "gsub.json").write_text(json.dumps(gsub))  # Python writes the NaN literal, as a hand edit might
    with pytest.raises(GoldFormatError, match=r"video 6706220611.*duration: Input should be a finite number"):
        import_nextgqa(tmp_path / "gsub.json", NEXTGQA / "test.csv")
    gsub["6706220611"]["duration"] = 90
    gsub["6706220611"]["location"]["5"] = [[70.0, float("inf")]]
    (tmp_path / "gsub.json").write_text(json.dumps(gsub))
    with pytest.raises(GoldFormatError, match=r"question 5, segment 0 end: inf is not a finite number"):
        import_nextgqa(tmp_path / "gsub.json", NEXTGQA / "test.csv")
    p = tmp_path / "gold.jsonl"
    p.write_text('{"id": "a", "fps": NaN}\n')
    with pytest.raises(GoldFormatError, match="line 1: fps: Input should be a finite number"):
        load_gold(p)


def test_a_segment_that_is_not_a_number_is_named(tmp_path: Path) -> None:
    gsub = json.loads((NEXTGQA / "gsub_test.json").read_text())
    gsub["6706220611"]["location"]["5"] = [["1:10", 76.5]]
    (tmp_path / "gsub.json").write_text(json.dumps(gsub))
    with pytest.raises(GoldFormatError, match=r"question 5, segment 0 start: '1:10' is not a number of seconds"):
        import_nextgqa(tmp_path / "gsub.json", NEXTGQA / "test.csv")
    f = tmp_path / "rex.json"
    f.write_text(json.dumps([{"qid": "q1", "relevant_windows": [[0, True]]}]))
    with pytest.raises(GoldFormatError, match=r"item 0: relevant_windows, segment 0 end: True is not a number"):
        import_rextime(f)


def test_a_duration_or_frame_rate_that_cannot_be_is_refused(tmp_path: Path) -> None:
    """A negative duration used to make every citation "past the end" without a word."""
    p = tmp_path / "gold.jsonl"
    for bad, why in (('"duration": -5', "duration -5.0 must be a positive"), ('"duration": 0', "duration 0.0 must"),
                     ('"fps": 0', "fps 0.0 must be positive"), ('"fps": 1e7', "at most 1,000,000")):
        p.write_text('{"id": "a", ' + bad + "}\n")
        with pytest.raises(GoldFormatError, match=f"line 1: .*{why}"):
            load_gold(p)


def test_a_gold_file_that_is_not_text_is_named(tmp_path: Path) -> None:
    p = tmp_path / "gold.jsonl"
    p.write_bytes(b'{"id": "a"}\n\xff\xfe\n')
    with pytest.raises(GoldFormatError, match="not UTF-8 text"):
        load_gold(p)


# ---------------------------------------------------------------- where the gold file goes


def _import(*out: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "murgat", "gold", "import", "nextgqa", "--gsub",
                           str(NEXTGQA / "gsub_test.json"), "--qa", str(NEXTGQA / "test.csv"), "--out", *out],
                          capture_output=True, text=True)


def test_gold_import_streams_into_stdout_and_a_pipe(tmp_path: Path) -> None:
    got = _import("/dev/fd/1")
    assert got.returncode == 0, got.stderr
    assert len(got.stdout.splitlines()) == 24 and "wrote 24 gold items to /dev/fd/1" in got.stderr
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)
    reader.start()
    got = _import(str(fifo))
    reader.join(10)
    assert got.returncode == 0 and len(read[0].splitlines()) == 24 and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_gold_import_replaces_gold_but_nothing_else(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    assert _import(str(gold)).returncode == 0
    assert _import(str(gold)).returncode == 0  # its own sort: replaced
    cassette = tmp_path / "answers.jsonl"
    cassette.write_text(json.dumps({"match": {"task": "entail"}, "output": {"text": "yes"}}) + "\n")
    got = _import(str(cassette))
    assert got.returncode == 2 and "replay cassette" in got.stderr and "Traceback" not in got.stderr
    assert json.loads(cassette.read_text())["output"] == {"text": "yes"}
    got = _import(str(NEXTGQA / "test.csv"))
    assert got.returncode == 2 and "is an input of this command" in got.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x")
    got = _import(str(blocker / "gold.jsonl"))
    assert got.returncode == 2 and "cannot be written" in got.stderr and "Traceback" not in got.stderr
