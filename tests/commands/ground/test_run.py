"""``murgat ground`` end to end: the NExT-GQA figures on the official sample, SAA, CiteVQA, ReXTime."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from murgat.commands.gold.importers import import_nextgqa, write_gold
from murgat.commands.ground.run import GroundSettings, _viou, ground, ground_response
from murgat.core.citations import make_citation
from murgat.core.gold import GoldBox, GoldEvidence, GoldItem
from murgat.core.schema import AtomicFact, Item, ResponseResult, Scores, Sentence, SentenceResult
from tests.conftest import NEXTGQA_SAMPLE, ROOT

NEXTGQA = NEXTGQA_SAMPLE  # bundled: tests/data/real/nextgqa-sample (MIT, see its LICENSES.md)
LETTERS = "ABCDE"


def _t(x: float) -> str:
    return f"{int(x // 60)}:{x % 60:04.1f}"


def _sample_predictions() -> tuple[list[dict], dict[str, tuple[list[tuple[float, float]], bool]]]:
    """Responses covering every case, and (the spans each one cites, answer right) as written."""
    gold = import_nextgqa(NEXTGQA / "gsub_test.json", NEXTGQA / "test.csv")
    responses, written = [], {}
    for i, g in enumerate(gold):
        g0, g1 = g.evidence[0].start, g.evidence[0].end
        dur = g.duration
        assert g.answer is not None and g.answer.index is not None
        right = i % 4 != 3
        letter = LETTERS[g.answer.index] if right else LETTERS[(g.answer.index + 1) % 5]
        case = i % 6
        if case == 0:  # a span inside the first segment
            spans = [(round(g0 + 0.5, 1), round(min(g1, g0 + 2.0), 1))]
        elif case == 1:  # a point at its middle
            m = round((g0 + g1) / 2, 1)
            spans = [(m, m)]
        elif case == 2:  # a point outside every segment
            p = 0.0 if g0 > 1 else round(dur - 0.5, 1)
            spans = [(p, p)]
        elif case == 3:  # a span before and a point after: the hull spans both
            spans = [(round(max(0.0, g0 - 3), 1), round(g0 + 1, 1)), (round(min(dur, g1 + 1), 1),) * 2]
        elif case == 4:  # no visual citation (an audio one only): left out of the denominator
            spans = []
        else:  # a span that ends before the gold starts or starts after it ends
            spans = [(round(g1 + 0.5, 1), round(min(dur, g1 + 3), 1))] if g1 + 1 < dur else [(0.0, round(g0 / 2, 1))]
        cites = "; ".join(f"visual, {_t(a)}" if a == b else f"visual, {_t(a)}-{_t(b)}" for a, b in spans)
        cites = cites or "audio, 0:01-0:02"
        responses.append({"id": g.id, "media": g.video, "response": f"Something is shown ({cites}).\nAnswer: {letter}"})
        written[g.id] = (spans, right)
    return responses, written


def _official(gsub: dict, written: dict) -> dict[str, float]:
    """The NExT-GQA figures by the formulas of the issue (official eval_ground.py rules)."""
    n = acc = p3 = p5 = u3 = u5 = 0
    miou = miop = 0.0
    for vid, anno in gsub.items():
        for qid, segs in anno["location"].items():
            spans, right = written[f"{vid}_{qid}"]
            if not spans:
                continue
            a, b = min(s for s, _ in spans), max(e for _, e in spans)
            best_u = best_p = 0.0
            for g0, g1 in segs:
                if a == b:
                    u, p = 0.0, float(g0 <= a <= g1)
                else:
                    inter = min(g1, b) - max(g0, a)
                    u, p = inter / (max(g1, b) - min(g0, a)), inter / (b - a)
                best_u, best_p = max(best_u, u), max(best_p, p)
            n += 1
            miou += best_u
            miop += best_p
            p3 += best_p >= 0.3
            p5 += best_p >= 0.5
            u3 += best_u >= 0.3
            u5 += best_u >= 0.5
            acc += best_p >= 0.5 and right
    return {"acc_gqa": 100 * acc / n, "miop": 100 * miop / n, "iop@0.3": 100 * p3 / n, "iop@0.5": 100 * p5 / n,
            "miou": 100 * miou / n, "iou@0.3": 100 * u3 / n, "iou@0.5": 100 * u5 / n, "n": n}


def test_nextgqa_figures_equal_the_official_rules_on_the_sample(tmp_path: Path) -> None:
    responses, written = _sample_predictions()
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))
    write_gold(import_nextgqa(NEXTGQA / "gsub_test.json", NEXTGQA / "test.csv"), tmp_path / "gold.jsonl")
    res = ground(tmp_path / "r.jsonl", tmp_path / "gold.jsonl", tmp_path / "run")
    expected = _official(json.loads((NEXTGQA / "gsub_test.json").read_text()), written)
    ng = res.summary.nextgqa
    assert ng["n"] == expected["n"] == 20 and ng["n_without_visual_citation"] == 4
    for k, v in expected.items():
        if k != "n":
            assert ng[k]["value"] == pytest.approx(v, abs=1e-9), k
    # the cases really differ: not every figure is 0 or 100
    assert 0 < ng["miop"]["value"] < 100 and 0 < ng["acc_gqa"]["value"] < ng["iop@0.5"]["value"]
    on_disk = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert on_disk["kind"] == "ground" and on_disk["nextgqa"]["miou"]["value"] == pytest.approx(ng["miou"]["value"])
    assert json.loads((tmp_path / "run" / "config.json").read_text())["kind"] == "ground"
    assert len((tmp_path / "run" / "results.jsonl").read_text().splitlines()) == 24
    # the seeded bootstrap gives the same interval twice, and clustering by video changes it
    again = ground(tmp_path / "r.jsonl", tmp_path / "gold.jsonl")
    assert again.summary.nextgqa == ng
    clustered = ground(tmp_path / "r.jsonl", tmp_path / "gold.jsonl", settings=GroundSettings(cluster_by_video=True))
    assert clustered.summary.nextgqa["miop"]["value"] == pytest.approx(ng["miop"]["value"])
    assert clustered.summary.nextgqa["miop"]["ci_low"] != ng["miop"]["ci_low"]


def _gold(**kw) -> GoldItem:
    base = {"id": "q", "video": "v", "duration": 60.0,
            "answer": {"text": "b", "choices": ["a", "b", "c"], "index": 1},
            "evidence": [{"modality": "visual", "start": 10.0, "end": 20.0}]}
    return GoldItem.model_validate(base | kw)


def test_response_figures_hand_computed() -> None:
    item = Item(id="q", media="v", response="A dog runs (visual, 0:12-0:20). It barks (audio, 0:30).\nAnswer: B")
    r = ground_response(item, _gold(), GroundSettings())
    assert r.correct is True and r.correct_from == "option rule"
    assert r.predicted_span == (12.0, 20.0) and r.nextgqa_iop == 1.0 and r.nextgqa_iou == pytest.approx(0.8)
    assert r.rextime_iou == pytest.approx(0.8)
    # cited: visual 12-20 (8 s) + audio 29-31 (a point at 1 s resolution, 2 s); gold: visual 10-20
    assert r.iop == pytest.approx(8 / 10) and r.iog == pytest.approx(8 / 10) and r.iou == pytest.approx(8 / 12)
    assert [(c.unit, c.iop) for c in r.claims] == [("sentence", 1.0), ("sentence", 0.0)]
    assert r.evidence_recall == 1.0 and r.evidence_precision == pytest.approx(1 / 2)
    assert r.saa is True and r.saa_cite is None  # no MURGAT-S: SAA_cite unknown, not guessed


def test_citation_past_the_gold_duration_is_invalid() -> None:
    item = Item(id="q", response="A dog runs (visual, 1:30-1:40).\nAnswer: A")
    r = ground_response(item, _gold(), GroundSettings())
    assert r.n_invalid == 1 and r.n_valid_visual == 0 and r.nextgqa_iop is None and r.rextime_iou == 0.0
    assert r.iop == 0.0 and r.evidence_precision == 0.0 and r.correct is False


def test_saa_and_saa_cite() -> None:
    g = _gold()
    s = GroundSettings(attributed_threshold=0.5)
    wrong_place = Item(id="q", response="A dog runs (visual, 0:40-0:50).\nAnswer: B", murgat_s=0.7)
    r = ground_response(wrong_place, g, s)
    assert r.evidence_recall == 0.0 and r.saa is False and r.saa_cite is True  # attributed by MURGAT-S
    low = Item(id="q", response="A dog runs (visual, 0:40-0:50).\nAnswer: B", murgat_s=0.2)
    assert ground_response(low, g, s).saa_cite is False
    wrong_answer = Item(id="q", response="A dog runs (visual, 0:10-0:20).\nAnswer: C", murgat_s=0.9)
    r = ground_response(wrong_answer, g, s)
    assert r.evidence_recall == 1.0 and r.saa is False and r.saa_cite is False


def test_claims_per_fact_and_murgat_s_from_a_score_run() -> None:
    item = Item(id="q", response="A dog runs and barks (visual, 0:10-0:20; audio, 0:50-0:60).\nAnswer: B")
    sent = Sentence(index=0, text="x", span=(0, 1))
    facts = [AtomicFact(index=0, sentence_index=0, text="runs", citations=[make_citation("visual", 10, 20)]),
             AtomicFact(index=1, sentence_index=0, text="barks", citations=[make_citation("audio", 50, 60)])]
    score = ResponseResult(id="q", scores=Scores(murgat_s=0.8), correct=True,
                           sentences=[SentenceResult(sentence=sent, facts=facts)])
    r = ground_response(item, _gold(), GroundSettings(), score)
    assert [(c.unit, c.iop, c.iog) for c in r.claims] == [("fact", 1.0, 1.0), ("fact", 0.0, 0.0)]
    assert r.murgat_s == 0.8 and r.saa_cite is True


def test_free_form_answers_take_the_record_grade(tmp_path: Path) -> None:
    gold = GoldItem(id="d1", video="doc", answer={"text": "42"}, evidence=[
        GoldEvidence(modality="page", page=2, boxes=[GoldBox(x1=.1, y1=.2, x2=.55, y2=.8)]),
        GoldEvidence(modality="page", page=3)])
    write_gold([gold], tmp_path / "g.jsonl")
    rows = [{"id": "d1", "media": "doc", "answer_score": 5,
             "response": 'It is 42 <bbox page="2" x1="110" y1="190" x2="560" y2="790"/> '
                         '<bbox page="2" x1="900" y1="900" x2="950" y2="950"/> <bbox page="3" x1="1" y1="1"/>'}]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rec = ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl").records[0]
    # page 2 hit by the first tag only (the second box is elsewhere); page 3's tag is malformed: a miss
    assert rec.correct is True and rec.correct_from == "answer_score" and rec.gold_hit == [True, False]
    assert rec.n_citations == 3 and rec.n_invalid == 1
    assert rec.evidence_recall == pytest.approx(1 / 2) and rec.evidence_precision == pytest.approx(1 / 3)
    assert rec.saa is False
    compat = ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl", settings=GroundSettings(citevqa_compat=True))
    assert compat.records[0].evidence_precision == pytest.approx(1 / 3)  # one gold item matched / 3 citations


def test_a_response_without_gold_is_an_error_record(tmp_path: Path) -> None:
    write_gold([_gold()], tmp_path / "g.jsonl")
    rows = [{"id": "q", "response": "x (visual, 0:12).\nAnswer: B"}, {"id": "zz", "response": "z"}]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl")
    assert [r.error.split(":")[0] for r in res.records if r.error] == ["no_gold"]
    assert res.summary.n_errors == 1 and res.summary.answers["accuracy"]["value"] == 1.0


@dataclass
class _BoxedCitation:
    """Stand-in for a box citation (the box grammar lives in murgat.core.boxes)."""

    start: float
    end: float
    raw: str
    boxes: list = field(default_factory=list)


@dataclass
class _B:
    x1: float
    y1: float
    x2: float
    y2: float


def test_viou_of_box_citations() -> None:
    box = {"x1": 0, "y1": 0, "x2": .5, "y2": .5}
    gold = GoldItem(id="t", fps=1.0, need="any", evidence=[
        {"modality": "visual", "start": 0, "end": 4, "boxes": [box | {"t": float(t)} for t in range(5)]}])
    cite = _BoxedCitation(2.0, 6.0, "visual, 0:02-0:06", [_B(0, 0, .5, .5)])
    assert _viou(gold, [cite]) == pytest.approx(3 / 7)
    assert _viou(gold, [_BoxedCitation(2.0, 6.0, "visual, 0:02-0:06")]) == 0.0  # no box drawn
    assert _viou(_gold(), [cite]) is None  # gold without boxes over time: not in the vIoU figures


def test_cli_import_and_ground_json(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    gold = tmp_path / "gold.jsonl"
    out = subprocess.run([sys.executable, "-m", "murgat", "gold", "import", "nextgqa", "--gsub",
                          str(NEXTGQA / "gsub_test.json"), "--qa", str(NEXTGQA / "test.csv"), "--out", str(gold)],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "24 questions" in out.stderr and len(gold.read_text().splitlines()) == 24
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": "6706220611_5", "response": "x (visual, 1:11-1:16).\nAnswer: C"}) + "\n")
    out = subprocess.run([sys.executable, "-m", "murgat", "ground", str(tmp_path / "r.jsonl"), "--gold", str(gold),
                          "--out", str(tmp_path / "run"), "--json"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    # 71-76 against 70-76.5: IoP 1, IoU 5/6.5
    assert doc["nextgqa"]["n"] == 1 and doc["nextgqa"]["acc_gqa"]["value"] == 100.0
    assert doc["nextgqa"]["miou"]["value"] == pytest.approx(100 * 5 / 6.5)
    bad = subprocess.run([sys.executable, "-m", "murgat", "ground", str(tmp_path / "r.jsonl"), "--gold",
                          str(tmp_path / "none.jsonl")], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "no such gold file" in bad.stderr


def test_summarize_pairs_two_ground_runs(tmp_path: Path, capsys) -> None:
    from murgat.cli import main

    write_gold([_gold(id="q1"), _gold(id="q2")], tmp_path / "g.jsonl")
    a = [{"id": "q1", "response": "x (visual, 0:10-0:20).\nAnswer: B"}, {"id": "q2", "response": "y (visual, 0:10-0:15).\nAnswer: B"}]
    b = [{"id": "q1", "response": "x (visual, 0:10-0:15).\nAnswer: B"}, {"id": "q2", "response": "y.\nAnswer: A"}]
    for name, rows in (("a", a), ("b", b)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        ground(tmp_path / f"{name}.jsonl", tmp_path / "g.jsonl", tmp_path / name)
    assert main(["summarize", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [d] = doc["differences"]
    # IoP is paired over q1 only (b cites nothing for q2): 100 -> 100; IoU 100 -> 50
    assert d["nextgqa_iop"]["n"] == 1 and d["nextgqa_iop"]["value"] == pytest.approx(0.0)
    assert d["nextgqa_iou"]["value"] == pytest.approx(-50.0)
    # set-level IoG over both: a = (1 + .5)/2, b = (.5 + 0)/2
    assert d["iog"]["n"] == 2 and d["iog"]["value"] == pytest.approx(-0.5)
    assert d["correct"]["value"] == pytest.approx(-0.5)
    assert set(doc["runs"]) == {str(tmp_path / "a"), str(tmp_path / "b")}


def test_score_with_gold_adds_the_grounding_figures(tmp_path: Path, example_media: Path, capsys) -> None:
    from murgat.cli import main

    inp = tmp_path / "r.jsonl"
    inp.write_text(json.dumps({"id": "f1", "media": "friday.mp4", "options": ["a", "b", "c"],
                               "response": "She talks (audio, 0:01-0:02). A woman is shown (visual, 0:00-0:02).\nAnswer: B"}) + "\n")
    gold = GoldItem(id="f1", video="friday", duration=10.0, answer={"text": "b", "choices": ["a", "b", "c"], "index": 1},
                    evidence=[{"modality": "visual", "start": 0.0, "end": 4.0}])
    write_gold([gold], tmp_path / "g.jsonl")
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out",
                 str(tmp_path / "run"), "--gold", str(tmp_path / "g.jsonl"), "--quiet", "--json"]) == 0
    capsys.readouterr()
    g = json.loads((tmp_path / "run" / "summary.json").read_text())["extra"]["grounding"]
    # hull 0-2 against 0-4: IoP 100, IoU 50; the answer is right
    assert g["nextgqa"]["n"] == 1 and g["nextgqa"]["miop"]["value"] == 100.0 and g["nextgqa"]["miou"]["value"] == 50.0
    assert g["answers"]["accuracy"]["value"] == 1.0
    [rec] = [json.loads(x) for x in (tmp_path / "run" / "grounding" / "results.jsonl").read_text().splitlines()]
    assert rec["murgat_s"] is not None and rec["saa_cite"] is not None  # MURGAT-S read from the score run
    # the facts come from the score run: the audio one never meets the visual gold, the visual one is half of it
    assert [(c["unit"], c["iop"], c["iog"]) for c in rec["claims"]] == [("fact", 0.0, 0.0), ("fact", 1.0, 0.5)]
    # a gold file that cannot be read leaves the scores and says why
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out",
                 str(tmp_path / "run"), "--gold", str(tmp_path / "bad.jsonl"), "--quiet", "--json"]) == 0
    assert "grounding against --gold not computed" in capsys.readouterr().err
    extra = json.loads((tmp_path / "run" / "summary.json").read_text())["extra"]
    assert "line 1" in extra["grounding_error"] and "grounding" not in extra


def test_the_answer_letter_is_read_in_the_options_the_model_saw() -> None:
    # the gold is "dog" (index 1); this response listed the options in another order
    gold = _gold(answer={"text": "dog", "choices": ["cat", "dog", "cow"], "index": 1})
    item = Item(id="q", options=["dog", "cow", "cat"], response="x (visual, 0:12).\nAnswer: A")
    assert ground_response(item, gold, GroundSettings()).correct is True
    plain = Item(id="q", response="x (visual, 0:12).\nAnswer: A")
    assert ground_response(plain, gold, GroundSettings()).correct is False
    assert ground_response(plain.model_copy(update={"response": "x.\nAnswer: B"}), gold, GroundSettings()).correct


def test_rextime_and_answer_figures_of_a_run() -> None:
    from murgat.commands.ground.run import summarize_ground
    from murgat.core.grounding import GroundRecord

    recs = [GroundRecord(id="a", rextime_iou=0.8, correct=True), GroundRecord(id="b", rextime_iou=0.4, correct=True),
            GroundRecord(id="c", rextime_iou=0.0, correct=False), GroundRecord(id="d", rextime_iou=0.6, correct=None)]
    s = summarize_ground(recs, {}, GroundSettings(n_resamples=200))
    rx = s.rextime
    assert rx["n"] == 4 and rx["miou"]["value"] == pytest.approx(100 * 1.8 / 4)
    assert rx["r1@0.3"]["value"] == 75.0 and rx["r1@0.5"]["value"] == 50.0 and rx["r1@0.7"]["value"] == 25.0
    # answer right AND IoU >= t, over the three graded responses
    assert rx["acc&iou@0.3"]["value"] == pytest.approx(200 / 3) and rx["acc&iou@0.5"]["value"] == pytest.approx(100 / 3)
    # "d" has no gold answer (correct None, no answer_problem): left out, and not an unread answer
    assert s.answers["accuracy"]["value"] == pytest.approx(2 / 3) and s.answers["n_without_gold_answer"] == 1
    assert s.answers["n_answer_unknown"] == 0
    assert s.nextgqa["n"] == 0 and s.nextgqa["n_without_visual_citation"] == 4


def test_an_answer_that_cannot_be_read_counts_as_not_correct_in_every_answer_figure() -> None:
    """An unread answer (``answer_problem``) is unknown, never wrong, in its record; accuracy, Acc@GQA,
    acc&IoU and SAA count it as not correct, as the official scorers do (their denominators keep it),
    and ``n_answer_unknown`` says how many; ``accuracy_answered`` is over the answers read. Before, a
    ``correct: null`` left the item out of every denominator and counted items without a gold answer
    as unknown."""
    from murgat.commands.ground.run import summarize_ground
    from murgat.core.grounding import GroundRecord

    common = {"rextime_iou": 0.9, "nextgqa_iop": 0.9, "nextgqa_iou": 0.5, "evidence_recall": 1.0, "evidence_precision": 1.0}
    recs = [GroundRecord(id="a", correct=True, saa=True, **common),
            GroundRecord(id="b", correct=False, saa=False, **common),
            GroundRecord(id="c", correct=None, answer_problem="no final answer found", saa=False, **common)]
    s = summarize_ground(recs, {}, GroundSettings(n_resamples=200))
    assert s.nextgqa["acc_gqa"]["value"] == pytest.approx(100 / 3) and s.nextgqa["acc_gqa"]["n"] == 3
    assert s.nextgqa["n_answer_unknown"] == 1 and s.nextgqa["n_without_gold_answer"] == 0
    assert s.rextime["acc&iou@0.5"]["value"] == pytest.approx(100 / 3)
    assert s.answers["accuracy"]["value"] == pytest.approx(1 / 3) and s.answers["accuracy"]["n"] == 3
    assert s.answers["accuracy_answered"]["value"] == pytest.approx(1 / 2) and s.answers["accuracy_answered"]["n"] == 2
    assert s.answers["saa"]["value"] == pytest.approx(1 / 3) and s.answers["n_answer_unknown"] == 1
    gold = _gold()
    unread = ground_response(Item(id="q", response="x (visual, 0:12-0:14).\nAnswer: I cannot tell"), gold,
                             GroundSettings())
    assert unread.correct is None and unread.answer_problem and "cannot tell" in unread.answer_problem
    assert unread.saa is False  # not correct, whatever the evidence


# ---------------------------------------------------------------- the output folder and the inputs


def _ground_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "murgat", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_ground_never_writes_over_another_kinds_folder(tmp_path: Path) -> None:
    write_gold([_gold()], tmp_path / "g.jsonl")
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": "q", "response": "x (visual, 0:12).\nAnswer: B"}) + "\n")
    run = tmp_path / "score-run"
    run.mkdir()
    files = {"config.json": json.dumps({"kind": "score", "fingerprint": {}, "config": {}}),
             "results.jsonl": json.dumps({"id": "q", "case": "scored", "scores": {}}) + "\n"}
    for name, text in files.items():
        (run / name).write_text(text)
    got = _ground_cli("ground", str(tmp_path / "r.jsonl"), "--gold", str(tmp_path / "g.jsonl"), "--out", str(run))
    assert got.returncode == 2 and "holds a 'score' run, not 'ground'" in got.stderr
    assert {name: (run / name).read_text() for name in files} == files
    # a folder of the user's that no ground run wrote is refused as well; a ground folder is rewritten
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.json").write_text('{"mine": true}')
    got = _ground_cli("ground", str(tmp_path / "r.jsonl"), "--gold", str(tmp_path / "g.jsonl"), "--out", str(mine))
    assert got.returncode == 2 and "which no murgat ground run wrote" in got.stderr
    ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl", tmp_path / "g1")
    assert ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl", tmp_path / "g1").summary.n_responses == 1


def test_a_ground_folder_in_use_is_refused(tmp_path: Path) -> None:
    from murgat.engine.runlock import RunLock, RunLocked

    write_gold([_gold()], tmp_path / "g.jsonl")
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": "q", "response": "x (visual, 0:12).\nAnswer: B"}) + "\n")
    (tmp_path / "out").mkdir()
    with RunLock(tmp_path / "out"), pytest.raises(RunLocked):
        ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl", tmp_path / "out")


def test_a_folder_made_another_kinds_run_while_ground_worked_is_not_written_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder is claimed before the work and written after it; a score run started on the same
    --out in between (here: while the figures are summarised) made it a score run. Before, ground
    then replaced that run's config.json and results.jsonl; it is claimed again under the lock."""
    from murgat.commands.ground import run as grun
    from murgat.engine.outputs import OutputRefused

    write_gold([_gold()], tmp_path / "g.jsonl")
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": "q", "response": "x (visual, 0:12).\nAnswer: B"}) + "\n")
    out = tmp_path / "out"
    theirs = {"config.json": json.dumps({"kind": "score", "fingerprint": {}, "config": {}}),
              "results.jsonl": json.dumps({"id": "q", "case": "scored", "scores": {}}) + "\n"}
    real = grun.summarize_ground

    def meanwhile(*a, **k):
        for name, text in theirs.items():
            (out / name).write_text(text)
        return real(*a, **k)

    monkeypatch.setattr(grun, "summarize_ground", meanwhile)
    with pytest.raises(OutputRefused, match="holds a 'score' run"):
        ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl", out)
    assert {name: (out / name).read_text() for name in theirs} == theirs


