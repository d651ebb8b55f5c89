"""Gold evidence in the report viewer (``murgat score … --gold``), in a real browser.

A NExT-GQA-style gold written by hand for ``friday.mp4`` (6.17 s, 640×480): two alternative
visual segments, one with a box drawn at 3.5 s. The page must draw the gold segments on the
item's timeline beside the cited ones, in proportion to the media's length; draw the cited
box and the gold box over the frame, scaled to the player's displayed size; and show the
grounding table in the run panel.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report.test_viewer_browser import ARTIFACTS, browser  # noqa: F401  (the one Chromium fixture)

DURATION = 6.17
CITED_BOX = (0.10, 0.20, 0.55, 0.80)
GOLD_BOX = (0.30, 0.10, 0.70, 0.90)
ITEMS = [
    {"id": "g-phone", "media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"],
     "gold": "B", "response": "A woman holds a phone (visual, 0:03-0:05, box 0.10,0.20,0.55,0.80). "
                              "She asks for the lord of the universe (audio, 0:01-0:03).\nAnswer: B"},
    {"id": "h-nogold", "media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"],
     "gold": "B", "response": "A man laughs (audio, 0:03-0:05).\nAnswer: A"},
]
GOLD = [{"id": "g-phone", "video": "friday", "duration": DURATION, "fps": 30, "need": "any",
         "answer": {"text": "bad humor", "choices": ["happy", "bad humor"], "index": 1},
         "evidence": [{"modality": "visual", "start": 1.5, "end": 4.3,
                       "boxes": [{"t": 3.5, "x1": 0.3, "y1": 0.1, "x2": 0.7, "y2": 0.9}]},
                      {"modality": "visual", "start": 5.0, "end": 6.0}]}]


def murgat(*args: str) -> subprocess.CompletedProcess[str]:
    """murgat in a subprocess (Playwright's sync API keeps an event loop running in this one)."""
    return subprocess.run([sys.executable, "-m", "murgat", *args], capture_output=True, text=True)


def _score(tmp: Path, example_media: Path) -> Path:
    inp, gold, run = tmp / "in.jsonl", tmp / "gold.jsonl", tmp / "run"
    inp.write_text("".join(json.dumps(r) + "\n" for r in ITEMS))
    gold.write_text("".join(json.dumps(g) + "\n" for g in GOLD))
    done = murgat("score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out", str(run),
                  "--gold", str(gold), "--copy-media", "--quiet", "--json")
    assert done.returncode == 0, done.stderr
    return run


def _rect(page, sel: str) -> dict[str, float]:
    return page.evaluate("(s) => { const r = document.querySelector(s).getBoundingClientRect();"
                         " return {x: r.left, y: r.top, w: r.width, h: r.height}; }", sel)


def _frame(page) -> dict[str, float]:
    """Where the frame is drawn inside the player (the video is letterboxed to keep its shape)."""
    return page.evaluate("""() => { const v = document.getElementById('player'), r = v.getBoundingClientRect();
        const k = Math.min(v.clientWidth / v.videoWidth, v.clientHeight / v.videoHeight);
        const w = v.videoWidth * k, h = v.videoHeight * k;
        return {x: r.left + v.clientLeft + (v.clientWidth - w) / 2, y: r.top + v.clientTop + (v.clientHeight - h) / 2, w, h}; }""")


def _check_box(page, sel: str, box: tuple[float, float, float, float]) -> None:
    f, r = _frame(page), _rect(page, sel)
    assert r["x"] == pytest.approx(f["x"] + box[0] * f["w"], abs=2.5)
    assert r["y"] == pytest.approx(f["y"] + box[1] * f["h"], abs=2.5)
    assert r["w"] == pytest.approx((box[2] - box[0]) * f["w"], abs=2.5)
    assert r["h"] == pytest.approx((box[3] - box[1]) * f["h"], abs=2.5)


def test_gold_segments_boxes_and_grounding_table(tmp_path, example_media, browser) -> None:  # noqa: F811
    run = _score(tmp_path, example_media)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((run / "report.html").resolve().as_uri() + "#item=g-phone")
    page.wait_for_selector(".timeline .tl-gold")

    # the timeline: two cited segments (visual, audio) and the two gold alternatives, each placed
    # in proportion to the gold's duration, with a legend naming them
    track = _rect(page, ".tl-cited")
    placed = page.evaluate("""() => [...document.querySelectorAll('.timeline .tl-seg')].map((b) => {
        const r = b.getBoundingClientRect(), t = b.parentElement.getBoundingClientRect();
        return {gold: b.classList.contains('tl-gold'), start: +b.dataset.start, end: +b.dataset.end,
                left: (r.left - t.left - b.parentElement.clientLeft) / b.parentElement.clientWidth,
                width: r.width / b.parentElement.clientWidth}; })""")
    assert sorted((p["gold"], p["start"], p["end"]) for p in placed) == [
        (False, 1.0, 3.0), (False, 3.0, 5.0), (True, 1.5, 4.3), (True, 5.0, 6.0)]
    for p in placed:
        assert p["left"] == pytest.approx(p["start"] / DURATION, abs=0.01)
        assert p["width"] == pytest.approx((p["end"] - p["start"]) / DURATION, abs=0.01)
    assert track["w"] > 300
    legend = page.inner_text(".tl-legend")
    assert "gold evidence" in legend and "cited visual" in legend and "cited box" in legend and "gold box" in legend
    # the item's own figures: hull 3-5 against the gold 1.5-4.3: IoP 1.3/2 = 0.65
    assert "NExT-GQA IoP 0.650" in page.inner_text(".gfigs")

    # boxes over the frame: paused at 3.5 s both the cited box (segment 3-5) and the gold box drawn
    # at 3.5 s show, placed on the displayed frame
    page.wait_for_function("document.getElementById('player').readyState >= 1")
    page.evaluate("() => { const v = document.getElementById('player'); v.pause(); v.currentTime = 3.5; }")
    page.wait_for_function("document.querySelectorAll('#overlay .ov-box').length === 2")
    _check_box(page, "#overlay .ov-box:not(.gold)", CITED_BOX)
    _check_box(page, "#overlay .ov-box.gold", GOLD_BOX)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "viewer_gold_1280.png"))
    # at 0.5 s neither the citation nor the gold covers the frame: no box
    page.evaluate("() => { document.getElementById('player').currentTime = 0.5; }")
    page.wait_for_function("document.querySelectorAll('#overlay .ov-box').length === 0")
    # a narrower window: the boxes follow the displayed size
    page.set_viewport_size({"width": 800, "height": 800})
    page.evaluate("() => { document.getElementById('player').currentTime = 3.5; }")
    page.wait_for_function("document.querySelectorAll('#overlay .ov-box').length === 2")
    _check_box(page, "#overlay .ov-box:not(.gold)", CITED_BOX)
    _check_box(page, "#overlay .ov-box.gold", GOLD_BOX)
    # clicking the gold segment plays it: the player goes to its start
    page.click(".tl-gold >> nth=1")
    page.wait_for_function("Math.abs(document.getElementById('player').currentTime - 5.0) < 0.9")

    # the run panel's grounding table, with CIs
    page.click("#runbox summary")
    table = page.inner_text(".gtab")
    for label in ("NExT-GQA", "mIoP (%)", "Acc@GQA (%)", "ReXTime", "R1@0.3 (%)", "evidence", "recall", "SAA"):
        assert label in table, label
    assert "65.000 [65.000, 65.000]" in table  # mIoP of the one graded response, in percent
    page.screenshot(path=str(ARTIFACTS / "viewer_gold_runpanel.png"))

    # an item the gold file does not hold: cited segments only, no gold row
    page.goto((run / "report.html").resolve().as_uri() + "#item=h-nogold")
    page.wait_for_selector(".timeline .tl-cite")
    assert page.locator(".tl-goldrow").count() == 0 and page.locator(".tl-gold").count() == 0
    assert not errors, errors


def test_a_gold_file_gone_is_said_and_the_figures_stay(tmp_path, example_media) -> None:
    run = _score(tmp_path, example_media)
    (tmp_path / "gold.jsonl").unlink()
    done = murgat("view", str(run))
    assert done.returncode == 0, done.stderr
    page = (run / "report.html").read_text(encoding="utf-8")
    data = json.loads(page.split('<script id="data" type="application/json">', 1)[1].split("</script>", 1)[0])
    [doc] = data["runs"]
    assert "gold segments not shown" in doc["notes"] and "no such gold file" in doc["notes"]
    assert doc["grounding"]["nextgqa"]["miop"]["value"] == pytest.approx(65.0)
    item = next(it for it in doc["items"] if it["id"] == "g-phone")
    assert item["grounding"]["gold"] == [] and item["grounding"]["record"]["nextgqa_iop"] == pytest.approx(0.65)
    [cite] = [c for s in item["sentences"] for c in s["citations"] if c["modality"] == "visual"]
    assert cite["boxes"] == [list(CITED_BOX)]
