"""Box citations through scoring: what the judge sees, the cache key, and reading the run's convention."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from murgat.commands.score.stages import attach_citations
from murgat.core.boxes import BoxConvention
from murgat.core.schema import AtomicFact
from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import ImagePart, TextPart
from murgat.judging.context import ItemContext
from murgat.judging.entail import ask_entailment
from murgat.judging.pool import CallPool
from murgat.judging.sentences import sentences_of
from murgat.media.cache import file_digest
from murgat.media.streams import probe
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig


def _cfg(**kw) -> ScoreConfig:
    js = JudgeSpec(spec="scripted")
    return ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js, **kw)


def _ask(media: Path, text: str, judge: ScriptedJudge, cfg: ScoreConfig | None = None) -> str:
    cfg = cfg or _cfg()
    info = probe(media)
    (sent,) = sentences_of(text, info.durations(), 1.0, cfg.boxes.with_native(info.width, info.height))
    ctx = ItemContext(media=media, durations=info.durations(), config=cfg, _info=info)
    fact = AtomicFact(index=0, sentence_index=0, text=text, citations=sent.citations)
    verdict, _ = asyncio.run(ask_entailment(CallPool(), judge, fact, frozenset(range(len(sent.citations))), ctx))
    return verdict


def test_judge_sees_the_drawn_frame_and_the_enlarged_box(friday: Path) -> None:
    judge = ScriptedJudge(lambda req: "yes")
    assert _ask(friday, "A woman wears a hat (visual, 0:02, box 0.3,0.1,0.6,0.5).", judge) == "yes"
    (req,) = judge.requests
    images = [p for p in req.parts if isinstance(p, ImagePart)]
    assert [p.label for p in images] == ["visual 0:02 box 0.300,0.100,0.600,0.500 (whole frame, box outlined)",
                                         "visual 0:02 box 0.300,0.100,0.600,0.500 (box enlarged)"]
    assert images[0].image.shape == (480, 640, 3) and max(images[1].image.shape[:2]) == 512
    assert any(isinstance(p, TextPart) and "must be visible inside the box" in p.text for p in req.parts)
    assert req.inputs["evidence"] == ["visual 0:02 box 0.300,0.100,0.600,0.500"]


def test_cache_key_covers_the_box(friday: Path) -> None:
    judge = ScriptedJudge(lambda req: "yes")
    for cites in ("(visual, 0:02)", "(visual, 0:02, box 0.3,0.1,0.6,0.5)", "(visual, 0:02, box 0.3,0.1,0.6,0.6)",
                  "(visual, 0:02, box1000=300,100,600,500)"):
        _ask(friday, f"A woman wears a hat {cites}.", judge)
    keys = [judge.key(r) for r in judge.requests]
    assert len(set(keys[:3])) == 3  # no box, one box, another box: three questions
    assert keys[3] == keys[1]  # the same region written in 0-1000 is the same question


def test_box_free_cache_recipe_is_unchanged(friday: Path) -> None:
    """Existing response caches keep answering: a box-less segment keys exactly as before boxes."""
    cfg = _cfg()
    info = probe(friday)
    (sent,) = sentences_of("A hat (visual, 0:02; audio, 0:01-0:03).", info.durations(), 1.0, BoxConvention())
    ctx = ItemContext(media=friday, durations=info.durations(), config=cfg, _info=info)
    plans = ctx.segment_plans(sent.citations, [0, 1])
    before = {"file": file_digest(friday), "evidence": cfg.evidence.model_dump(),
              "segments": [[p.modality, p.cited_start, p.cited_end, p.start, p.end] for p in plans], "text": None}
    assert ctx.evidence_hint(plans, False) == hashlib.sha256(json.dumps(before, sort_keys=True, default=str).encode()).hexdigest()


def test_run_convention_reads_boxes_and_facts_keep_them(friday: Path) -> None:
    info = probe(friday)
    text = "A hat (visual, 0:02, box 100,300,500,600)."
    conv = BoxConvention(units="1000", order="yxyx")
    (sent,) = sentences_of(text, info.durations(), 1.0, conv)
    (c,) = sent.citations
    assert c.valid and c.boxes[0].coords() == (0.3, 0.1, 0.6, 0.5)
    # the decomposer copies the citation; the fact gets the sentence's (convention-read) box
    facts, _notes = attach_citations(sent, ["A hat is worn (visual, 0:02, box 100, 300, 500, 600)."], 0)
    assert facts[0].citations == [c] and not facts[0].dropped_citations
    # pixels: the native frame by default, --box-frame-size when the model saw a resized frame
    (s2,) = sentences_of("A hat (visual, 0:02, boxpx 64,48,320,240).", info.durations(), 1.0,
                         BoxConvention().with_native(info.width, info.height))
    assert s2.citations[0].boxes[0].coords() == (0.1, 0.1, 0.5, 0.5)
    (s3,) = sentences_of("A hat (visual, 0:02, boxpx 64,48,320,240).", info.durations(), 1.0,
                         BoxConvention(frame_size=(320, 240)).with_native(info.width, info.height))
    assert s3.citations[0].boxes[0].coords() == (0.2, 0.2, 1.0, 1.0)


def test_default_box_options_keep_old_fingerprints() -> None:
    from murgat.commands.score.command import score_config, score_fingerprint
    from murgat.settings.score import ScoreSettings

    s = ScoreSettings(input="i", judge="embedded", out="o")
    assert "boxes" not in score_fingerprint(s, score_config(s))
    s = ScoreSettings(input="i", judge="embedded", out="o", box_units="1000")
    assert score_fingerprint(s, score_config(s))["boxes"]["units"] == "1000"


def test_score_counts_wrong_boxes_without_changing_scores(tmp_path: Path, example_media: Path) -> None:
    """`murgat score` end to end (replay judge): the fact is entailed with the box shown, by the
    whole frame, but not by the box alone — one wrong box in summary.json, recall still 1."""
    from murgat.cli import main

    hat = "A woman wears a hat."
    cites = "(visual, 0:02, box1000=300,100,600,500)"
    label = "visual 0:02 box 0.300,0.100,0.600,0.500"
    lines = [
        {"match": {"task": "verify", "inputs": {"sentence": hat}}, "output": {"text": "yes"}},
        {"match": {"task": "decompose", "inputs": {"sentence": f"{hat[:-1]} {cites}."}},
         "output": {"text": json.dumps({"facts": [f"{hat[:-1]} {cites}."]})}},
        {"match": {"task": "entail", "inputs": {"fact": hat, "evidence": [label]}}, "output": {"text": "Yes."}},
        {"match": {"task": "entail", "inputs": {"fact": hat, "evidence": ["visual 0:02"]}}, "output": {"text": "yes"}},
        {"match": {"task": "entail", "inputs": {"fact": hat, "evidence": [f"{label} (box enlarged only)"]}},
         "output": {"text": "No."}},
    ]
    cas = tmp_path / "cassette.jsonl"
    cas.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "hat", "media": "friday.mp4", "response": f"{hat[:-1]} {cites}."}) + "\n")
    out = tmp_path / "run"
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out),
                 "--quiet", "--json"]) == 0
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert rec["scores"]["recall"] == 1.0 and rec["scores"]["precision"] == 1.0
    fv = rec["sentences"][0]["verdicts"][0]
    assert [c["stage"] for c in fv["calls"]] == ["entail", "box_full", "box_crop"]
    assert rec["meta"]["box_check"] == {"facts": 1, "full_yes": 1, "crop_yes": 0, "wrong_box": 1, "undetermined": 0}
    assert rec["sentences"][0]["sentence"]["citations"][0]["boxes"][0]["raw"] == "box1000=300,100,600,500"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["extra"]["box_check"] == {"facts": 1, "full_yes": 1, "crop_yes": 0, "wrong_box": 1,
                                             "undetermined": 0, "items": 1, "wrong_box_rate": 1.0}
    assert summary["sent"] == 1 + 1 + 3


def test_score_box_options_reach_the_config(tmp_path: Path, capsys) -> None:
    from murgat.cli import build_parser, main
    from murgat.commands.score.command import score_config
    from murgat.settings.score import ScoreSettings

    args = build_parser().parse_args(["score", "in.jsonl", "--judge", "embedded", "--out", str(tmp_path / "o"),
                                      "--box-units", "px", "--box-order", "yxyx", "--box-frame-size", "320x240"])
    assert score_config(ScoreSettings.from_args(args)).boxes == BoxConvention(units="px", order="yxyx", frame_size=(320, 240))
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "x"}) + "\n")
    assert main(["score", str(inp), "--judge", "embedded", "--out", str(tmp_path / "o"),
                 "--box-frame-size", "320"]) == 2
    assert "WIDTHxHEIGHT" in capsys.readouterr().err