def test_a_repeated_id_in_a_json_list_is_refused(tmp_path: Path) -> None:
    """The authors' JSON-list format: one response twice would count twice; score and validate refuse it."""
    write_gold([_gold()], tmp_path / "g.jsonl")
    rows = [{"id": "q", "response": "x (visual, 0:12).\nAnswer: B"}, {"id": "q", "response": "y (visual, 0:40).\nAnswer: A"}]
    (tmp_path / "r.json").write_text(json.dumps(rows))
    got = _ground_cli("ground", str(tmp_path / "r.json"), "--gold", str(tmp_path / "g.jsonl"), "--json")
    assert got.returncode == 2 and "item 1: duplicate id 'q'" in got.stderr


def test_one_failing_response_is_its_own_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from murgat.commands.ground import run as grun

    write_gold([_gold(id="q1"), _gold(id="q2")], tmp_path / "g.jsonl")
    rows = [{"id": "q1", "response": "x (visual, 0:12).\nAnswer: B"}, {"id": "q2", "response": "y (visual, 0:12).\nAnswer: B"}]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    real = grun.ground_response

    def hostile(item, gold, s, score=None):
        if item.id == "q2":
            raise ArithmeticError("boom")
        return real(item, gold, s, score)

    monkeypatch.setattr(grun, "ground_response", hostile)
    res = ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl")
    by = {r.id: r for r in res.records}
    assert by["q1"].error is None and by["q1"].nextgqa_iop == 1.0
    assert by["q2"].error == "internal_error: ArithmeticError: boom" and res.summary.n_errors == 1


