"""The report viewer in a real browser: Chromium from the distribution, driven by Playwright.

Runs are scored on real media with hand-written replay answers; the page is opened from
disk (file://). Screenshots of each view are written to ``test-artifacts/`` (ignored by git).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from murgat.core.citations import strip_citations


def main(args: list[str]) -> int:
    """murgat in a subprocess: Playwright's sync API keeps an event loop running in this one."""
    return subprocess.run([sys.executable, "-m", "murgat", *args], capture_output=True, text=True).returncode

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"

ITEMS = [
    {"id": "a-phone", "media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"],
     "gold": "B", "response": "She asks for the lord of the universe (audio, 0:01-0:03). "
                              "A woman holds a phone (visual, 0:03-0:05).\nAnswer: B"},
    {"id": "b-wrong", "media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"],
     "gold": "B", "response": "A man laughs (audio, 0:03-0:05).\nAnswer: A"},
    {"id": "c-nasa", "media": "nasa_13013.mp4", "question": "Where?", "options": ["Goddard", "Orbit"], "gold": "A",
     "response": "The narrator names Goddard (audio, 0:08-0:12). The picture is unclear.\nAnswer: A"},
    {"id": "10-late", "media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"],
     "gold": "B", "response": "A door opens (visual, 9:00).\nAnswer: B"},
]


def _m(task, inputs, text):
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def _run(tmp: Path, name: str, example_media: Path, laugh: str) -> Path:
    from murgat.core.text import preprocess, split_sentences

    rows = [_m("verify", {"sentence": "The picture is unclear."}, "no"), _m("verify", {}, "yes, it describes the video")]
    for it in ITEMS:
        for s in split_sentences(preprocess(it["response"], 2).reasoning):
            rows.append(_m("decompose", {"sentence": s.text}, json.dumps({"facts": [strip_citations(s.text)]})))
    rows += [_m("entail", {"fact": "A man laughs."}, laugh), _m("entail", {"fact": "A woman holds a phone."}, "unknown"),
             _m("entail", {}, "yes: the segment shows it")]
    cas = tmp / f"{name}.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    inp = tmp / "in.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in ITEMS))
    out = tmp / name
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out),
                 "--quiet", "--json", "--save-evidence"]) == 0
    return out


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Chromium is installed by scripts/bootstrap.sh (apt-get install chromium)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--autoplay-policy=no-user-gesture-required"])
        yield b
        b.close()


def _open(browser, page_path: Path, root: Path, width: int = 1280, height: int = 800, hash: str = ""):
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def check(req) -> None:
        url = req.url
        if not (url.startswith("file://") and (url[7:].startswith(str(root)) or url[7:].startswith(str(root.resolve())))):
            if not url.startswith(("data:", "blob:", "about:")):
                outside.append(url)

    page.on("request", check)
    page.goto(page_path.resolve().as_uri() + hash)
    page.wait_for_selector(".item-row")
    return page, errors, outside


def _in_view(page, selector: str) -> bool:
    """The element's box lies inside the viewport (no scrolling needed to see it)."""
    return page.evaluate("""(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }""", selector)


