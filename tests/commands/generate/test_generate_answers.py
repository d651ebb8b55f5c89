"""``murgat generate`` reads the model's answer the one way every command does, through the command
line with a replay model on real media: an answer at the end of a line is read, one that cannot be
read is unknown (``correct: null`` and ``answer_problem``), counted as not correct in accuracy and
reported as ``n_answer_unknown`` beside ``accuracy_answered``."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main

Q = {"media": "friday.mp4", "options": ["happy", "bad humor"], "gold": "B"}
ANSWERS = {
    "end": "A man says he is in a bad humor (audio, 0:03-0:05). Answer: B",
    "text": "A man says he is in a bad humor (audio, 0:03-0:05).\nAnswer: bad humor",
    "none": "A man says something about his mood (audio, 0:03-0:05).",
}


def test_generated_answers_are_read_and_an_unread_one_is_unknown(tmp_path: Path, example_media: Path, capsys) -> None:
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({**Q, "id": i, "question": f"What mood is the man in? ({i})"}) + "\n"
                            for i in ANSWERS))
    cas = tmp_path / "model.jsonl"
    cas.write_text("".join(json.dumps({"match": {"task": "generate", "inputs": {"id": i}}, "output": {"text": t}}) + "\n"
                           for i, t in ANSWERS.items()))
    out = tmp_path / "gen"
    args = ["generate", str(data), "--model", f"replay:{cas}", "--mode", "cite", "--media-root", str(example_media),
            "--out", str(out)]
    assert main([*args, "--json"]) == 0  # an unread answer is no failed item
    doc = json.loads(capsys.readouterr().out)
    recs = {r["id"]: r for r in map(json.loads, (out / "responses.jsonl").read_text().splitlines())}
    assert recs["end"]["predicted_option"] == "B" and recs["end"]["correct"] is True
    assert recs["text"]["predicted_option"] == "B" and recs["text"]["correct"] is True  # the option's text
    assert recs["none"]["correct"] is None and "no final answer" in recs["none"]["answer_problem"]
    assert "answer_problem" not in recs["end"]
    assert doc["accuracy"]["value"] == 2 / 3 and doc["accuracy"]["n"] == 3 and doc["n_with_gold"] == 3
    assert doc["n_answer_unknown"] == 1 and doc["accuracy_answered"]["value"] == 1.0
    assert main(args) == 0
    assert "(1 answer(s) not read, counted as not correct; accuracy over the 2 read: 1.000)" in capsys.readouterr().out
