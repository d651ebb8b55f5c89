"""``murgat validate`` and ``murgat citations``: per-item problems, warnings for time-like text that is
not a citation, the size cap, ``--ids``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.commands.citations.cli import citations_doc
from murgat.commands.validate.check import validate_file


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return p


def test_time_like_text_is_a_warning_and_strict_fails(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before, ``He says it <t>3.0</t>.`` was "ok": no citation, no word."""
    p = _write(tmp_path, [{"id": "tag", "media": "friday.mp4", "response": "He says it <t>3.0</t>."},
                          {"id": "clean", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}])
    assert main(["validate", str(p), "--media-root", str(example_media), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    tag, clean = doc["items"]
    assert tag["ok"] and doc["n_with_problems"] == 0 and doc["n_with_warnings"] == 1
    assert tag["time_like"] == [{"sentence": 0, "text": "<t>3.0</t>", "nearest": "(visual, 0:03)",
                                 "reason": tag["time_like"][0]["reason"]}]
    assert clean["time_like"] == []
    assert main(["validate", str(p), "--media-root", str(example_media), "--strict", "--json"]) == 1
    capsys.readouterr()
    assert main(["validate", str(p), "--media-root", str(example_media)]) == 0
    out = capsys.readouterr().out
    assert "<t>3.0</t>" in out and "(visual, 0:03)" in out and "1 with warnings" in out


def test_the_issue_spellings_are_no_longer_ok_silently(tmp_path: Path) -> None:
    rows = [{"id": "zwsp", "response": "The woman talks (audio,\u200b 0:00-0:01)."},
            {"id": "neg", "response": "The woman talks (audio, -0:01)."},
            {"id": "entry", "response": "The woman talks (audio, 0:00-0:03; visual)."},
            {"id": "bare", "response": "He says it (audio, 3.0-5.0)."}]
    by = {r.id: r for r in validate_file(_write(tmp_path, rows))}
    assert by["zwsp"].n_citations == 1 and not by["zwsp"].problems  # read, as without the invisible character
    assert "negative time" in by["neg"].problems[0].reason
    assert by["entry"].n_citations == 2 and "unreadable citation entry 'visual'" in by["entry"].problems[0].reason
    assert by["bare"].n_citations == 1 and not by["bare"].time_like


def test_ids_select_items_and_unknown_ids_are_said(tmp_path: Path, capsys) -> None:
    p = _write(tmp_path, [{"id": "a", "response": "x (visual, 0:01)."}, {"id": "b", "response": "y (visual, 0:01)."},
                          {"id": "c", "response": "z (visual, 0:01)."}])
    assert main(["validate", str(p), "--ids", "c,a,zz", "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert [i["id"] for i in doc["items"]] == ["a", "c"] and doc["missing_ids"] == ["zz"]
    assert "zz" in captured.err
    assert main(["validate", str(p), "--ids", "nope"]) == 2
    assert "select no items" in capsys.readouterr().err
    assert [r.id for r in validate_file(p, ids=["b"])] == ["b"]


@pytest.mark.timeout(120)
def test_an_oversize_response_is_one_items_error(tmp_path: Path, capsys) -> None:
    big = "He waves (visual, 0:01). " * 200_000  # 5 MB: validate took 241 s before, with no cap
    p = _write(tmp_path, [{"id": "big", "response": big}, {"id": "ok", "response": "He waves (visual, 0:01)."}])
    assert main(["validate", str(p), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    big_r, ok = doc["items"]
    assert not big_r["ok"] and big_r["input_error"].startswith("response_too_long: 5,000,000 characters")
    assert ok["input_error"] is None and ok["n_citations"] == 1


def test_validate_says_why_an_answer_was_not_read(tmp_path: Path) -> None:
    rows = [{"id": "end", "options": ["x", "y"], "response": "He waves (visual, 0:01). Answer: B"},
            {"id": "none", "options": ["x", "y"], "response": "He waves (visual, 0:01)."}]
    end, none = validate_file(_write(tmp_path, rows))
    assert end.option == "B" and end.answer_problem is None and end.n_sentences == 1
    assert none.option is None and "no final answer" in (none.answer_problem or "")


def test_citations_command_reports_time_like_text(capsys) -> None:
    text = "He says it <t>3.0</t>. She talks (audio, 3.0-5.0). Answer: B"
    assert main(["citations", text, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    first, second = doc["sentences"]
    assert first["citations"] == [] and first["time_like"][0]["nearest"] == "(visual, 0:03)"
    assert second["citations"][0]["start"] == 3.0 and second["time_like"] == []
    assert doc["option"] == "B" and doc["answer"] == "Answer: B"
    assert main(["citations", text]) == 0
    out = capsys.readouterr().out
    assert "warning: sentence 0: '<t>3.0</t>' is not a citation" in out and "(visual, 0:03)" in out


def test_citations_command_refuses_an_oversize_text(capsys) -> None:
    assert main(["citations", "x " * 150_000]) == 2
    assert "response_too_long" in capsys.readouterr().err
    assert citations_doc("x " * 150_000)["error"].startswith("response_too_long: 300,000 characters")


def test_escape_sequences_in_ids_media_and_text_are_shown_as_text(tmp_path: Path, capsys) -> None:
    """An id, a media name or a quoted bit of the response with an OSC (window title) or CSI (colour)
    sequence is shown with visible escapes in the table and the warning line; ``--json`` keeps it exact."""
    osc, csi = "\x1b]0;pwned\x07", "\x1b[31m"
    p = _write(tmp_path, [{"id": f"a{osc}", "media": f"m{csi}.mp4", "response": f"He waves <t>3.0</t>{csi}."},
                          {"id": f"b{csi}", "response": "x (visual, 0:01)."}])
    assert main(["validate", str(p), "--ids", f"a{osc},b{csi},zz{csi}"]) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out and "\x07" not in out and "\x1b" not in err
    assert "a\\x1b]0;pwned\\x07" in out and "b\\x1b[31m" in out and "m\\x1b[31m.mp4" in out
    assert "zz\\x1b[31m" in err
    assert main(["validate", str(p), "--ids", f"a{osc},b{csi}", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [i["id"] for i in doc["items"]] == [f"a{osc}", f"b{csi}"]
    assert f"m{csi}.mp4" in doc["items"][0]["media_error"]