def _no_horizontal_overflow(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= innerWidth + 1")


def test_chips_filters_and_no_outside_requests(tmp_path, example_media, browser, capsys) -> None:
    run = _run(tmp_path, "runA", example_media, "no")
    capsys.readouterr()
    # portable folder: media copied next to the report, so the only files read are inside it
    assert main(["view", str(run), "--copy-media", "--save-evidence"]) == 0
    page, errors, outside = _open(browser, run / "report.html", run)
    ARTIFACTS.mkdir(exist_ok=True)
    assert page.inner_text("#count") == "4"
    # layout at 1280x800: the headline (with its CI) and the first rows of the list are in view
    assert _in_view(page, "#headline") and _in_view(page, ".item-row:nth-child(2)")
    head = page.inner_text("#headline")
    assert "MURGAT-S" in head and "attributed accuracy" in head and "[" in head and "[–" not in head
    # input order by default; "sort: id" sorts
    ids = lambda: [r.get_attribute("data-id") for r in page.locator(".item-row").all()]  # noqa: E731
    assert ids() == [it["id"] for it in ITEMS]
    page.select_option("#sort", "id")
    assert ids() == ["10-late", "a-phone", "b-wrong", "c-nasa"]
    page.select_option("#sort", "input")
    # run panel: strict attributed accuracy, and the precision-by-modality table has headers
    page.click("#runbox summary")
    assert "attributed accuracy" in page.inner_text("#runpanel")
    # the summary's facts by cited modality (summary.json by_modality): precision, recall, F1, and the "all" row
    assert page.locator("#runpanel table.pbm th").all_inner_texts() == ["cited modality", "precision", "recall", "F1",
                                                                         "facts"]
    assert page.locator("#by-modality tr td:first-child").all_inner_texts()[-1] == "all"
    page.click("#runbox summary")
    page.click(".item-row[data-id='a-phone']")
    assert page.evaluate("location.hash") == "#item=a-phone"
    assert page.inner_text("#item .media") == "media friday.mp4"  # the file's name, not media/… or ../../…
    chip = page.locator("#item .sent .chip:not(.bad)").first
    start = float(chip.get_attribute("data-start"))
    page.wait_for_function("() => document.getElementById('player').readyState >= 1", timeout=10_000)
    # click and read the position in the same tick: the seek itself, before playback moves it
    t = page.evaluate("() => { document.querySelector('#item .sent .chip:not(.bad)').click(); "
                      "return document.getElementById('player').currentTime; }")
    assert abs(t - start) <= 0.1, (t, start)
    page.wait_for_function("() => !document.getElementById('player').paused", timeout=10_000)
    assert page.evaluate("document.getElementById('player').currentTime") >= start - 0.1
    assert page.evaluate("document.getElementById('player').muted") is False  # sound after the user's click
    page.screenshot(path=str(ARTIFACTS / "viewer_item.png"))
    # an invalid citation's reason is on the page, not only in a tooltip
    page.click(".item-row[data-id='10-late']")
    assert "past the end of the visual" in page.inner_text("#item .bad-reason")
    # filters
    page.select_option("#filter-correct", "wrong")
    assert page.inner_text("#count") == "1"
    page.select_option("#filter-correct", "")
    page.fill("#filter-min", "0.9")
    assert int(page.inner_text("#count")) == sum(1 for _ in page.locator(".item-row").all())
    n_high = int(page.inner_text("#count"))
    page.fill("#filter-min", "")
    assert page.inner_text("#count") == "4" and n_high < 4
    page.check("#filter-undet")
    assert page.inner_text("#count") == "1"  # only a-phone has an undetermined (unknown) verdict
    page.uncheck("#filter-undet")
    page.fill("#filter-text", "goddard")
    assert page.inner_text("#count") == "1"
    page.fill("#filter-text", "")
    page.select_option("#filter-case", "scored")
    assert int(page.inner_text("#count")) >= 3
    page.select_option("#filter-case", "")
    page.screenshot(path=str(ARTIFACTS / "viewer_filters.png"))
    page.click(".item-row[data-id='a-phone']")
    # what the judge was sent: every frame of the visual segment (as many as build_evidence gives the
    # judge), the audio clip, and the prompt's text with the fact
    from murgat.core.citations import parse_citations
    from murgat.media.evidence import EvidenceConfig, build_evidence

    sent = build_evidence(example_media / "friday.mp4", parse_citations("(visual, 0:03-0:05)"), EvidenceConfig())
    n_frames = len(sent.segments[0].frames)
    phone = page.locator(".fact", has_text="A woman holds a phone.")
    assert phone.locator(".evid img").count() == n_frames > 1
    assert page.locator(".fact", has_text="She asks for the lord").locator(".evid audio").count() == 1
    phone.locator("details.prompt summary").click()
    assert "A woman holds a phone." in phone.locator("details.prompt pre").inner_text()
    assert not errors, errors
    assert not outside, outside
    page.close()


def test_keyboard_links_download_and_narrow_layout(tmp_path, example_media, browser, capsys) -> None:
    run = _run(tmp_path, "runA", example_media, "no")
    capsys.readouterr()
    assert main(["view", str(run), "--copy-media"]) == 0
    # a link to an item opens it (and survives a reload)
    page, errors, outside = _open(browser, run / "report.html", run, hash="#item=c-nasa")
    assert page.inner_text("#item h2").startswith("c-nasa")
    page.reload()
    page.wait_for_selector(".item-row")
    assert page.inner_text("#item h2").startswith("c-nasa")
    # keyboard: j/k and arrows move through the filtered list, Enter opens
    page.click("#item h2")  # focus the page, not a form field
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    assert page.inner_text("#item h2").startswith("10-late") and page.evaluate("location.hash") == "#item=10-late"
    page.keyboard.press("k")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    assert page.inner_text("#item h2").startswith("b-wrong")
    page.fill("#filter-text", "phone")  # the cursor walks the filtered list only
    page.click("#item h2")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    assert page.inner_text("#item h2").startswith("a-phone")
    page.fill("#filter-text", "")
    # back/forward walk the opened items
    page.go_back()
    page.wait_for_function("() => document.querySelector('#item h2').textContent.startsWith('b-wrong')")
    page.go_forward()
    page.wait_for_function("() => document.querySelector('#item h2').textContent.startsWith('a-phone')")
    # space plays the selected chip (→ selects the next one), unmuted
    page.wait_for_function("() => document.getElementById('player').readyState >= 1", timeout=10_000)
    page.click("#item h2")
    page.keyboard.press("ArrowRight")
    second = page.locator("#item .chip.cur")
    assert second.count() == 1
    start = float(second.get_attribute("data-start"))
    page.keyboard.press(" ")
    page.wait_for_function("() => !document.getElementById('player').paused", timeout=10_000)
    assert page.evaluate("document.getElementById('player').currentTime") >= start - 0.1
    assert page.evaluate("document.getElementById('player').muted") is False
    # the filtered list downloads as CSV, made in the page
    page.fill("#filter-text", "goddard")
    with page.expect_download() as dl:
        page.click("#download")
    lines = Path(dl.value.path()).read_text().splitlines()
    # shown columns first, then the rest, under pandas-friendly names
    assert lines[0] == "id,case,murgat_s,answer,coverage,precision,recall,f1,n_undetermined,correct,question", lines[0]
    assert len(lines) == 2 and lines[1].startswith("c-nasa,scored,1,A,")
    page.fill("#filter-text", "")
    # choose columns, sort by any of them by clicking its header (again: the other way)
    page.click("#colbox summary")
    page.check("#colbox input[data-col='coverage']")
    page.check("#colbox input[data-col='question']")
    heads = page.locator("#items thead th").all_inner_texts()
    assert heads == ["id", "case", "coverage", "MURGAT-S", "ans", "question"], heads
    order = lambda: [r.get_attribute("data-id") for r in page.locator(".item-row").all()]  # noqa: E731
    page.click("#items th[data-key='murgat_s']")
    asc = order()
    assert asc[:2] == ["b-wrong", "10-late"] or asc[:2] == ["10-late", "b-wrong"], asc  # the two 0s first
    page.click("#items th[data-key='murgat_s']")
    assert order()[:2] == ["a-phone", "c-nasa"] or order()[:2] == ["c-nasa", "a-phone"]
    page.select_option("#sort", "input")  # the menu takes over again
    assert order() == [it["id"] for it in ITEMS]
    page.close()
    # 800 px: one column, nothing wider than the window, the list still reachable
    page, errors2, outside2 = _open(browser, run / "report.html", run, width=800, height=900)
    boxes = page.evaluate("""() => ['side', 'detail'].map((id) => { const r = document.getElementById(id).getBoundingClientRect();
        return [r.left, r.top, r.width]; })""")
    (sl, st, sw), (dl_, dt, dw) = boxes
    assert abs(sl - dl_) < 1 and dt >= st + 50 and sw > 700 and dw > 700, boxes  # stacked, full width
    assert _no_horizontal_overflow(page)
    page.screenshot(path=str(ARTIFACTS / "viewer_item_800.png"), full_page=True)
    assert not errors + errors2, errors + errors2
    assert not outside + outside2, outside + outside2
    page.close()


def test_compare_runs_item_by_item(tmp_path, example_media, browser, capsys) -> None:
    a = _run(tmp_path, "runA", example_media, "no")
    b = _run(tmp_path, "runB", example_media, "yes")
    c = _run(tmp_path, "runC", example_media, "no")
    capsys.readouterr()
    out = tmp_path / "compare.html"
    assert main(["view", str(a), str(b), str(c), "--out", str(out), "--copy-media"]) == 0
    page, errors, outside = _open(browser, out, tmp_path)
    # one list, a column per run and how far they disagree (spread: max − min over the runs)
    heads = page.locator("#items thead th").all_inner_texts()
    assert heads == ["id", "runA", "runB", "runC", "spread (max − min)"], heads
    assert page.inner_text(".item-row[data-id='b-wrong'] td:last-child") == "1.000"
    assert "runB − runA" in page.inner_text("#compare") and "runC − runA" in page.inner_text("#compare")
    page.select_option("#sort", "diff-desc")
    assert page.locator(".item-row").first.get_attribute("data-id") == "b-wrong"
    page.select_option("#sort", "input")
    # the paired table: largest difference first; a row opens the item
    page.click(".cmpbox summary >> nth=0")
    first = lambda: page.locator(".cmpbox >> nth=0").locator(".cmp-row").first.get_attribute("data-id")  # noqa: E731
    assert first() == "b-wrong"  # 0 → 1 between A and B
    page.locator("#sort-diff").click()
    assert first() != "b-wrong"
    page.locator(".cmpbox >> nth=0").locator(".cmp-row[data-id='b-wrong']").click()
    assert page.evaluate("location.hash") == "#item=b-wrong"
    # side by side: the three runs' responses, the verdict that moved marked in B (vs A), not in C
    cols = page.locator("#item .col")
    assert cols.count() == 3
    assert cols.nth(1).locator(".changed").count() >= 1
    assert cols.nth(2).locator(".changed").count() == 0 and cols.nth(0).locator(".changed").count() == 0
    assert "changed" in cols.nth(1).inner_text()
    page.screenshot(path=str(ARTIFACTS / "viewer_compare.png"))
    page.close()
    page, errors2, _ = _open(browser, out, tmp_path, width=800, height=900, hash="#item=b-wrong")
    assert _no_horizontal_overflow(page)
    page.screenshot(path=str(ARTIFACTS / "viewer_compare_800.png"), full_page=True)
    assert not errors + errors2, errors + errors2
    assert not outside, outside
    page.close()


def _step_page(browser, page_path: Path, root: Path, shot: str, expect_items: int, score_col: str | None = None) -> None:
    page, errors, outside = _open(browser, page_path, root)
    assert int(page.inner_text("#count")) == expect_items
    assert _in_view(page, "#headline") and _in_view(page, ".item-row")
    assert "[–" not in page.inner_text("#headline") and "–, –" not in page.inner_text("#runpanel")
    heads = page.locator("#items thead th").all_inner_texts()
    assert "MURGAT-S" not in heads and (score_col is None or score_col in heads), heads
    page.locator(".item-row").first.click()
    assert page.locator("#item h2").count() >= 2  # the item's blocks are shown
    chips = page.locator("#item .chip:not(.bad)")
    if chips.count():
        chips.first.click()
        page.wait_for_function("() => !document.getElementById('player').paused", timeout=10_000)
    page.fill("#filter-text", "zzz-no-such-text")
    assert page.inner_text("#count") == "0"
    page.screenshot(path=str(ARTIFACTS / shot))
    page.set_viewport_size({"width": 800, "height": 900})
    assert _no_horizontal_overflow(page)
    page.screenshot(path=str(ARTIFACTS / shot.replace(".png", "_800.png")), full_page=True)
    assert not errors, errors
    assert not outside, outside
    page.close()


def test_faithfulness_reflect_and_program_pages(tmp_path, example_media, browser) -> None:
    from tests.commands.faithfulness.test_faithfulness import RESPONSES, cassette
    from tests.commands.reflect.test_reflect import setup
    from tests.programs.test_program_e2e import Q, program_cassette

    ARTIFACTS.mkdir(exist_ok=True)
    media = tmp_path / "media"
    shutil.copytree(example_media, media)
    chains = tmp_path / "chains.jsonl"
    chains.write_text("".join(json.dumps({**r, "media": "friday.mp4", "question": "q", "options": ["a", "b"],
                                          "gold": "B"}) + "\n" for r in RESPONSES))
    assert main(["faithfulness", str(chains), "--media-root", str(media), "--judge", f"replay:{cassette(tmp_path)}",
                 "--out", str(tmp_path / "faith"), "--granularity", "step", "--quiet"]) == 0
    _step_page(browser, tmp_path / "faith" / "report.html", tmp_path, "viewer_faithfulness.png", 4, "UPR")
    page, _, _ = _open(browser, tmp_path / "faith" / "report.html", tmp_path)
    head = page.inner_text("#headline")
    assert head.startswith("UPR") and "[" in head and "accuracy" in head, head  # the CI, read from ci_low/ci_high
    page.close()

    q, start, cas = setup(tmp_path)
    assert main(["reflect", str(q), "--media-root", str(media), "--model", f"replay:{cas}", "--detector", f"replay:{cas}",
                 "--from", str(start), "--ids", "c1,c2", "--out", str(tmp_path / "refl"), "--quiet"]) == 0
    _step_page(browser, tmp_path / "refl" / "report.html", tmp_path, "viewer_reflect.png", 2)

    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps(Q) + "\n")
    assert main(["program", str(data), "--media-root", str(media), "--variant", "all", "--planner",
                 f"replay:{program_cassette(tmp_path)}", "--out", str(tmp_path / "prog"), "--quiet"]) == 0
    _step_page(browser, tmp_path / "prog" / "report.html", tmp_path, "viewer_program.png", 4)


