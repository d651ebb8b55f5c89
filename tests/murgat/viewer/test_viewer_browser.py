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

from murgat.citations import strip_citations


def main(args: list[str]) -> int:
    """murgat in a subprocess: Playwright's sync API keeps an event loop running in this one."""
    return subprocess.run([sys.executable, "-m", "murgat", *args], capture_output=True, text=True).returncode

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"

ITEMS = [
    {"id": "a-phone", "media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"],
     "gold": "B", "response": "She asks for the lord of the universe (audio, 0:01-0:03). A woman holds a phone (visual, 0:04).\nAnswer: B"},
    {"id": "b-wrong", "media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"],
     "gold": "B", "response": "A man laughs (audio, 0:03-0:05).\nAnswer: A"},
    {"id": "c-nasa", "media": "nasa_13013.mp4", "question": "Where?", "options": ["Goddard", "Orbit"], "gold": "A",
     "response": "The narrator names Goddard (audio, 0:08-0:12). The picture is unclear.\nAnswer: A"},
]


def _m(task, inputs, text):
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def _run(tmp: Path, name: str, example_media: Path, laugh: str) -> Path:
    from murgat.text import preprocess, split_sentences

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


def _open(browser, page_path: Path, root: Path):
    page = browser.new_page(viewport={"width": 1300, "height": 900})
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
    page.goto(page_path.resolve().as_uri())
    page.wait_for_selector(".item-row")
    return page, errors, outside


def test_chips_filters_and_no_outside_requests(tmp_path, example_media, browser, capsys) -> None:
    run = _run(tmp_path, "runA", example_media, "no")
    capsys.readouterr()
    # portable folder: media copied next to the report, so the only files read are inside it
    assert main(["view", str(run), "--copy-media", "--save-evidence"]) == 0
    page, errors, outside = _open(browser, run / "report.html", run)
    ARTIFACTS.mkdir(exist_ok=True)
    assert page.inner_text("#count") == "3"
    page.click(".item-row[data-id='a-phone']")
    chip = page.locator("#item .sent .chip:not(.bad)").first
    start = float(chip.get_attribute("data-start"))
    page.wait_for_function("() => document.getElementById('player').readyState >= 1", timeout=10_000)
    # click and read the position in the same tick: the seek itself, before playback moves it
    t = page.evaluate("() => { document.querySelector('#item .sent .chip:not(.bad)').click(); "
                      "return document.getElementById('player').currentTime; }")
    assert abs(t - start) <= 0.1, (t, start)
    page.wait_for_function("() => !document.getElementById('player').paused", timeout=10_000)
    assert page.evaluate("document.getElementById('player').currentTime") >= start - 0.1
    page.screenshot(path=str(ARTIFACTS / "viewer_item.png"))
    # filters
    page.select_option("#filter-correct", "wrong")
    assert page.inner_text("#count") == "1"
    page.select_option("#filter-correct", "")
    page.fill("#filter-min", "0.9")
    assert int(page.inner_text("#count")) == sum(1 for _ in page.locator(".item-row").all())
    n_high = int(page.inner_text("#count"))
    page.fill("#filter-min", "")
    assert page.inner_text("#count") == "3" and n_high < 3
    page.check("#filter-undet")
    assert page.inner_text("#count") == "1"  # only a-phone has an undetermined (unknown) verdict
    page.uncheck("#filter-undet")
    page.fill("#filter-text", "goddard")
    assert page.inner_text("#count") == "1"
    page.fill("#filter-text", "")
    page.select_option("#filter-case", "scored")
    assert page.inner_text("#count") == "3"
    page.screenshot(path=str(ARTIFACTS / "viewer_filters.png"))
    assert page.locator(".evid img").count() + page.locator(".evid audio").count() > 0  # what the judge was sent
    assert not errors, errors
    assert not outside, outside
    page.close()


def test_side_by_side_sorts_by_difference(tmp_path, example_media, browser, capsys) -> None:
    a = _run(tmp_path, "runA", example_media, "no")
    b = _run(tmp_path, "runB", example_media, "yes")
    capsys.readouterr()
    out = tmp_path / "compare.html"
    assert main(["view", str(a), str(b), "--out", str(out)]) == 0
    page, errors, _ = _open(browser, out, tmp_path)
    assert "runB − runA" in page.inner_text("#compare h2")
    first = lambda: page.locator(".cmp-row").first.get_attribute("data-id")  # noqa: E731
    assert first() == "b-wrong"  # largest difference first (0 → 1)
    page.click("#sort-diff")
    assert first() != "b-wrong"
    page.screenshot(path=str(ARTIFACTS / "viewer_compare.png"))
    assert not errors, errors
    page.close()


def _step_page(browser, page_path: Path, root: Path, shot: str, expect_items: int) -> None:
    page, errors, outside = _open(browser, page_path, root)
    assert int(page.inner_text("#count")) == expect_items
    page.locator(".item-row").first.click()
    assert page.locator("#item h2").count() >= 2  # the item's blocks are shown
    chips = page.locator("#item .chip:not(.bad)")
    if chips.count():
        chips.first.click()
        page.wait_for_function("() => !document.getElementById('player').paused", timeout=10_000)
    page.fill("#filter-text", "zzz-no-such-text")
    assert page.inner_text("#count") == "0"
    page.screenshot(path=str(ARTIFACTS / shot))
    assert not errors, errors
    assert not outside, outside
    page.close()


def test_faithfulness_reflect_and_program_pages(tmp_path, example_media, browser) -> None:
    from ...programs.test_program_e2e import Q, program_cassette
    from ..faithfulness.test_faithfulness import RESPONSES, cassette
    from ..faithfulness.test_reflect import setup

    ARTIFACTS.mkdir(exist_ok=True)
    media = tmp_path / "media"
    shutil.copytree(example_media, media)
    chains = tmp_path / "chains.jsonl"
    chains.write_text("".join(json.dumps({**r, "media": "friday.mp4", "question": "q", "options": ["a", "b"],
                                          "gold": "B"}) + "\n" for r in RESPONSES))
    assert main(["faithfulness", str(chains), "--media-root", str(media), "--judge", f"replay:{cassette(tmp_path)}",
                 "--out", str(tmp_path / "faith"), "--granularity", "step", "--quiet"]) == 0
    _step_page(browser, tmp_path / "faith" / "report.html", tmp_path, "viewer_faithfulness.png", 4)

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
