"""``--by`` in report.html (in Chromium): the run panel's table of figures per group, with n per
group, an undefined group said as such, and a selector between the combination and each field
alone; ``murgat view RUN --by`` rewrites the page with it; a page without ``--by`` has none."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main
from tests.report.test_viewer_browser import _open, browser  # noqa: F401

CASSETTE = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["Someone speaks."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]
ITEMS = [
    {"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03).",
     "meta": {"task_type": "talk", "audio_class": ["speech", "music"]}},
    {"id": "b", "media": "nasa_13013.mp4", "response": "A man speaks (audio, 0:00-0:04).",
     "meta": {"task_type": "talk", "audio_class": ["speech"]}},
    {"id": "c", "media": "gone.mp4", "response": "A cat sits (visual, 0:01).", "meta": {"task_type": "ghost"}},
]


def _run(tmp: Path, media: Path, *more: str) -> Path:
    inp = tmp / "in.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in ITEMS))
    cas = tmp / "c.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in CASSETTE))
    run = tmp / "run"
    assert main(["score", str(inp), "--judge", f"replay:{cas}", "--media-root", str(media), "--out", str(run),
                 "--quiet", "--json", *more]) == 1  # c's media are missing: an error record
    return run


def _rows(page) -> list[list[str]]:
    return page.evaluate("""() => [...document.querySelectorAll("#breakdown-0 .bdtab tbody tr")].map(
        (tr) => [...tr.children].map((td) => td.textContent.trim()))""")


def test_the_run_panel_shows_the_groups_and_switches_between_fields(
        tmp_path: Path, example_media: Path, browser) -> None:  # noqa: F811
    run = _run(tmp_path, example_media, "--by", "task_type", "--by", "audio_class")
    page, errors, _ = _open(browser, run / "report.html", run)
    page.click("#runbox summary")
    options = page.evaluate("""() => [...document.querySelectorAll("#breakdown-0 .bd-pick option")].map((o) => o.textContent)""")
    assert options == ["task_type × audio_class", "task_type", "audio_class"]
    rows = {r[0]: r for r in _rows(page)}
    assert set(rows) == {"talk · speech", "talk · music", "ghost · (missing)"}
    assert rows["talk · speech"][1:3] == ["2", "2"]  # items, judged
    assert rows["talk · speech"][7].startswith("1.000")  # MURGAT-S
    ghost = rows["ghost · (missing)"]
    assert ghost[1:3] == ["1", "0"] and ghost[7] == "undefined" and ghost[-1] == "1"  # never 0: undefined, 1 error
    why = page.evaluate("""() => [...document.querySelectorAll("#breakdown-0 .bdtab tbody tr")].find(
        (tr) => tr.children[0].textContent.startsWith("ghost")).children[7].querySelector(".undef").title""")
    assert why == "no item of this group was judged (error 1)"
    assert "ghost · (missing): MURGAT-S undefined" in page.inner_text("#breakdown-0")
    page.select_option("#breakdown-0 .bd-pick", label="audio_class")
    rows = {r[0]: r for r in _rows(page)}
    assert {k: v[1] for k, v in rows.items()} == {"speech": "2", "music": "1", "(missing)": "1"}
    assert "an item counts once in each of its values" in page.inner_text("#breakdown-0")
    assert not errors, errors
    page.close()


def test_view_by_rewrites_the_page_and_without_it_there_is_none(
        tmp_path: Path, example_media: Path, browser, capsys) -> None:  # noqa: F811
    run = _run(tmp_path, example_media)
    page, errors, _ = _open(browser, run / "report.html", run)
    page.click("#runbox summary")
    assert page.query_selector(".breakdown") is None and not errors
    page.close()
    assert main(["view", str(run), "--by", "task_type"]) == 0
    page, errors, _ = _open(browser, run / "report.html", run)
    page.click("#runbox summary")
    assert [r[:2] for r in _rows(page)] == [["talk", "2"], ["ghost", "1"]]
    assert page.query_selector("#breakdown-0 .bd-pick option:nth-child(2)") is None  # one field: one view
    assert not errors, errors
    page.close()
    capsys.readouterr()
    assert main(["view", str(run), "--by", "tasktype"]) == 2
    assert "--by 'tasktype (in " in capsys.readouterr().err