# ---------------------------------------------------------------- what the figures can and cannot say


def test_clustering_by_one_video_gives_no_interval_and_says_so(tmp_path: Path) -> None:
    write_gold([_gold(id="q1"), _gold(id="q2")], tmp_path / "g.jsonl")  # both about video "v"
    rows = [{"id": "q1", "response": "x (visual, 0:12).\nAnswer: B"}, {"id": "q2", "response": "y (visual, 0:40).\nAnswer: B"}]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl", settings=GroundSettings(cluster_by_video=True))
    iop = res.summary.overlap["iop"]
    assert iop["value"] == pytest.approx(0.5) and iop["ci_low"] is None and iop["ci_high"] is None
    assert res.summary.notes and "1 video" in res.summary.notes[0]
    plain = ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl")  # resampling responses: an interval
    assert plain.summary.overlap["iop"]["ci_low"] is not None and not plain.summary.notes


def test_the_table_prints_one_scale(tmp_path: Path) -> None:
    write_gold([_gold(id="q1"), _gold(id="q2", video="w")], tmp_path / "g.jsonl")
    rows = [{"id": "q1", "response": "x (visual, 0:10-0:20).\nAnswer: B"},
            {"id": "q2", "response": "y (visual, 0:10-0:20).\nAnswer: B"}]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = _ground_cli("ground", str(tmp_path / "r.jsonl"), "--gold", str(tmp_path / "g.jsonl"), "--cluster-by-video")
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    header = next(ln for ln in lines if "figure" in ln)  # below a title that wraps with the folder's path
    assert "%" in header, got.stdout  # the column says which scale
    for figure in ("miop", " iop ", "recall", "accuracy"):
        row = next(ln for ln in lines if figure in ln)
        assert "100.0 [100.0, 100.0]" in row, row  # NExT-GQA and murgat's own figures alike, in percent
    assert not any("1.000" in ln for ln in lines)


