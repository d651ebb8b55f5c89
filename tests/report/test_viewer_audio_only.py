"""The page of an audio-only item shows the player's controls, not a black video box (in Chromium)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from murgat.cli import main
from murgat.commands.score.runner import score_items, summarize_run
from murgat.commands.score.stages import StageJudges
from murgat.core.schema import Item
from murgat.engine.folder import RunFolder
from murgat.engine.preflight import MediaPlace
from murgat.judges.scripted import ScriptedJudge
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig
from tests.report.test_viewer_browser import _open, browser  # noqa: F401


def _scored(tmp: Path, media_root: Path) -> Path:
    items = [Item(id="speech", media="jfk.flac", response="He asks what you can do (audio, 0:02-0:05)."),
             Item(id="film", media="friday.mp4", response="She talks (audio, 0:01-0:02).")]
    judge = ScriptedJudge(lambda req: '{"facts": ["' + req.inputs["sentence"] + '"]}' if req.task == "decompose" else "yes")
    spec = JudgeSpec(spec="scripted")
    cfg = ScoreConfig(judge_verify=spec, judge_decompose=spec, judge_entail=spec)
    rd = RunFolder(tmp / "run")
    work = score_items(items, cfg, StageJudges(judge, judge, judge), rd, place=MediaPlace(media_root, None, True))
    with ThreadPoolExecutor(1) as pool:  # the browser's sync API holds this thread's event loop
        pool.submit(asyncio.run, work).result()
    summarize_run(rd, cfg)
    return rd.path


def test_an_audio_only_item_gets_no_video_box(tmp_path: Path, jfk: Path, friday: Path, browser) -> None:  # noqa: F811
    media = tmp_path / "media"
    media.mkdir()
    for f in (jfk, friday):
        (media / f.name).symlink_to(f)
    run = _scored(tmp_path, media)
    assert main(["view", str(run), "--media-root", str(media)]) == 0
    page, errors, _ = _open(browser, run / "report.html", tmp_path, hash="#item=speech")
    page.wait_for_function("document.getElementById('player').classList.contains('audio-only')")
    assert page.evaluate("document.getElementById('player').getBoundingClientRect().height") <= 60
    page.click(".item-row[data-id='film']")
    page.wait_for_function("!document.getElementById('player').classList.contains('audio-only')")
    assert page.evaluate("document.getElementById('player').getBoundingClientRect().height") > 60
    assert not errors, errors
    page.close()
