"""The report viewer shows, for an embedded-judge verdict, the words heard and read in the cited window.

A real ``murgat score`` run with the offline judge on a bundled media file (real ASR), opened in
Chromium from the distribution through Playwright. The assertions compare the page with the
judge's own record in ``results.jsonl`` (which words ASR heard may differ between CPUs; that the
page shows exactly the recorded ones may not).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from murgat.judges.embedded_check import split_evidence

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Chromium is installed by scripts/bootstrap.sh (apt-get install chromium)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM)
        yield b
        b.close()


def test_an_embedded_verdict_shows_the_words_heard_in_its_window(tmp_path: Path, example_media: Path, browser) -> None:  # type: ignore[no-untyped-def]
    item = {"id": "jewels", "media": "friday.mp4", "question": "Why?", "options": ["a", "b"], "gold": "A",
            "response": "The speaker says somebody must have stolen the crown jewels (audio, 0:04-0:06). "
                        "A woman stands at a desk (visual, 0:02).\nAnswer: A"}
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps(item) + "\n")
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(example_media), "--judge", "embedded",
           "--out", str(out), "--quiet"]
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 0
    assert subprocess.run([sys.executable, "-m", "murgat", "view", str(out)], capture_output=True).returncode == 0
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    calls = {s["sentence"]["index"]: s["verdicts"][0]["calls"][0] for s in rec["sentences"] if s["verdicts"]}
    _, heard = split_evidence(calls[0]["raw"])
    _, seen = split_evidence(calls[1]["raw"])
    assert heard is not None and seen is not None and heard["heard"], calls
    assert [h["segment"] for h in heard["heard"]] == ["audio 0:04-0:06"] and seen == {"heard": [], "read": []}
    words = [w[0] for w in heard["heard"][0]["words"]]

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((out / "report.html").resolve().as_uri() + "#item=jewels")
    page.wait_for_selector(".item-row")
    audio_fact = page.locator(".fact", has_text="somebody must have stolen")
    assert "heard in audio 0:04-0:06:" in audio_fact.locator(".heardread").inner_text()
    assert audio_fact.locator(".heardread .hw").all_inner_texts() == words  # the recorded words, in order
    unsure = [w[0] for w in heard["heard"][0]["words"] if w[2] is not None and w[2] < 0.5]
    assert audio_fact.locator(".heardread .hw.unsure").all_inner_texts() == unsure
    visual_fact = page.locator(".fact", has_text="A woman stands at a desk")
    assert "no words heard or read in the cited window" in visual_fact.locator(".heardread").inner_text()
    assert not errors, errors
    page.close()
