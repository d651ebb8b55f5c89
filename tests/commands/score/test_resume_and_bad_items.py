"""Crash safety (a real subprocess killed with SIGKILL), bad items, empty-case policies."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from murgat.commands.score.runner import score_items, summarize_run
from murgat.commands.score.stages import StageJudges
from murgat.core.schema import Item
from murgat.engine.folder import RunFolder
from murgat.engine.preflight import MediaPlace
from murgat.judges.scripted import ScriptedJudge
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig

N = 12


def _items_and_cassette(tmp: Path) -> tuple[Path, Path]:
    rows, cas = [], []
    for k in range(N):
        sent = f"Person number {k} waves at the camera."
        text = f"Person number {k} waves at the camera (visual, 0:0{k % 6})."
        rows.append({"id": f"i{k:02d}", "media": "friday.mp4", "response": text})
        cas.append({"match": {"task": "verify", "inputs": {"sentence": sent}}, "output": {"text": "yes"}})
        cas.append({"match": {"task": "decompose", "inputs": {"sentence": text}},
                    "output": {"text": json.dumps({"facts": [text]})}})
        cas.append({"match": {"task": "entail", "inputs": {"fact": sent}}, "output": {"text": "yes" if k % 3 else "no"}})
    inp, cpath = tmp / "in.jsonl", tmp / "cassette.jsonl"
    inp.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cpath.write_text("\n".join(json.dumps(c) for c in cas) + "\n")
    return inp, cpath


def _cmd(inp: Path, cas: Path, out: Path, media: Path, log: Path, delay: float) -> list[str]:
    return [sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(media), "--judge", f"replay:{cas}",
            "-J", f"delay_s={delay}", "-J", f"log={log}", "--out", str(out), "--concurrency", "1",
            "--item-concurrency", "1", "--quiet", "--json"]


def _scores(out: Path) -> dict[str, tuple]:
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return {r["id"]: (r["case"], r["n_facts"], tuple(sorted(r["scores"].items()))) for r in rows}


def test_killed_run_resumes_identically_without_repeating_calls(tmp_path: Path, example_media: Path) -> None:
    inp, cas = _items_and_cassette(tmp_path)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # reference: an uninterrupted run
    ref_out, ref_log = tmp_path / "ref", tmp_path / "ref.log"
    subprocess.run(_cmd(inp, cas, ref_out, example_media, ref_log, 0.0), check=True, env=env, capture_output=True)
    # interrupted run: SIGKILL once a few items are on disk
    out, log = tmp_path / "run", tmp_path / "served.log"
    proc = subprocess.Popen(_cmd(inp, cas, out, example_media, log, 0.25), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = out / "results.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    done_before = len(results.read_text().splitlines())
    assert 3 <= done_before < N, "the kill must land part-way"
    subprocess.run(_cmd(inp, cas, out, example_media, log, 0.0), check=True, env=env, capture_output=True)
    assert _scores(out) == _scores(ref_out)
    served = log.read_text().split()
    assert len(served) == len(set(served)), "a judge call was asked twice"
    assert len(set(served)) == 3 * N
    assert len(results.read_text().splitlines()) == N


def _cfg(**kw) -> ScoreConfig:
    spec = JudgeSpec(spec="scripted")
    return ScoreConfig(judge_verify=spec, judge_decompose=spec, judge_entail=spec, **kw)


def _answer(req) -> str:
    if req.task == "verify":
        return "yes"
    if req.task == "decompose":
        return json.dumps({"facts": [req.inputs["sentence"]]})
    return "yes"


def _run(items: list[Item], tmp: Path, media: Path, allow_outside_root: bool = False, **cfg_kw):
    j = ScriptedJudge(_answer)
    rd = RunFolder(tmp)
    cfg = _cfg(**cfg_kw)
    fresh, _ = asyncio.run(score_items(items, cfg, StageJudges(j, j, j), rd,
                                       place=MediaPlace(media, None, allow_outside_root)))
    return {r.id: r for r in fresh}, summarize_run(rd, cfg)


def test_bad_items_are_recorded_and_the_rest_finish(tmp_path: Path, example_media: Path, friday: Path) -> None:
    corrupt = tmp_path / "corrupt.mp4"
    corrupt.write_bytes(b"\x00" * 5000)
    long_text = " ".join(f"The woman says line {k} (audio, 0:0{k % 6})." for k in range(200))
    items = [
        Item(id="ok", media="friday.mp4", response="She talks (audio, 0:01-0:02)."),
        Item(id="missing", media="nope.mp4", response="x (visual, 0:01)."),
        Item(id="corrupt", media=str(corrupt), response="x (visual, 0:01)."),
        Item(id="empty", media="friday.mp4", response=""),
        Item(id="late", media="friday.mp4", response="Something happens at the end (visual, 0:30)."),
        Item(id="long", media="friday.mp4", response=long_text),
        Item(id="nomedia", response="x"),
    ]
    res, summary = _run(items, tmp_path / "run", example_media, allow_outside_root=True)
    assert res["ok"].error is None and res["ok"].scores.murgat_s == 1.0
    assert res["missing"].error.startswith("missing_media") and "nope.mp4" in res["missing"].error
    assert res["corrupt"].error.startswith("corrupt_media")
    assert res["nomedia"].error.startswith("missing_media")
    assert res["empty"].case == "no_verifiable" and res["empty"].scores.murgat_s == 0.0
    late = res["late"]
    assert late.error is None and late.scores.recall == 0.0 and late.scores.precision == 0.0
    assert "past the end" in late.sentences[0].sentence.citations[0].reason
    assert late.judge_calls == 2  # verify + decompose; an invalid citation needs no entailment call
    assert res["long"].n_sentences == 200 and res["long"].scores.murgat_s == 1.0
    assert summary.n_errors == 3 and summary.n_items == 7


def test_empty_policies_through_pipeline(tmp_path: Path, example_media: Path) -> None:
    items = [Item(id="empty", media="friday.mp4", response="Answer: B"),
             Item(id="ok", media="friday.mp4", response="She talks (audio, 0:01-0:02).")]
    res, summary = _run(items, tmp_path / "zero", example_media, empty_policy="zero")
    assert res["empty"].case == "no_verifiable" and summary.murgat_s.value == pytest.approx(0.5)
    res, summary = _run(items, tmp_path / "excl", example_media, empty_policy="exclude")
    assert res["empty"].case == "excluded" and summary.murgat_s.value == pytest.approx(1.0)
    assert summary.cases == {"excluded": 1, "scored": 1}


def test_unparseable_answers_are_reported_apart(tmp_path: Path, example_media: Path) -> None:
    def answer(req) -> str:
        if req.task == "entail":
            return "The evidence is ambiguous and I would rather elaborate at length."
        return _answer(req)

    j = ScriptedJudge(answer)
    rd = RunFolder(tmp_path / "u")
    items = [Item(id="u", media="friday.mp4", response="She talks (audio, 0:01-0:02).")]
    fresh, _ = asyncio.run(score_items(items, _cfg(), StageJudges(j, j, j), rd, place=MediaPlace(example_media)))
    r = fresh[0]
    assert r.case == "undetermined" and r.scores.murgat_s is None and r.n_facts_undetermined == 1
    assert r.sentences[0].verdicts[0].joint == "unparseable"


def test_a_judge_that_times_out_leaves_facts_undetermined(tmp_path: Path, example_media: Path) -> None:
    async def never(req):
        await asyncio.sleep(10)

    j = ScriptedJudge(_answer)
    j._call = never  # type: ignore[method-assign]
    j._sleep = _instant  # type: ignore[method-assign]
    cfg = _cfg()
    cfg.generate.timeout_s = 0.05
    cfg.generate.retries = 1
    rd = RunFolder(tmp_path / "t")
    items = [Item(id="slow", media="friday.mp4", response="She talks (audio, 0:01-0:02).")]
    fresh, _ = asyncio.run(score_items(items, cfg, StageJudges(j, j, j), rd, place=MediaPlace(example_media)))
    r = fresh[0]
    assert r.error is None and r.sentences[0].verify_verdict == "error" and r.sentences[0].verifiable is None
    assert r.n_verify_undetermined == 1 and r.case == "undetermined" and r.scores.murgat_s is None
    assert j.stats.errors == 1 and j.stats.retries == 1
    assert rd.load_results()[0].id == "slow"


async def _instant(s: float) -> None:
    return None


def test_a_rerun_with_the_media_root_fixed_redoes_the_items_whose_media_was_missing(tmp_path: Path,
                                                                                    example_media: Path, capsys) -> None:
    """The first run looked in the wrong folder: every item is a missing_media record. Run again with the
    right --media-root (no --retry-errors): the items whose file is found now are redone; an item whose
    file is still missing keeps its record and is not asked again."""
    items = [Item(id="a", media="friday.mp4", response="She talks (audio, 0:01-0:02)."),
             Item(id="b", media="nope.mp4", response="x (visual, 0:01).")]
    run = tmp_path / "run"
    first, _ = _run(items, run, tmp_path)  # no media here
    assert {r.error_kind for r in first.values()} == {"missing_media"}
    again, summary = _run(items, run, example_media)
    assert set(again) == {"a"} and again["a"].error is None and again["a"].scores.murgat_s == 1.0
    assert "1 item(s) whose media file was missing last time are found now" in capsys.readouterr().err
    assert summary.n_errors == 1 and summary.n_items == 2
    third, _ = _run(items, run, example_media)
    assert third == {}  # nothing changed since: nothing redone
