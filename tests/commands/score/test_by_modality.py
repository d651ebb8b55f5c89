"""Facts' figures per modality of their citations (``summary.json`` ``by_modality``): a real scored run
(the scripted judge, real media, the engine's run folder), its groups adding up to the facts overall,
in the summary, the terminal table and ``export --level modality``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.commands.score.runner import score_items, summarize_run
from murgat.commands.score.stages import StageJudges
from murgat.core.schema import Item
from murgat.engine.folder import RunFolder
from murgat.engine.preflight import MediaPlace
from murgat.judges.scripted import ScriptedJudge
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig

RESPONSES = [
    "A woman speaks (audio, 0:01-0:03). A phone is shown (visual, 0:02). The woman holds it (visual, 0:01; audio, 0:01).",
    "A bell rings (audio, 0:04). A lamp is shown (visual, 0:05). Music plays (audio, 0:00-0:02).",
    "A hat is shown (visual, 0:03). A man laughs (audio, 0:02; visual, 0:02).",
]


def _answer(req) -> str:
    if req.task == "verify":
        return "yes"
    if req.task == "decompose":
        return json.dumps({"facts": [req.inputs["sentence"]]})
    fact = req.inputs["fact"].lower()
    return "yes" if any(w in fact for w in ("woman", "phone", "music", "hat")) else "no"


def _run(tmp: Path, media: Path) -> Path:
    items = [Item(id=f"r{k}", media="friday.mp4", response=t) for k, t in enumerate(RESPONSES)]
    spec = JudgeSpec(spec="scripted")
    cfg = ScoreConfig(judge_verify=spec, judge_decompose=spec, judge_entail=spec)
    j = ScriptedJudge(_answer)
    rd = RunFolder(tmp / "run")
    asyncio.run(score_items(items, cfg, StageJudges(j, j, j), rd, place=MediaPlace(media)))
    summarize_run(rd, cfg)
    return rd.path


def test_per_modality_figures_add_up_to_every_fact(tmp_path: Path, example_media: Path, capsys) -> None:
    from murgat.core.metric import MODALITY_GROUPS, fact_modality
    from murgat.report.tables import modality_table

    run = _run(tmp_path, example_media)
    by = json.loads((run / "summary.json").read_text())["extra"]["by_modality"]
    facts = [(fact_modality(f.citations), v) for r in RunFolder(run).latest_results() for sr in r.sentences
             for f in sr.facts for v in sr.verdicts if v.fact_index == f.index and v.status == "judged"]
    assert {g for g, _ in facts} == {"audio", "visual", "both"}
    for g in MODALITY_GROUPS:
        mine = [v for m, v in facts if m == g]
        assert by[g]["n_facts"] == len(mine)
        if mine:
            assert by[g]["precision"] == pytest.approx(sum(v.precision for v in mine) / len(mine))
            assert by[g]["recall"] == pytest.approx(sum(v.recall for v in mine) / len(mine))
        else:
            assert by[g]["precision"] is None and by[g]["f1"] is None  # undefined over no fact, never 0
    n = sum(by[g]["n_facts"] for g in MODALITY_GROUPS)
    assert n == by["all"]["n_facts"] == len(facts) == 8
    for m in ("precision", "recall"):  # the groups partition the facts: weighted, they are the whole
        assert sum(by[g]["n_facts"] * (by[g][m] or 0.0) for g in MODALITY_GROUPS) / n == pytest.approx(by["all"][m])
    assert by["audio"]["recall"] == pytest.approx(2 / 3) and by["visual"]["recall"] == pytest.approx(2 / 3)
    # the terminal table and the export say the same figures
    from rich.console import Console

    con = Console(width=200, record=True)
    con.print(modality_table(by))
    text = con.export_text()
    assert "audio" in text and "both" in text and f"{by['all']['precision']:.3f}" in text
    assert main(["export", str(run), "--level", "modality", "--format", "jsonl", "--out", str(tmp_path / "m.jsonl")]) == 0
    rows = {r["modality"]: r for r in map(json.loads, (tmp_path / "m.jsonl").read_text().splitlines())}
    assert rows["all"]["n_facts"] == 8 and rows["both"]["precision"] == pytest.approx(by["both"]["precision"])
