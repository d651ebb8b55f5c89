"""What ``murgat program`` makes of a conclusion's answer, end to end through the command line.

The program's conclusion is read by the one answer reader every command uses
(:func:`murgat.core.answers.read_answer`): an option named by its text is read, and a conclusion that
names no option is ``no_answer`` with ``correct: null`` and the reason (``answer_problem``),
counted as not correct in the variant's accuracy beside ``n_answer_unknown``. Such items are not
failed items (exit 0, a note says how many); error records carry their ``error_kind``; the
assembled response is capped by ``--max-response-chars``. Replay answers on real media.
"""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main
from murgat.core.jsonl import read_records

BASE = {"media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"], "gold": "B"}
PROGRAM = '''- describe("00:03-00:05", "audio", "What is said about his mood?")
- synthesize("Decide the mood for {id}.")'''
MOOD = "A man says he is in a bad humor."
CONCLUSIONS = {
    "by-text": "He is in a bad humor [1].\nAnswer: bad humor",  # the option's text: read as B
    "none": "He is in a bad humor [1], which is hard to map to an option.",  # no option named: unknown
    "letter": "He is in a bad humor [1]. Answer: B",  # the answer ends the line
}


def m(task: str, inputs: dict, text: str) -> dict:
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def _setup(tmp: Path, ids: list[str], planning_error: bool = False) -> tuple[Path, Path]:
    data = tmp / "q.jsonl"
    # one question per item: the planner's prompt (and so its cached answer) differs by item
    data.write_text("".join(json.dumps({**BASE, "id": i, "question": f"{BASE['question']} ({i})"}) + "\n" for i in ids))
    rows = [m("plan", {"id": i}, PROGRAM.replace("{id}", i)) for i in ids if i != "no-plan"]
    if planning_error:
        rows.append(m("plan", {"id": "no-plan"}, "I would just answer B."))
    rows += [m("describe", {}, MOOD), m("entail", {}, "yes")]
    rows += [m("synthesize", {"instruction": f"Decide the mood for {i}."}, text) for i, text in CONCLUSIONS.items()]
    cas = tmp / "program.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data, cas


def _records(out: Path) -> dict[str, dict]:
    return {r["id"]: r for _, r in read_records(out / "narrative-declarative" / "responses.jsonl")[0]}


def test_the_conclusion_is_read_by_the_one_reader_and_an_unread_answer_is_unknown(tmp_path: Path, example_media: Path,
                                                                                 capsys) -> None:
    data, cas = _setup(tmp_path, list(CONCLUSIONS))
    out = tmp_path / "prog"
    code = main(["program", str(data), "--media-root", str(example_media), "--variant", "narrative-declarative",
                 "--planner", f"replay:{cas}", "--out", str(out), "--json", "--quiet"])
    cap = capsys.readouterr()
    assert code == 0  # an item that chose no option is no failed item: its response is written and scored
    recs = _records(out)
    assert recs["by-text"]["predicted_option"] == "B" and recs["by-text"]["correct"] is True
    assert recs["by-text"]["response"].endswith("\nAnswer: B")
    assert recs["letter"]["predicted_option"] == "B" and recs["letter"]["correct"] is True
    none = recs["none"]
    assert none["program_status"] == "no_answer" and none["predicted_option"] is None
    assert none["correct"] is None and "no final answer" in none["answer_problem"]  # unknown, never wrong
    assert "generation_error" not in none
    v = json.loads(cap.out)["variants"]["narrative-declarative"]
    assert v["accuracy"] == 2 / 3 and v["n_answer_unknown"] == 1 and v["accuracy_answered"] == 1.0
    assert v["status"] == {"ok": 2, "no_answer": 1}
    assert "1 gave no readable answer (no_answer)" in cap.err and "FAILED" not in cap.err


def test_error_records_carry_their_kind_and_the_response_cap_is_the_option(tmp_path: Path, example_media: Path,
                                                                          capsys) -> None:
    data, cas = _setup(tmp_path, ["letter", "no-plan"], planning_error=True)
    out = tmp_path / "prog"
    code = main(["program", str(data), "--media-root", str(example_media), "--variant", "narrative-declarative",
                 "--planner", f"replay:{cas}", "--out", str(out), "--json", "--quiet", "--max-response-chars", "40"])
    capsys.readouterr()
    assert code == 1
    recs = _records(out)
    assert recs["no-plan"]["error_kind"] == "planning_error"
    assert recs["no-plan"]["generation_error"].startswith("planning_error: ")
    assert recs["letter"]["error_kind"] == "response_too_long"
    assert "beyond the 40-character limit" in recs["letter"]["generation_error"]
    rows = {r["id"]: r for _, r in read_records(out / "narrative-declarative" / "results.jsonl")[0]}
    assert rows["letter"]["error_kind"] == "response_too_long"  # the structured field, not only the prefix
