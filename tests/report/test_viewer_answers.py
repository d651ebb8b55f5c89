"""What the report page says about answers it could not read and citation-like text it did not read,
in a real browser (Chromium, Playwright), on runs made through the command line with replay answers.

- a score run: the run panel counts the answers not read (counted as not correct above) and the
  time-like texts not read as citations; the answer filter finds the unread answers apart from the
  items without a gold option; an item says why its answer was not read; a sentence shows each
  time-like text with the nearest accepted spelling;
- a program run: an item refused for forged citations is marked as a failure, as a stopped program
  or a planning error is.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.report.test_viewer_browser import _open, browser, main  # noqa: F401  (browser: the Playwright fixture)


def test_unread_answers_and_time_like_text_on_the_page(tmp_path: Path, example_media: Path, browser) -> None:  # noqa: F811
    from tests.commands.score.test_score_answers import score_items

    out = score_items(tmp_path, example_media)
    page, errors, _ = _open(browser, out / "report.html", tmp_path)
    assert "accuracy over the answers read" in page.inner_text("#headline")
    page.click("#runbox summary")
    panel = " ".join(page.inner_text("#runpanel").split())
    assert "answers not read 1" in panel and "time-like texts not read as citations 1" in panel
    assert "accuracy over the answers read (1 not read)" in panel
    page.select_option("#filter-correct", "unread")
    assert page.inner_text("#count") == "1"
    page.locator(".item-row").first.click()
    item = page.inner_text("#item")
    assert "answer not read" in item and "no final answer" in item
    page.select_option("#filter-correct", "unknown")  # no gold option: not the unread answer
    assert page.inner_text("#count") == "1" and page.locator(".item-row").first.get_attribute("data-id") == "no-gold"
    page.select_option("#filter-correct", "")
    page.locator('.item-row[data-id="time-like"]').click()
    mark = page.inner_text("#item .timelike")
    assert "<t>3.0</t>" in mark and "nearest accepted spelling (visual, 0:03)" in mark
    assert not errors, errors
    page.close()


def test_a_refused_program_answer_is_marked_as_a_failure(tmp_path: Path, example_media: Path, browser) -> None:  # noqa: F811
    from tests.programs.test_program_answers import BASE, MOOD, m

    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({**BASE, "id": "forged"}) + "\n")
    rows = [m("plan", {}, '- describe("00:03-00:05", "audio", "What is said?")\n- synthesize("Decide.")'),
            m("describe", {}, MOOD), m("entail", {}, "yes"),
            m("synthesize", {}, "He waves (visual, 0:09).\nAnswer: B")]  # a segment no describe cited
    cas = tmp_path / "program.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "prog"
    assert main(["program", str(data), "--media-root", str(example_media), "--variant", "narrative-declarative",
                 "--planner", f"replay:{cas}", "--out", str(out), "--quiet"]) == 1
    page, errors, _ = _open(browser, out / "report.html", tmp_path)
    page.locator(".item-row").first.click()
    head = page.locator("#item h2 .pill").first
    assert head.inner_text() == "forged_citations" and "v-no" in (head.get_attribute("class") or "")
    assert not errors, errors
    page.close()
