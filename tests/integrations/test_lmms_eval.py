"""murgat's lmms-eval task, end to end offline: lmms-eval 0.7.3's own ``openai_compatible`` backend (a
subprocess, ``python -m lmms_eval``) asks the repository's stand-in OpenAI-compatible server, which
answers each question with the bundled cited example answer; a replay judge scores.

Must hold (#45): the run with ``--include_path`` writes results whose MURGAT-S (with its CI), accuracy
and attributed accuracy equal ``murgat score`` of the same answers (imported from lmms-eval's samples
log with ``murgat import lmms-eval``); what reached the model is murgat's prompt after time-labelled frames.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("lmms_eval", reason="the lmms-eval task needs: pip install 'murgat[lmms]' (see the bootstrap)")

from murgat.cli import main
from murgat.commands.imports.lmms_samples import MARKER
from murgat.commands.imports.samples import INPUT
from murgat.core.citations import strip_citations
from murgat.core.text import preprocess, split_sentences
from murgat.integrations.lmms_eval.__main__ import main as task_main
from tests.standin import StandIn, prompt_of

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "examples" / "questions.jsonl"
MEDIA = ROOT / "examples" / "media"
ANSWERS = {r["question"]: r["response"] for r in map(json.loads, (ROOT / "examples" / "responses.jsonl").read_text().splitlines())}
FIGURES = ("murgat_s", "accuracy", "attributed_accuracy")


def replay_judge(tmp: Path, denied: tuple[str, ...]) -> str:
    """Every sentence verifiable and its own one fact, entailed unless it holds one of ``denied``."""
    rows: list[dict[str, object]] = [{"match": {"task": "verify"}, "output": {"text": "yes"}}]
    for answer in ANSWERS.values():
        for sent in split_sentences(preprocess(answer, 4).reasoning):
            rows.append({"match": {"task": "decompose", "inputs": {"sentence": sent.text}},
                         "output": {"text": json.dumps({"facts": [sent.text]})}})
            if any(d in sent.text for d in denied):
                rows.append({"match": {"task": "entail", "inputs": {"fact": strip_citations(sent.text)}},
                             "output": {"text": "no"}})
    rows.append({"match": {"task": "entail"}, "output": {"text": "yes"}})
    path = tmp / "judge.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f"replay:{path}"


def lmms_eval(tmp: Path, base_url: str, tasks: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OPENAI_API_KEY": "none",
           "HF_HOME": str(tmp / "hf"), "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "lmms_eval", "--model", "openai_compatible",
           "--model_args", f"model=stand-in,base_url={base_url},max_retries=1,num_concurrent=2",
           "--tasks", "murgat_cited_video", "--include_path", str(tasks), "--log_samples",
           "--output_path", str(tmp / "out")]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=tmp)


def test_an_lmms_eval_run_reports_the_figures_murgat_score_gives(tmp_path: Path) -> None:
    judge = replay_judge(tmp_path, denied=("flag", "dim"))
    assert task_main(["task", str(QUESTIONS), "--media-root", str(MEDIA), "--judge", judge,
                      "--out", str(tmp_path / "tasks"), "--max-frames", "3"]) == 0
    with StandIn() as server:
        server.script = lambda prompt, body: next((a for q, a in ANSWERS.items() if q in prompt), "I cannot tell.\nAnswer: A")
        done = lmms_eval(tmp_path, server.base_url, tmp_path / "tasks")
        bodies = list(server.requests)
    [results] = (tmp_path / "out").glob("*/*_results.json")  # lmms-eval exits 0 even when the eval failed
    [samples] = (tmp_path / "out").glob("*/*_samples_murgat_cited_video.jsonl")
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(results.read_text())["results"]["murgat_cited_video"]

    assert len(bodies) == 5
    video = next(b for b in bodies if "According to the operator" in prompt_of(b))
    kinds = [p["type"] for p in video["messages"][0]["content"]]
    assert kinds == ["text", "image_url"] * 3 + ["text"] and "(frame at 0.00 s)" in prompt_of(video)
    assert "(visual, MM:SS)" in prompt_of(video)  # murgat's citation prompt, after the frames

    out = tmp_path / "imported"
    assert main(["import", "lmms-eval", str(samples), "--out", str(out)]) == 0
    [run] = (tmp_path / "out" / "murgat").iterdir()
    assert (out / INPUT).read_text() == (run / INPUT).read_text()  # the task's own murgat run scored these items
    assert json.loads((out / MARKER).read_text())["judge"] == judge
    assert main(["score", str(out), "--media-root", str(MEDIA), "--judge", judge, "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    for name in FIGURES:
        iv = summary[name]
        assert [got[f"{name},none"], got[f"{name}_ci,none"]] == [iv["value"], [iv["ci_low"], iv["ci_high"]]], name
    assert summary["n_items"] == 5 and 0 < summary["murgat_s"]["value"] < 1 and summary["accuracy"]["value"] == 1.0
