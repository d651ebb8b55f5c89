"""``murgat score`` reads every answer the one way (``murgat.core.answers``) and says what it could not read.

End to end through the command line on real media with a replay judge (hand-written ``match``
lines in the raw text a chat model returns): an ``Answer:`` that ends the line of the last cited
sentence is read; an answer that cannot be read is unknown in its record (``correct: null`` and
``answer_problem``, never ``false``), counted as not correct in accuracy and strict attributed
accuracy, and counted in ``n_answer_unknown`` beside ``accuracy_answered`` — in the summary, the
tables, ``summarize``, the viewer's data and the export. Time-like text the citation grammar did
not read is counted per run (``n_time_like``) and shown where it stands.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.engine.folder import RunFolder
from tests.cassettes import write_jsonl

ANSWER_ALL = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["The woman speaks on the phone."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]
SAID = "The woman speaks on the phone (audio, 0:00-0:02)."
OPTIONS = ["she laughs", "she speaks on the phone", "she sings"]


def _flat(text: str) -> str:
    """A rich table's text with its box lines removed and spaces collapsed (cells read as words)."""
    return " ".join(re.sub(r"[\u2500-\u257f]", " ", text).split())


def _item(i: str, response: str, gold: str | None = "B") -> dict:
    return {"id": i, "media": "friday.mp4", "question": "What does the woman do?", "options": OPTIONS, "gold": gold,
            "response": response}


ITEMS = [
    _item("end-of-line", f"{SAID} Answer: B"),           # the answer ends the line of the last sentence: right
    _item("own-line", f"{SAID}\nAnswer: A"),             # wrong
    _item("bold", f"{SAID}\n**Answer:** (B)"),           # right
    _item("unread", f"{SAID} I cannot tell which."),     # no answer: unknown, never wrong
    _item("time-like", "The woman speaks on the phone <t>3.0</t>.\nAnswer: B"),  # right; a time-like text
    _item("no-gold", f"{SAID} Answer: C", gold=None),    # no gold: left out of accuracy
]


def score_items(tmp_path: Path, media: Path, *extra: str, rows: list[dict] | None = None) -> Path:
    """``rows`` (default ``ITEMS``) scored offline (every stage answered yes) into ``tmp_path/run``."""
    cas = write_jsonl(tmp_path / "cassette.jsonl", ANSWER_ALL)
    inp = write_jsonl(tmp_path / "in.jsonl", ITEMS if rows is None else rows)
    out = tmp_path / "run"
    assert main(["score", str(inp), "--media-root", str(media), "--judge", f"replay:{cas}", "--out", str(out),
                 "--quiet", "--bootstrap", "200", *extra]) == 0
    return out


@pytest.fixture
def scored(tmp_path: Path, example_media: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict]:
    out = score_items(tmp_path, example_media, "--json")
    return out, json.loads(capsys.readouterr().out)


def test_an_answer_ending_a_line_is_read_and_an_unread_one_is_unknown(scored: tuple[Path, dict]) -> None:
    out, summary = scored
    recs = {r.id: r for r in RunFolder(out).latest_results()}
    assert recs["end-of-line"].predicted_option == "B" and recs["end-of-line"].correct is True
    assert recs["end-of-line"].scores.murgat_s == 1.0  # the "Answer: B" is not scored as a sentence
    assert recs["own-line"].correct is False and recs["bold"].correct is True
    unread = recs["unread"]
    assert unread.correct is None and unread.predicted_option is None  # unknown, never wrong
    assert unread.answer_problem and "no final answer" in unread.answer_problem
    assert recs["no-gold"].correct is None and recs["no-gold"].answer_problem is None
    raw = {json.loads(line)["id"]: json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()}
    assert raw["unread"]["correct"] is None and "answer_problem" in raw["unread"]
    assert "answer_problem" not in raw["bold"]  # a record whose answer was read is written as before
    # five items with a gold option: 3 right, 1 wrong, 1 unknown counted as not correct
    assert summary["accuracy"]["value"] == pytest.approx(3 / 5) and summary["accuracy"]["n"] == 5
    assert summary["n_answer_unknown"] == 1
    assert summary["accuracy_answered"]["value"] == pytest.approx(3 / 4) and summary["accuracy_answered"]["n"] == 4
    # right and MURGAT-S >= 0.5: the time-like item's only sentence is uncited (its "<t>3.0</t>" is no citation)
    assert summary["attributed_accuracy"]["value"] == pytest.approx(2 / 5)
    assert summary["n_time_like"] == 1
    tl = recs["time-like"].sentences[0].sentence.time_like
    assert [t.text for t in tl] == ["<t>3.0</t>"] and tl[0].nearest


