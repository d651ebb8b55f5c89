"""``score --modality-check N`` against the stand-in OpenAI-compatible server (real HTTP, murgat's real
client, real media: murgat's probe clip). A judge that answers from what it is sent (the honest
stand-in: it reads the numbers in the images and hears the words in the audio it gets) judges an audio
fact unsupported once its time is cited as pictures: blindness near 0. A judge that ignores which
modality it was sent (it answers from what the clip holds, whatever part came) keeps saying yes: near 1."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from murgat.cli import main
from murgat.judging.probes.store import probe_clip
from tests.standin import Senses, StandIn


def _inputs(tmp: Path) -> tuple[Path, Path, Any]:
    clip = probe_clip(0)
    media = tmp / "media"
    media.mkdir()
    shutil.copy(clip.path, media / "clip.mp4")
    (w1, w2), (n1, n2) = clip.words, clip.numbers
    responses = [f'The voice says "{w1}" (audio, 0:01-0:03). {n1} is displayed (visual, 0:02).',
                 f'The voice says "{w2}" (audio, 0:05-0:07). {n2} is displayed (visual, 0:06).',
                 f'{n1} is displayed (visual, 0:01). The voice says "{w1}" (audio, 0:01-0:03).']
    inp = tmp / "in.jsonl"
    inp.write_text("".join(json.dumps({"id": f"r{k}", "media": "clip.mp4", "response": t}) + "\n"
                           for k, t in enumerate(responses)))
    return inp, media, clip


def _claim(prompt: str) -> str | None:
    m = re.search(r"Claim: (.*?)\n", prompt + "\n")
    return m.group(1) if m else None


def _script(honest: bool, clip: Any) -> Any:
    """Decomposition: the sentence is its one fact; verifiability: yes; entailment: from the parts sent
    (honest), or from what the clip holds whatever was sent (blind to modality)."""
    truth = Senses()
    truth.numbers, truth.words = list(clip.numbers), set(clip.words)

    def script(prompt: str, body: dict[str, Any]) -> str:
        if "atomic facts" in prompt:
            m = re.search(r"Sentence: (.*?)\n", prompt + "\n")
            return json.dumps({"facts": [re.sub(r"\s*\([^)]*\)", "", m.group(1)) if m else "x"]})
        claim = _claim(prompt)
        if claim is None:
            return "yes"
        held = (Senses.of(body) if honest else truth).holds(claim)
        return "unknown" if held is None else "yes" if held else "no"

    return script


@pytest.mark.parametrize(("honest", "low", "high"), [(True, 0.0, 0.2), (False, 0.8, 1.0)])
def test_the_modality_check_tells_a_modality_blind_judge(tmp_path: Path, monkeypatch, capsys, honest: bool,
                                                          low: float, high: float) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp, media, clip = _inputs(tmp_path)
    out = tmp_path / "run"
    with StandIn() as server:
        server.script = _script(honest, clip)
        args = ["score", str(inp), "--media-root", str(media), "--judge", "openai:m", "--out", str(out), "--quiet",
                "--json", "--probes", "off", "-J", f"base_url={server.base_url}"]
        assert main([*args, "--modality-check", "5"]) == 0
        n_run = len(server.requests)
        summary = json.loads((out / "summary.json").read_text())
        mc = summary["extra"]["modality_check"]
        assert mc["n_candidates"] == 6 and mc["n_asked"] == 5 and mc["n"] == 5 and mc["n_undetermined"] == 0
        assert low <= mc["rate"] <= high, mc
        assert mc["ci_low"] <= mc["rate"] <= mc["ci_high"] and mc["ci_high"] - mc["ci_low"] > 0.2  # five facts: wide
        assert {f["cited"] for f in mc["facts"]} == {"audio", "visual"}
        # a rerun asks nothing new (cached), and draws the same facts; the dry run counts the check's requests
        capsys.readouterr()
        assert main([*args, "--modality-check", "5"]) == 0
        assert len(server.requests) == n_run
        again = json.loads((out / "summary.json").read_text())["extra"]["modality_check"]
        assert [(f["id"], f["sentence"]) for f in again["facts"]] == [(f["id"], f["sentence"]) for f in mc["facts"]]
        capsys.readouterr()
        assert main([*args, "--dry-run"]) == 0
        plain = json.loads(capsys.readouterr().out)
        assert main([*args, "--dry-run", "--modality-check", "5"]) == 0
        dry = json.loads(capsys.readouterr().out)
    assert dry["modality_check_calls_upper_bound"] == 5
    assert dry["judge_calls_upper_bound"] == plain["judge_calls_upper_bound"] + 5
