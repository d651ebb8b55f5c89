"""``murgat view RUN --human LABELS``: the run panel shows the judge's figures corrected with the labels
(the same block ``murgat calibrate`` computes), or why they were not computed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.report.test_viewer_browser import _open, _run, browser  # noqa: F401


def _murgat(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "murgat", *args], capture_output=True, text=True)


def _labels(run: Path, tmp: Path, with_design: bool) -> Path:
    from murgat.core.corrected import population
    from murgat.engine.folder import RunFolder
    from murgat.human_eval.sampling import draw_sample

    ids, _ = population(RunFolder(run, repair=False).latest_results())
    drawn, design = draw_sample(ids, 3, seed=2)
    rows = [{"id": i, "annotator": "ann", "ratings": {"murgat_s": 0.5, "coverage": 1.0, "precision": 0.5, "recall": 0.5},
             **({"sample": design.model_dump()} if with_design else {})} for i in drawn]
    p = tmp / ("sampled.jsonl" if with_design else "picked.jsonl")
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _data(page: Path) -> dict:
    html = page.read_text()
    tag = '<script id="data" type="application/json">'
    start = html.index(tag) + len(tag)
    return json.loads(html[start:html.index("</script>", start)])


def test_view_with_labels_shows_the_corrected_figures(tmp_path, example_media, browser) -> None:  # noqa: F811
    run = _run(tmp_path, "runV", example_media, "no")
    labels = _labels(run, tmp_path, with_design=True)
    got = _murgat(["view", str(run), "--human", str(labels)])
    assert got.returncode == 0, got.stderr
    block = _data(run / "report.html")["runs"][0]["corrected"]
    cal = _murgat(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "20"])
    assert block == json.loads(cal.stdout[cal.stdout.index("{"):])["runs"][str(run)]["corrected"]
    page, errors, _ = _open(browser, run / "report.html", run)
    page.click("#runbox summary")
    text = page.inner_text("#corrected")
    assert "human-valid figures" in text and "murgat_s" in text and "3 / 1" in text
    assert not errors, errors
    page.close()
    # labels that record no sample: the panel says why there are no corrected figures
    picked = _labels(run, tmp_path, with_design=False)
    assert _murgat(["view", str(run), "--human", str(picked)]).returncode == 0
    assert "refused" in _data(run / "report.html")["runs"][0]["corrected"]
    assert _murgat(["view", str(run), "--human", str(picked), "--assume-random"]).returncode == 0
    assert "--assume-random" in _data(run / "report.html")["runs"][0]["corrected"]["assumption"]
    bad = _murgat(["view", str(run), "--human", str(tmp_path / "missing.jsonl")])
    assert bad.returncode == 2 and "does not exist" in bad.stderr


def test_view_refuses_labels_for_a_run_it_cannot_correct(tmp_path) -> None:
    run = tmp_path / "faith"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"kind": "faithfulness"}))
    got = _murgat(["view", str(run), "--human", str(tmp_path / "labels.jsonl")])
    assert got.returncode == 2 and "murgat calibrate" in got.stderr