def test_score_with_an_unusable_gold_keeps_its_scores(tmp_path: Path, example_media: Path) -> None:
    """The README promises ``grounding_error`` and kept scores (summary and report written, exit 0)."""
    cas = tmp_path / "answers.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in (
        {"match": {"task": "verify"}, "output": {"text": "yes"}},
        {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["A woman sits."]})}},
        {"match": {"task": "entail"}, "output": {"text": "yes"}})))
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "q", "media": "friday.mp4",
                                                   "response": "A woman sits (visual, 0:01-0:03)."}) + "\n")
    (tmp_path / "gold.jsonl").write_bytes(b"\xff\xfe not UTF-8\n")
    got = _ground_cli("score", str(tmp_path / "in.jsonl"), "--media-root", str(example_media), "--judge", f"replay:{cas}",
                      "--out", str(tmp_path / "run"), "--quiet", "--json", "--gold", str(tmp_path / "gold.jsonl"))
    assert got.returncode == 0, got.stderr
    assert "grounding against --gold not computed" in got.stderr and "Traceback" not in got.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert "not UTF-8" in summary["extra"]["grounding_error"] and summary["murgat_s"]["value"] == 1.0
    assert (tmp_path / "run" / "report.html").is_file()


def test_summarize_names_a_damaged_ground_summary(tmp_path: Path) -> None:
    write_gold([_gold()], tmp_path / "g.jsonl")
    (tmp_path / "r.jsonl").write_text(json.dumps({"id": "q", "response": "x (visual, 0:12).\nAnswer: B"}) + "\n")
    ground(tmp_path / "r.jsonl", tmp_path / "g.jsonl", tmp_path / "a")
    text = (tmp_path / "a" / "summary.json").read_text()
    (tmp_path / "a" / "summary.json").write_text(text[:40])
    got = _ground_cli("summarize", str(tmp_path / "a"))
    assert got.returncode == 2 and "summary.json: not valid JSON" in got.stderr and "Traceback" not in got.stderr


# ---------------------------------------------------------------- vIoU at any frame rate


def test_viou_at_a_huge_frame_rate_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fps: 1e6`` over a 60 s span is 60 million grid times; the sum is found from its breakpoints."""
    from murgat.commands.ground import metric as gm

    calls = 0
    real = gm.box_iou

    def counted(a, b):
        nonlocal calls
        calls += 1
        if calls > 10_000:
            raise AssertionError("the vIoU grid is walked time by time")
        return real(a, b)

    monkeypatch.setattr(gm, "box_iou", counted)
    box = {"x1": 0, "y1": 0, "x2": .5, "y2": .5}
    gold = GoldItem(id="t", fps=1e6, duration=60, need="any", evidence=[
        {"modality": "visual", "start": 0, "end": 40, "boxes": [box | {"t": float(t)} for t in range(0, 41, 10)]}])
    cite = _BoxedCitation(20.0, 60.0, "visual, 0:20-1:00", [_B(0, 0, .5, .5)])
    assert _viou(gold, [cite]) == pytest.approx(20 / 60, rel=1e-6)
    assert calls < 10_000
