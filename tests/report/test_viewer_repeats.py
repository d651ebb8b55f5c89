"""``score --repeats K``: the run panel of report.html shows how stable the judge was (in Chromium)."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main
from tests.report.test_viewer_browser import _open, browser  # noqa: F401

CASSETTE = [
    {"match": {"task": "entail", "inputs": {"repeat": 1}}, "output": {"text": "no"}},
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["The woman speaks."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]


def test_the_run_panel_shows_the_repeats(tmp_path: Path, example_media: Path, browser) -> None:  # noqa: F811
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03)."}) + "\n")
    cas = tmp_path / "c.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in CASSETTE))
    run = tmp_path / "run"
    assert main(["score", str(inp), "--judge", f"replay:{cas}", "--media-root", str(example_media), "--out", str(run),
                 "--quiet", "--json", "--repeats", "3"]) == 0
    page, errors, _ = _open(browser, run / "report.html", run)
    page.click("#runbox summary")
    text = page.inner_text("#repeats")
    assert "3 repeats" in text and "100.0%" in text and "1.000 · 0.000 · 1.000" in text
    assert "differed between repeats at temperature 0" in text
    assert not errors, errors
    page.close()
