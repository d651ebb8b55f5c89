"""``murgat faithfulness`` and ``murgat reflect`` read answers the one way, and an answer that cannot be
read is unknown, never wrong (replay judges on real media, through the command line).

A chain that ends without an answer has ``correct: null`` and ``answer_problem`` in its record;
accuracy counts it as not correct (as the official scorers do) and the summary says how many
answers were not read, with the accuracy over those that were; the answer × faithfulness table
keeps it in its own row instead of among the wrong answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.core.jsonl import read_records
from tests.commands.faithfulness.test_faithfulness import RESPONSES, cassette

BASE = {"media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"], "gold": "B"}


def test_an_unread_answer_in_a_faithfulness_run(tmp_path: Path, example_media: Path, capsys) -> None:
    rows = [{**BASE, **r} for r in RESPONSES[:3]]
    rows[2]["response"] = rows[2]["response"].replace("\nAnswer: B", "")  # "Bad humor means grumpy, so it is B."
    data = tmp_path / "chains.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    assert main(["faithfulness", str(data), "--media-root", str(example_media), "--judge",
                 f"replay:{cassette(tmp_path)}", "--granularity", "step", "--out", str(out), "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    recs = {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert recs["r3"]["correct"] is None and "no final answer" in recs["r3"]["answer_problem"]
    assert recs["r1"]["correct"] is True and "answer_problem" not in recs["r1"]
    assert doc["accuracy"]["value"] == pytest.approx(1 / 3) and doc["accuracy"]["n"] == 3
    assert doc["n_answer_unknown"] == 1 and doc["accuracy_answered"]["value"] == 0.5
    x = doc["answer_x_faithfulness"]
    assert x["unknown_faithful"] == 1 and x["wrong_unfaithful"] == 1 and x["correct_faithful"] == 1
    assert x["wrong_faithful"] == 0  # the unread answer is not among the wrong ones
    assert main(["faithfulness", str(data), "--media-root", str(example_media), "--judge",
                 f"replay:{cassette(tmp_path)}", "--granularity", "step", "--out", str(out), "--quiet"]) == 0
    table = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "answers not read 1" in table and "answer not read 1 0" in table


def test_an_unread_answer_after_reflection(tmp_path: Path, example_media: Path, capsys) -> None:
    from tests.commands.reflect.test_reflect import setup

    q, start, cas = setup(tmp_path)
    rows = [json.loads(x) for x in start.read_text().splitlines()]
    rows[1]["response"] = "Bad humor means grumpy."  # c2's chain ends without an answer
    start.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    assert main(["reflect", str(q), "--ids", "c2,c3", "--model", f"replay:{cas}", "--detector", f"replay:{cas}",
                 "--from", str(start), "--media-root", str(example_media), "--out", str(out), "--json",
                 "--quiet", "--k", "1"]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    traces = {r["id"]: r for _, r in read_records(out / "traces.jsonl")[0]}
    recs = {r["id"]: r for _, r in read_records(out / "responses.jsonl")[0]}
    assert traces["c2"]["correct_before"] is None and traces["c2"]["answer_problem_before"]
    assert traces["c2"]["correct_after"] is None and traces["c2"]["answer_problem_after"]
    assert recs["c2"]["correct"] is None and recs["c2"]["answer_problem"]
    assert traces["c3"]["correct_after"] is True
    assert doc["accuracy_before"] == 0.5 and doc["accuracy_after"] == 0.5  # the unread answer is not correct
    assert doc["n_answer_unknown_before"] == 1 and doc["n_answer_unknown_after"] == 1
    assert doc["accuracy_answered_before"] == 1.0
