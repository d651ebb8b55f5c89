"""``murgat export``: a real score run (replayed judge, real media) flattened per item, sentence and fact,
read back with pandas as an analyst would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from murgat.core.export import FACT_STATUSES, ExportError, export_results
from tests.report.test_viewer_browser import ITEMS, _run


def main(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "murgat", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def run(tmp_path_factory, example_media) -> Path:
    return _run(tmp_path_factory.mktemp("export"), "runA", example_media, "no")


def test_item_level_csv_reads_back_with_pandas(run: Path) -> None:
    got = main(["export", str(run)])
    assert got.returncode == 0, got.stderr
    df = pd.read_csv(run / "export_item.csv")
    assert list(df["id"]) == [it["id"] for it in ITEMS]  # input order, one row per item
    by = df.set_index("id")
    assert by.loc["b-wrong", "murgat_s"] == 0.0 and by.loc["b-wrong", "correct"] == False  # noqa: E712
    assert by.loc["a-phone", "answer"] == "B" and by.loc["a-phone", "media"] == "friday.mp4"
    summary = json.loads((run / "summary.json").read_text())
    assert df["murgat_s"].mean() == pytest.approx(summary["murgat_s"]["value"])


def test_sentence_and_fact_levels_jsonl_and_csv(run: Path, tmp_path: Path) -> None:
    assert main(["export", str(run), "--level", "sentence", "--format", "jsonl", "--out", str(tmp_path / "s.jsonl")]
                ).returncode == 0
    sents = pd.read_json(tmp_path / "s.jsonl", lines=True)
    late = sents[sents["id"] == "10-late"].iloc[0]
    assert late["n_invalid_citations"] == 1 and "past the end" in late["invalid_reasons"]
    unclear = sents[sents["text"] == "The picture is unclear."].iloc[0]
    assert bool(unclear["verifiable"]) is False and unclear["n_citations"] == 0
    assert main(["export", str(run), "--level", "fact", "--out", str(tmp_path / "f.csv")]).returncode == 0
    facts = pd.read_csv(tmp_path / "f.csv")
    laugh = facts[facts["text"] == "A man laughs."].iloc[0]
    assert laugh["id"] == "b-wrong" and laugh["joint"] == "no" and laugh["recall"] == 0.0
    assert laugh["modalities"] == "audio" and laugh["citations"] == "audio, 0:03-0:05"
    assert set(facts["status"]) <= set(FACT_STATUSES)
    # the tables join on the item id
    assert set(facts["id"]) <= set(sents["id"])


def test_parquet_without_pyarrow_is_a_clear_error(run: Path, tmp_path: Path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        got = main(["export", str(run), "--format", "parquet", "--out", str(tmp_path / "x.parquet")])
        assert got.returncode == 2 and "pyarrow" in got.stderr and not (tmp_path / "x.parquet").exists()
    else:
        assert main(["export", str(run), "--format", "parquet", "--out", str(tmp_path / "x.parquet")]).returncode == 0
        assert len(pd.read_parquet(tmp_path / "x.parquet")) == len(ITEMS)


def test_bad_level_and_other_kinds(run: Path, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="unknown level"):
        export_results([], tmp_path / "x.csv", "csv", "word")
    (tmp_path / "empty").mkdir()
    got = main(["export", str(tmp_path / "empty")])
    assert got.returncode == 2 and "no results" in got.stderr


# ---------------------------------------------------------------- what a fact's row says


def test_a_fact_row_tells_an_invalid_citation_from_the_judges_no(run: Path, tmp_path: Path) -> None:
    assert main(["export", str(run), "--level", "fact", "--format", "jsonl", "--out", str(tmp_path / "f.jsonl")]
                ).returncode == 0
    facts = {f["text"]: f for f in map(json.loads, (tmp_path / "f.jsonl").read_text().splitlines())}
    late = facts["A door opens."]  # its only citation (9:00) is past the end of the video: nothing was asked
    assert late["status"] == "invalid_citation" and late["judge_calls"] == 0 and late["judge_answer"] is None
    # the joint question was never asked: not the judge's "no"
    assert late["joint"] == "invalid citation" and late["n_invalid_citations"] == 1 and "past the end" in late["reason"]
    laugh = facts["A man laughs."]  # the judge's real "no", with its words
    assert laugh["status"] == "judged" and laugh["judge_answer"] == "no" and laugh["judge_calls"] == 1
    phone = facts["A woman holds a phone."]
    assert phone["status"] == "abstained" and phone["judge_answer"] == "unknown" and phone["recall"] is None


def test_the_export_knows_the_score_commands_markers() -> None:
    """The core restates two markers of the score command (it cannot import it): they must agree."""
    from murgat.commands.score import stages
    from murgat.core import export

    assert export.OVER_LIMIT == stages.OVER_LIMIT and export.BOX_CHECK_STAGES == stages.BOX_CHECK_STAGES


# ---------------------------------------------------------------- spreadsheets


def _formula_run(tmp: Path, media: Path) -> Path:
    """A scored run whose question, sentence and facts start like spreadsheet formulas."""
    rows = [{"match": {"task": "verify"}, "output": {"text": "yes"}},
            {"match": {"task": "decompose"}, "output": {"text": json.dumps(
                {"facts": ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)"]})}},
            {"match": {"task": "entail"}, "output": {"text": "yes"}}]
    cas = tmp / "answers.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    inp = tmp / "in.jsonl"
    inp.write_text(json.dumps({"id": "=cmd|' /C calc'!A0", "media": "friday.mp4", "question": "=1+1",
                               "response": "=A woman talks (audio, 0:01-0:03)."}) + "\n")
    out = tmp / "run"
    got = main(["score", str(inp), "--media-root", str(media), "--judge", f"replay:{cas}", "--out", str(out),
                "--quiet", "--json"])
    assert got.returncode == 0, got.stderr
    return out


def test_csv_cells_that_start_like_formulas_are_written_as_text(tmp_path: Path, example_media: Path) -> None:
    import csv

    from murgat.core.export import csv_cell

    run = _formula_run(tmp_path, example_media)
    assert main(["export", str(run), "--level", "fact", "--out", str(tmp_path / "f.csv")]).returncode == 0
    with open(tmp_path / "f.csv", newline="", encoding="utf-8") as f:
        facts = list(csv.DictReader(f))
    assert {r["text"] for r in facts} == {"'=HYPERLINK(\"http://x\",\"y\")", "'+1+1", "'-2+3", "'@SUM(A1)"}
    assert all(r["id"] == "'=cmd|' /C calc'!A0" for r in facts)
    assert main(["export", str(run), "--out", str(tmp_path / "i.csv")]).returncode == 0
    with open(tmp_path / "i.csv", newline="", encoding="utf-8") as f:
        (item,) = list(csv.DictReader(f))
    assert item["question"] == "'=1+1" and item["murgat_s"] == "1.0"  # numbers stay numbers
    # JSONL is not a spreadsheet format: the text is kept as it is
    assert main(["export", str(run), "--level", "fact", "--format", "jsonl", "--out", str(tmp_path / "f.jsonl")]
                ).returncode == 0
    assert "=HYPERLINK(\"http://x\",\"y\")" in {json.loads(x)["text"] for x in (tmp_path / "f.jsonl").read_text().splitlines()}
    assert csv_cell(-0.25) == -0.25 and csv_cell("a=b") == "a=b" and csv_cell("\tx") == "'\tx"


def test_text_that_is_only_a_number_stays_a_number() -> None:
    """Before: an id or answer "-1" was written "'-1" (the spreadsheet then shows text, and a join on
    the id breaks); a plain number runs nothing, so only formula-like text gets the quote."""
    from murgat.core.export import csv_cell

    for plain in ("-1", "+2", "-0.5", "-.5", "+1e3", "-2E-4", "-7."):
        assert csv_cell(plain) == plain
    for formula in ("-1+1", "-2*3", "+1-A1", "-inf", "-nan", "-1 ", "-", "+", "-1e", "--1"):
        assert csv_cell(formula) == "'" + formula


# ---------------------------------------------------------------- where the table goes


def test_export_never_replaces_a_runs_records(run: Path) -> None:
    before = {name: (run / name).read_bytes() for name in ("results.jsonl", "summary.json")}
    got = main(["export", str(run), "--format", "jsonl", "--out", str(run / "results.jsonl")])
    assert got.returncode == 2 and "is an input of this command" in got.stderr and "Traceback" not in got.stderr
    got = main(["export", str(run), "--format", "jsonl", "--out", str(run / "summary.json")])
    assert got.returncode == 2 and "part of the 'score' run" in got.stderr and "Traceback" not in got.stderr
    assert {name: (run / name).read_bytes() for name in before} == before


def test_export_streams_into_a_pipe_and_stdout(run: Path, tmp_path: Path) -> None:
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = main(["export", str(run), "--out", str(fifo)])
    reader.join(10)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the pipe, not a regular file put in its place
    assert got and got[0].decode().splitlines()[0].startswith("id,case,")
    # the process's own stdout: the table on stdout, the status line on stderr
    out = main(["export", str(run), "--out", "/dev/fd/1"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("id,case,") and len(out.stdout.splitlines()) == len(ITEMS) + 1
    assert "wrote 4 item rows to /dev/fd/1" in out.stderr


def test_an_unwritable_out_is_a_clear_error(run: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    got = main(["export", str(run), "--out", str(blocker / "x.csv")])
    assert got.returncode == 2 and "cannot be written" in got.stderr and "Traceback" not in got.stderr


def test_export_says_which_lines_are_not_records(run: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    with open(copy / "results.jsonl", "a", encoding="utf-8") as f:
        f.write('{"id": "torn", "case": \n')
    got = main(["export", str(copy), "--out", str(tmp_path / "x.csv")])
    assert got.returncode == 0 and "warning:" in got.stderr and "1 line(s) that are not results" in got.stderr
    assert len((tmp_path / "x.csv").read_text().splitlines()) == len(ITEMS) + 1


def test_a_fact_no_judge_was_asked_is_an_invalid_citation_in_the_viewer_and_the_inspect_explanation(run: Path) -> None:
    """The fact whose only citation is invalid: the viewer showed a red joint "no" with 0 judge calls,
    the inspect scorer's explanation "joint no"; both say invalid citation, and the judge's real "no"
    stays a "no"."""
    from murgat.engine.folder import RunFolder
    from murgat.integrations.batching import explain
    from murgat.report.viewer import item_doc

    late = next(r for r in RunFolder(run).latest_results() if r.id == "10-late")
    facts = {f["text"]: f for s in item_doc(late, None, {})["sentences"] for f in s["facts"]}
    door = facts["A door opens."]
    assert door["joint"] == "invalid citation" and door["status"] == "invalid citation" and door["calls"] == []
    assert "past the end" in door["reason"]
    text = explain(late)
    (line,) = [x for x in text.splitlines() if "A door opens." in x]
    assert "invalid citation, no judge asked" in line and "joint" not in line
    wrong = next(r for r in RunFolder(run).latest_results() if r.id == "b-wrong")
    laugh = {f["text"]: f for s in item_doc(wrong, None, {})["sentences"] for f in s["facts"]}["A man laughs."]
    assert laugh["joint"] == "no" and laugh["status"] == "judged"


def test_the_command_lines_choices_are_the_formats_and_levels_export_writes() -> None:
    from typing import get_args

    from murgat.core.export import FORMATS, LEVELS
    from murgat.settings.export import ExportSettings

    fields = ExportSettings.model_fields
    assert get_args(fields["format"].annotation) == FORMATS and get_args(fields["level"].annotation) == LEVELS