def test_comment_and_script_openers_in_text_do_not_blank_the_page(tmp_path, example_media, browser) -> None:
    """``<!--<script>`` in any text put the HTML parser in a state where the data block's own
    ``</script>`` no longer ends it, and the page's script was swallowed: an empty page."""
    hostile = "She says <!--<script>alert(1)</script> <!-- --> </script (audio, 0:01-0:03)."
    rows = [{"match": {"task": "verify"}, "output": {"text": "yes <!--<script>"}},
            {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["<!--<script> she says"]})}},
            {"match": {"task": "entail"}, "output": {"text": "yes"}}]
    cas = tmp_path / "hostile.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "h<!--<script>", "media": "friday.mp4", "question": "<!--<script>?",
                               "response": hostile}) + "\n")
    out = tmp_path / "run"
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out),
                 "--quiet"]) == 0
    page, errors, _ = _open(browser, out / "report.html", tmp_path)  # waits for the item list to be drawn
    assert page.inner_text("#count") == "1"
    page.click(".item-row")
    assert "<!--<script>alert(1)</script>" in page.inner_text("#item")  # shown as text, not parsed
    assert not errors, errors
    page.close()


def test_the_pages_csv_cells_write_formulas_as_text(browser) -> None:
    """The page's own CSV cell function, as OWASP recommends: a leading ' on text that starts with
    = + - @ or a tab (no spreadsheet runs it); numbers, negative ones too, stay numbers."""
    from murgat.report.viewer import TEMPLATE

    fn = next(line for line in TEMPLATE.read_text(encoding="utf-8").splitlines() if line.startswith("function csvCell("))
    cases = ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx", "a=b", -0.25, 3, None, 'say "hi", then\nleave',
             "-1", "+0.5", "-2e3", "-inf", "-1+1"]
    page = browser.new_page()
    got = page.evaluate(f"(cases) => {{ {fn}; return cases.map(csvCell); }}", cases)
    page.close()
    # text that is only a number ("-1") stays a number, as in murgat export (before: "'-1")
    assert got == ["'=1+1", "'+cmd", "'-2+3", "'@SUM(A1)", "'\tx", "a=b", "-0.25", "3", "", '"say ""hi"", then\nleave"',
                   "-1", "+0.5", "-2e3", "'-inf", "'-1+1"]
