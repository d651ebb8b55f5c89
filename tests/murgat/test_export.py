"""``murgat export``: a real score run (replayed judge, real media) flattened per item, sentence and fact,
read back with pandas as an analyst would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from murgat.export import ExportError, export_results

from .viewer.test_viewer_browser import ITEMS, _run


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
    assert set(facts["status"]) <= {"judged", "undetermined", "not_judged"}
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