def test_every_answer_read_gives_n_answer_unknown_zero(tmp_path: Path, example_media: Path, capsys) -> None:
    """Responses whose answer ends the last line, as models write them: every one read."""
    rows = [_item(f"q{k}", f"{SAID} Answer: {'ABC'[k % 3]}") for k in range(6)]
    score_items(tmp_path, example_media, "--json", rows=rows)
    summary = json.loads(capsys.readouterr().out)
    assert summary["accuracy"]["value"] == pytest.approx(2 / 6) and summary["n_answer_unknown"] == 0
    assert summary["accuracy_answered"]["value"] == pytest.approx(2 / 6)


def test_the_tables_and_summarize_show_accuracy_saa_and_what_was_not_read(scored: tuple[Path, dict], tmp_path: Path,
                                                                          example_media: Path, capsys) -> None:
    out, _ = scored
    inp = tmp_path / "in.jsonl"
    cas = tmp_path / "cassette.jsonl"
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out),
                 "--quiet", "--bootstrap", "200"]) == 0  # the tables (nothing is asked again)
    text = _flat(capsys.readouterr().out)
    assert "answers not read 1" in text and "accuracy over the answers read 0.750" in text
    assert "time-like texts not read as citations 1" in text
    assert "1 answer(s) could not be read" in text and "1 time-like text(s) were not read as citations" in text
    assert "? not read" in text  # the per-response table marks the unread answer
    # summarize: one run's table, and runs side by side with accuracy, SAA and the answers not read
    assert main(["summarize", str(out)]) == 0
    one = _flat(capsys.readouterr().out)
    assert "answers not read 1" in one and "accuracy (an answer not read counts as not correct) 0.600" in one
    assert main(["summarize", str(out), str(out)]) == 0
    both = capsys.readouterr().out
    head = next(line for line in both.splitlines() if "murgat_s" in line)
    assert "accuracy" in head and "SAA" in head and "answers not read" in head
    row = next(line for line in both.splitlines() if "0.600" in line)  # the first run's row: accuracy, SAA, 1 not read
    assert "0.400" in row and re.search(r"│\s*1\s*│\s*$", row), row
    assert main(["summarize", str(out), str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["runs"][0]["n_answer_unknown"] == 1 and doc["runs"][0]["attributed_accuracy"]["value"] == 0.4


def test_the_viewer_and_the_export_carry_the_answer_problem_and_the_time_like_text(scored: tuple[Path, dict]) -> None:
    out, _ = scored
    page = (out / "report.html").read_text(encoding="utf-8")
    blob = re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S)
    assert blob is not None
    data = json.loads(blob.group(1))
    run = data["runs"][0]
    items = {it["id"]: it for it in run["items"]}
    assert run["n_answer_unknown"] == 1 and run["accuracy_answered"]["value"] == 0.75 and run["n_time_like"] == 1
    assert any("answers read" in f["label"] for f in run["headline"])
    assert items["unread"]["answer_problem"] and items["unread"]["correct"] is None
    assert items["time-like"]["sentences"][0]["time_like"][0]["text"] == "<t>3.0</t>"
    assert "timeLikeHtml" in page and "answer not read" in page
    assert main(["export", str(out), "--format", "jsonl", "--out", str(out.parent / "items.jsonl")]) == 0
    rows = {r["id"]: r for r in map(json.loads, (out.parent / "items.jsonl").read_text().splitlines())}
    assert "no final answer" in rows["unread"]["answer_problem"] and rows["bold"]["answer_problem"] is None
    assert main(["export", str(out), "--level", "sentence", "--format", "jsonl",
                 "--out", str(out.parent / "sents.jsonl")]) == 0
    sents = [json.loads(x) for x in (out.parent / "sents.jsonl").read_text().splitlines()]
    assert next(s for s in sents if s["id"] == "time-like")["time_like"].startswith("<t>3.0</t> (nearest: ")
