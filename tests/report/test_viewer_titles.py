"""The page title names the run well enough to tell a sweep's pages apart."""

from __future__ import annotations

import re
from pathlib import Path

from murgat.core.metric import summarize_results
from murgat.core.schema import ResponseResult, Scores
from murgat.engine.folder import RunFolder
from murgat.report.pages import build_report


def _run(folder: Path) -> Path:
    recs = [ResponseResult(id="q0", scores=Scores(coverage=1, precision=1, recall=1, f1=1, murgat_s=1))]
    rd = RunFolder(folder)
    rd.append_many(recs)
    rd.write_summary(summarize_results(recs))
    return rd.path


def _title(page: Path) -> str:
    m = re.search(r"<title>(.*?)</title>", page.read_text())
    assert m
    return m.group(1)


def test_each_page_of_a_sweep_has_its_own_title(tmp_path: Path) -> None:
    """Both pages of a sweep were titled "murgat — run": the variant folder is in the title."""
    low, high = _run(tmp_path / "sweep" / "effort-low" / "run"), _run(tmp_path / "sweep" / "effort-high" / "run")
    titles = [_title(build_report([r], r / "report.html")) for r in (low, high)]
    assert titles == ["murgat — effort-low/run", "murgat — effort-high/run"]
    both = build_report([low, high], tmp_path / "compare.html")
    assert _title(both) == "murgat — effort-low/run vs effort-high/run"
