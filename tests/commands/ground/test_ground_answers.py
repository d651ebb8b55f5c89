"""``murgat ground``'s answer figures on official NExT-GQA annotations, against the official rule.

tests/data/nextgqa_val_excerpt holds 40 NExT-GQA val questions with their human evidence spans
(MIT, see its LICENSE). Each gets a response whose answer ends the line of its last cited sentence,
in the spellings models write (``Answer: B``, ``**Answer:** (B)``, ``Answer: B) text``, ``Final
Answer: B``), and some get no readable answer. The official ``eval_ground.py`` counts Acc@GQA over
every question with a predicted span, a prediction that is not the answer (also none) being not
correct, and reads the letter after the last ``Answer:`` wherever it stands; :func:`_official`
restates it independently of murgat. ``ground`` must give that figure, through the command line,
and say how many answers it could not read (it said 0 before, whatever the responses).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from murgat.commands.gold.importers import write_gold
from murgat.core.citations import format_time
from murgat.core.gold import GoldItem

EXCERPT = Path(__file__).resolve().parents[2] / "data" / "nextgqa_val_excerpt" / "questions.json"
LETTERS = "ABCDE"
FORMATS = ["Answer: {L}", "**Answer:** ({L})", "Answer: {L}) {text}", "Final Answer: {L}", "Answer: ({L})."]


def _official_letter(response: str) -> str | None:
    """The NExT-GQA authors' rule: the letter after the last ``Answer:`` wherever it stands."""
    k = response.rfind("Answer:")
    if k < 0:
        return None
    rest = response[k + len("Answer:"):].lstrip(" *(")
    return rest[:1] if rest[:1] and rest[:1] in LETTERS else None


def _official(questions: list[dict], responses: dict[str, str], spans: dict[str, tuple[float, float]]) -> float:
    """Acc@GQA as eval_ground.py counts it: correct answer AND the best IoP over the gold spans >= 0.5,
    over every question with a predicted span (percent)."""
    hits = 0
    for q in questions:
        a, b = spans[q["id"]]
        best = 0.0
        for g0, g1 in q["location"]:
            inter = max(0.0, min(g1, b) - max(g0, a))
            best = max(best, inter / (b - a) if b > a else float(g0 <= a <= g1))
        right = _official_letter(responses[q["id"]]) == LETTERS[q["options"].index(q["answer"])]
        hits += right and best >= 0.5
    return 100 * hits / len(questions)


def _case(tmp_path: Path) -> tuple[list[dict], dict[str, str], dict[str, tuple[float, float]], Path, Path]:
    questions = json.loads(EXCERPT.read_text())
    gold = []
    responses: dict[str, str] = {}
    spans: dict[str, tuple[float, float]] = {}
    for i, q in enumerate(questions):
        right = q["options"].index(q["answer"])
        gold.append(GoldItem.model_validate({
            "id": q["id"], "video": q["id"].split("_")[0], "duration": q["duration"], "question": q["question"],
            "answer": {"text": q["answer"], "choices": q["options"], "index": right}, "need": "any",
            "evidence": [{"modality": "visual", "start": s, "end": e} for s, e in q["location"]]}))
        s, e = q["location"][0] if i % 4 != 1 else (max(0.0, q["duration"] - 2.0), float(q["duration"]))
        spans[q["id"]] = (float(s), float(e))
        said = f"The person in the video acts (visual, {format_time(s)}-{format_time(e)})."
        if i % 7 == 3:  # no readable answer: the official scorer counts it as not correct
            responses[q["id"]] = f"{said} It is hard to say which option fits."
            continue
        letter = LETTERS[right if i % 3 else (right + 1) % 5]
        line = FORMATS[i % len(FORMATS)].format(L=letter, text=q["options"][LETTERS.index(letter)])
        responses[q["id"]] = f"{said} {line}"  # the answer ends the line of the last cited sentence
    write_gold(gold, tmp_path / "gold.jsonl")
    (tmp_path / "responses.jsonl").write_text("".join(json.dumps({"id": k, "response": v}) + "\n"
                                                      for k, v in responses.items()))
    return questions, responses, spans, tmp_path / "responses.jsonl", tmp_path / "gold.jsonl"


def test_acc_at_gqa_of_answers_ending_a_line_is_the_official_figure(tmp_path: Path) -> None:
    questions, responses, spans, resp, gold = _case(tmp_path)
    got = subprocess.run([sys.executable, "-m", "murgat", "ground", str(resp), "--gold", str(gold), "--out",
                          str(tmp_path / "run"), "--json", "--bootstrap", "200"], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    ng = json.loads(got.stdout)["nextgqa"]
    official = _official(questions, responses, spans)
    unread = sum(1 for v in responses.values() if _official_letter(v) is None)
    assert unread == 6 and official > 30
    assert ng["n"] == 40 and ng["acc_gqa"]["n"] == 40  # the unread answers stay in the denominator
    assert ng["acc_gqa"]["value"] == pytest.approx(official, abs=1e-9)
    assert ng["n_answer_unknown"] == unread  # said, where it said 0 before
    records = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    unknown = [r for r in records if r["answer_problem"]]
    assert len(unknown) == unread and all(r["correct"] is None for r in unknown)  # unknown, never wrong
    answers = json.loads((tmp_path / "run" / "summary.json").read_text())["answers"]
    read = [r for r in records if not r["answer_problem"]]
    assert answers["n_answer_unknown"] == unread and answers["n"] == 40
    assert answers["accuracy"]["value"] == pytest.approx(sum(r["correct"] for r in read) / 40)
    assert answers["accuracy_answered"]["value"] == pytest.approx(sum(r["correct"] for r in read) / len(read))


def test_ground_tables_say_how_many_answers_were_not_read(tmp_path: Path) -> None:
    _, _, _, resp, gold = _case(tmp_path)
    got = subprocess.run([sys.executable, "-m", "murgat", "ground", str(resp), "--gold", str(gold)],
                         capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    rows = [" ".join(line.replace("│", " ").split()) for line in got.stdout.splitlines()]
    assert "nextgqa n_answer_unknown 6" in rows and "answers n_answer_unknown 6" in rows
    assert any(r.startswith("answers accuracy_answered ") for r in rows)
