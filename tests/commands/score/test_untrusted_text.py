"""``murgat score`` prints ids, ``--by`` values, answers, media names and error messages that come from
the input; an escape sequence in them is shown as text (``\\x1b``), never sent to the terminal, in the
tables and in the warning lines, while ``--json`` and ``results.jsonl`` keep the exact text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "responses.jsonl"
OSC_TITLE = "\x1b]0;pwned\x07"  # sets the window title
CSI_RED = "\x1b[31m"  # colours everything after it
CASSETTE = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["Something is there."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]


def _jsonl(p: Path, rows: list[dict]) -> Path:
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _hostile_input(tmp: Path, response_suffix: str = "") -> Path:
    """Two of the bundled items with hostile ids and ``--by`` values, and one whose media name is hostile
    (it is missing: its error record names it)."""
    a, b = [json.loads(x) for x in EXAMPLE.read_text().splitlines() if x.strip()][:2]
    rows = [{**a, "id": f"title{OSC_TITLE}", "meta": {"task_type": f"red{CSI_RED}group"}},
            {**b, "id": f"red{CSI_RED}id", "response": b["response"] + response_suffix,
             "meta": {"task_type": f"t{OSC_TITLE}"}},
            {**b, "id": "plain", "media": f"gone{CSI_RED}.mp4", "meta": {"task_type": "x"}}]
    return _jsonl(tmp / "in.jsonl", rows)


def _score(inp: Path, run: Path, media: Path, *more: str) -> int:
    cas = _jsonl(run.parent / "cassette.jsonl", CASSETTE)
    return main(["score", str(inp), "--judge", f"replay:{cas}", "--out", str(run), "--media-root", str(media),
                 "--by", "task_type", "--quiet", *more])


def test_score_tables_and_warnings_show_escapes_as_text(tmp_path: Path, example_media: Path, capsys,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # room for the breakdown's labels whole: squeezed below its longest word, a label is cut in its middle
    # (murgat.core.cells), which would hide the very escapes looked for here
    monkeypatch.setenv("COLUMNS", "240")
    run = tmp_path / "run"
    assert _score(_hostile_input(tmp_path), run, example_media) == 1  # the missing media: one error record
    out, err = capsys.readouterr()
    assert "\x1b" not in out and "\x07" not in out and "\x1b" not in err
    # the items table (ids, the error naming the media), the breakdown (its labels): shown as escapes
    items, groups = out.split("by task_type")
    for shown in ("title\\x1b]0;pwned\\x07", "red\\x1b[31mid", "gone\\x1b[31m.mp4"):
        assert shown in items
    assert "red\\x1b[" in groups and "t\\x1b]0;" in groups
    # the exact ids stay in the records
    ids = {json.loads(x)["id"] for x in (run / "results.jsonl").read_text().splitlines()}
    assert ids == {f"title{OSC_TITLE}", f"red{CSI_RED}id", "plain"}

    # a resume after an edit: its note names the edited item, shown as text too
    inp = _hostile_input(tmp_path, response_suffix=" It is quiet.")
    assert _score(inp, run, example_media) == 1
    out, err = capsys.readouterr()
    assert "changed since they were last run" in err and "red\\x1b[31mid" in err
    assert "\x1b" not in out and "\x1b" not in err


def test_score_json_keeps_the_exact_text(tmp_path: Path, example_media: Path, capsys) -> None:
    run = tmp_path / "run"
    assert _score(_hostile_input(tmp_path), run, example_media, "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    labels = {g["label"] for g in doc["extra"]["breakdown"]["groups"]}
    assert labels == {f"red{CSI_RED}group", f"t{OSC_TITLE}", "x"}
