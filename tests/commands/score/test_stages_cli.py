"""Stage guards (decontextualization, decomposition), dry runs, record → replay, summarize."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from murgat.cli import main
from murgat.commands.score.runner import score_items
from murgat.commands.score.stages import StageJudges
from murgat.core.schema import Item
from murgat.engine.folder import RunFolder
from murgat.engine.preflight import MediaPlace
from murgat.judges.scripted import ScriptedJudge
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig

TEXT = "A woman talks (audio, 0:01-0:03). She asks a question (audio, 0:01-0:03)."


def _run(tmp: Path, media: Path, decontext_answer: str, decompose_answer=None):
    def answer(req) -> str:
        if req.task == "decontextualize":
            return decontext_answer
        if req.task == "verify":
            return "yes"
        if req.task == "decompose":
            return decompose_answer(req) if decompose_answer else json.dumps({"facts": [req.inputs["sentence"]]})
        return "yes"

    j = ScriptedJudge(answer)
    spec = JudgeSpec(spec="scripted")
    cfg = ScoreConfig(judge_verify=spec, judge_decompose=spec, judge_entail=spec, judge_decontextualize=spec)
    fresh, _ = asyncio.run(score_items([Item(id="x", media="friday.mp4", response=TEXT)], cfg, StageJudges(j, j, j, j),
                                       RunFolder(tmp), place=MediaPlace(media)))
    return fresh[0], j


def test_decontextualization_used_when_citations_survive(tmp_path: Path, example_media: Path) -> None:
    new = "A woman talks (audio, 0:01-0:03). The woman asks a question (audio, 0:01-0:03)."
    r, _ = _run(tmp_path / "a", example_media, new)
    assert r.sentences[1].sentence.text.startswith("The woman asks") and r.sentences[1].decontext_fallback is None


def test_decontextualization_falls_back_when_citations_change(tmp_path: Path, example_media: Path) -> None:
    bad = "A woman talks (audio, 0:01-0:03). The woman asks a question (audio, 0:02-0:03)."
    r, _ = _run(tmp_path / "b", example_media, bad)
    assert r.sentences[1].sentence.text.startswith("She asks")
    assert "changed the citations" in r.sentences[1].decontext_fallback


def test_unparseable_decomposition_is_an_undetermined_fact(tmp_path: Path, example_media: Path) -> None:
    r, _ = _run(tmp_path / "c", example_media, TEXT, decompose_answer=lambda req: "I would split it into facts.")
    assert r.n_facts == 2 and r.n_facts_undetermined == 2 and r.case == "undetermined"
    assert "decomposition unusable" in r.sentences[0].notes[0]


def _inputs(tmp: Path) -> Path:
    p = tmp / "in.jsonl"
    p.write_text(json.dumps({"id": "a", "media": "friday.mp4",
                             "response": "She asks whether the lord of the galaxy is in (audio, 0:01-0:03; visual, 0:02). So yes."}) + "\n")
    return p


def test_dry_run_counts_an_upper_bound_and_spends_nothing(tmp_path: Path, example_media: Path, capsys, monkeypatch) -> None:
    """No API key and no network: a dry run only plans and prices the calls."""
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    out = tmp_path / "run"
    assert main(["score", str(_inputs(tmp_path)), "--media-root", str(example_media), "--judge", "gemini:gemini-2.5-flash",
                 "--out", str(out), "--dry-run", "--json"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)
    # 2 verify + 1 decompose (the verifiable cited sentence) + 3 entail (joint, 2 alone) = 6
    assert doc["judge_calls_upper_bound"] == 6 and doc["est_cost_usd"] > 0
    assert "not in this estimate: the judge probes (--probes auto)" in got.err  # said, not silently left out
    assert not (out / "results.jsonl").exists()
    assert not list(out.glob("cache.sqlite*"))  # nothing written: not even an empty cache


def test_record_then_replay_reproduces_the_run(tmp_path: Path, example_media: Path, capsys) -> None:
    inp = _inputs(tmp_path)
    cas = tmp_path / "recorded.jsonl"
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out", str(tmp_path / "r1"),
                 "--record", str(cas), "--quiet", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert cas.exists() and len(cas.read_text().splitlines()) >= 3
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}",
                 "--out", str(tmp_path / "r2"), "--quiet", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    for m in ("coverage", "precision", "recall", "f1", "murgat_s"):
        assert first[m] == second[m]
    a = (tmp_path / "r1" / "results.jsonl").read_text()
    b = (tmp_path / "r2" / "results.jsonl").read_text()
    assert json.loads(a)["scores"] == json.loads(b)["scores"]


def test_summarize_compares_runs(tmp_path: Path, example_media: Path, capsys) -> None:
    inp = _inputs(tmp_path)
    for name, mode in (("alce", "alce"), ("strict", "strict")):
        assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded",
                     "--out", str(tmp_path / name), "--precision-mode", mode, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["summarize", str(tmp_path / "alce"), str(tmp_path / "strict"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["run"] for r in doc["runs"]] == [str(tmp_path / "alce"), str(tmp_path / "strict")]
    assert doc["differences"][0]["against"] == str(tmp_path / "alce") and "murgat_s" in doc["differences"][0]
    assert main(["summarize", str(tmp_path / "nothing")]) == 2


def test_limit_and_ids_select_items(tmp_path: Path, example_media: Path, capsys) -> None:
    p = tmp_path / "many.jsonl"
    p.write_text("\n".join(json.dumps({"id": f"i{k}", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:02)."})
                           for k in range(5)) + "\n")
    assert main(["score", str(p), "--media-root", str(example_media), "--judge", "embedded", "--out", str(tmp_path / "a"),
                 "--limit", "2", "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_items"] == 2
    assert main(["score", str(p), "--media-root", str(example_media), "--judge", "embedded", "--out", str(tmp_path / "b"),
                 "--ids", "i3,i4", "--quiet", "--json"]) == 0
    ids = [json.loads(x)["id"] for x in (tmp_path / "b" / "results.jsonl").read_text().splitlines()]
    assert sorted(ids) == ["i3", "i4"]
    assert main(["score", str(p), "--media-root", str(example_media), "--judge", "embedded", "--out", str(tmp_path / "c"),
                 "--ids", "nope", "--quiet"]) == 2
