"""One text-size cap at every entry point: ``--max-response-chars`` in every command that reads
responses or chains, end to end through the command line.

The loader marks a response over the cap (:attr:`murgat.core.schema.Item.input_problem`) and the
engine's item loop gives it its ``response_too_long`` error record without reading it (one
hostile item never costs another its record); a command that reads a second file beside its input
(``generate --base``, ``reflect --from``) marks the item whose text there is over the cap, and a
model's own answer over the cap is the same error. Every model and judge here is a replay cassette
that has no answer for the long item: reading it would be a replay miss (exit 3), not an error
record. Before, only ``score`` had a cap (``faithfulness`` took 46 s on 2 MB, ``ground`` 40 s).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.core.jsonl import read_records

HUGE = "The man talks (audio, 0:01). " * 100  # 2,900 characters, over --max-response-chars 1000
CAP = ["--max-response-chars", "1000"]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_faithfulness_gives_a_long_chain_its_error_record(tmp_path: Path, example_media: Path, capsys) -> None:
    from tests.commands.faithfulness.test_faithfulness import RESPONSES, cassette

    base = {"media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"], "gold": "B"}
    data = _jsonl(tmp_path / "chains.jsonl", [{**r, **base} for r in RESPONSES[:2]] + [{**base, "id": "huge",
                                                                                         "response": HUGE}])
    out = tmp_path / "run"
    code = main(["faithfulness", str(data), "--media-root", str(example_media), "--judge",
                 f"replay:{cassette(tmp_path)}", "--out", str(out), "--json", "--quiet", *CAP])
    cap = capsys.readouterr()
    assert code == 1 and "FAILED: 1 of 3" in cap.err and "response_too_long: 1" in cap.err
    recs = {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert recs["huge"]["error_kind"] == "response_too_long" and recs["huge"]["case"] == "error"
    assert recs["huge"]["error"] == "response_too_long: 2,900 characters, over --max-response-chars 1,000"
    assert recs["r1"]["error"] is None and recs["r2"]["upr"] == 1.0  # the others are labelled


def test_ground_gives_a_long_response_its_error_record(tmp_path: Path) -> None:
    from murgat.commands.gold.importers import write_gold
    from murgat.core.gold import GoldItem

    gold = [GoldItem.model_validate({"id": i, "video": "v", "duration": 60.0,
                                     "evidence": [{"modality": "visual", "start": 0.0, "end": 5.0}]}) for i in "ab"]
    write_gold(gold, tmp_path / "gold.jsonl")
    resp = _jsonl(tmp_path / "r.jsonl", [{"id": "a", "response": "x (visual, 0:01-0:03)."},
                                         {"id": "b", "response": HUGE}])
    assert main(["ground", str(resp), "--gold", str(tmp_path / "gold.jsonl"), "--out", str(tmp_path / "run"),
                 "--json", *CAP]) == 1
    capsys_doc = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert capsys_doc["n_errors"] == 1 and capsys_doc["nextgqa"]["n"] == 1
    recs = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "results.jsonl").read_text().splitlines())}
    assert recs["b"]["error"].startswith("response_too_long: 2,900 characters") and recs["a"]["error"] is None


def test_generate_refuses_a_long_base_response_and_a_long_answer(tmp_path: Path, example_media: Path, capsys) -> None:
    q = {"media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"], "gold": "B"}
    # one question per item: the model's prompt (and so its cached answer) differs by item
    data = _jsonl(tmp_path / "q.jsonl", [{**q, "id": i, "question": f"{q['question']} ({i})"}
                                         for i in ("fine", "long-base", "long-answer")])
    said = "A man says he is in a bad humor (audio, 0:03-0:05).\nAnswer: B"
    base = _jsonl(tmp_path / "base.jsonl", [{"id": "fine", "response": said}, {"id": "long-base", "response": HUGE},
                                            {"id": "long-answer", "response": said}])
    cas = _jsonl(tmp_path / "model.jsonl", [
        {"match": {"task": "generate", "inputs": {"id": "fine"}}, "output": {"text": said}},
        {"match": {"task": "generate", "inputs": {"id": "long-answer"}}, "output": {"text": said + " " + HUGE}}])
    out = tmp_path / "gen"
    code = main(["generate", str(data), "--model", f"replay:{cas}", "--mode", "posthoc", "--base", str(base),
                 "--media-root", str(example_media), "--out", str(out), "--json", *CAP])
    capsys.readouterr()
    assert code == 1
    recs = {r["id"]: r for r in map(json.loads, (out / "responses.jsonl").read_text().splitlines())}
    assert recs["long-base"]["error_kind"] == "response_too_long"
    assert recs["long-base"]["generation_error"].startswith("response_too_long: 2,900 characters")
    assert recs["long-answer"]["error_kind"] == "response_too_long"
    assert recs["fine"]["correct"] is True and "generation_error" not in recs["fine"]


def test_reflect_refuses_a_long_starting_chain(tmp_path: Path, example_media: Path, capsys) -> None:
    from tests.commands.reflect.test_reflect import setup

    q, start, cas = setup(tmp_path)
    rows = [json.loads(x) for x in start.read_text().splitlines()]
    rows[1]["response"] = HUGE  # c2's chain
    _jsonl(start, rows)
    out = tmp_path / "run"
    code = main(["reflect", str(q), "--ids", "c2,c3", "--model", f"replay:{cas}", "--detector", f"replay:{cas}",
                 "--from", str(start), "--media-root", str(example_media), "--out", str(out), "--json", "--quiet", *CAP])
    capsys.readouterr()
    assert code == 1
    recs = {r["id"]: r for _, r in read_records(out / "responses.jsonl")[0]}
    assert recs["c2"]["error_kind"] == "response_too_long" and recs["c2"]["response"] == ""
    assert recs["c3"].get("generation_error") is None  # reflected


@pytest.mark.parametrize("flag", [CAP, []])
def test_score_gives_the_loaders_mark_its_error_record_before_its_media_is_read(tmp_path: Path, example_media: Path,
                                                                                 capsys, flag: list[str]) -> None:
    """The engine, not the command, turns the mark into the record: also an item whose media is missing
    (the media preflight never runs for it); without the option the default cap (200,000) holds."""
    big = HUGE if flag else "x" * 200_001
    inp = _jsonl(tmp_path / "in.jsonl", [{"id": "huge", "media": "missing.mp4", "response": big}])
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out",
                 str(tmp_path / "run"), "--quiet", "--json", *flag]) == 1
    capsys.readouterr()
    (rec,) = map(json.loads, (tmp_path / "run" / "results.jsonl").read_text().splitlines())
    assert rec["error_kind"] == "response_too_long" and "missing" not in rec["error"]


def test_one_option_one_default_in_every_command() -> None:
    from murgat.core.inputs import MAX_RESPONSE_CHARS
    from murgat.engine.options import ResponseCap
    from murgat.settings.faithfulness import FaithfulnessSettings
    from murgat.settings.generate import GenerateSettings
    from murgat.settings.program import ProgramSettings
    from murgat.settings.reflect import ReflectSettings
    from murgat.settings.score import ScoreSettings
    from murgat.settings.sweep import SweepSettings

    for model in (ScoreSettings, FaithfulnessSettings, ReflectSettings, GenerateSettings, SweepSettings,
                  ProgramSettings):
        assert issubclass(model, ResponseCap), model
        assert model.model_fields["max_response_chars"].default == MAX_RESPONSE_CHARS


def test_validate_checks_with_the_same_cap(tmp_path: Path, example_media: Path, capsys) -> None:
    """``validate`` says what the run commands would refuse, at the cap they are given."""
    inp = _jsonl(tmp_path / "in.jsonl", [{"id": "huge", "media": "friday.mp4", "response": HUGE}])
    assert main(["validate", str(inp), "--media-root", str(example_media), "--json"]) == 0
    capsys.readouterr()
    assert main(["validate", str(inp), "--media-root", str(example_media), "--json", *CAP]) == 0  # 1 with --strict
    (item,) = json.loads(capsys.readouterr().out)["items"]
    assert item["ok"] is False
    assert item["input_error"] == "response_too_long: 2,900 characters, over --max-response-chars 1,000"
