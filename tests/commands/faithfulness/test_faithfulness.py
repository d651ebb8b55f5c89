"""``murgat faithfulness`` on real media (friday.mp4) with hand-written judge answers.

Replay lines answer the labelling judge by step text; media decoding, evidence, segmentation,
parsing, counting, UPR and its CI are real. Expected values are computed by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.core.steps import FaithResult
from murgat.core.upr import paired_ratio_diff, ratio_ci
from murgat.engine.folder import RunFolder

PHONE = "A woman talks on a phone (visual, 0:01)."
ASKS = "She asks whether the lord of the universe is in (audio, 0:01-0:03)."
GRUMPY = "So the man is grumpy."
LAUGH = "A man laughs loudly (audio, 0:03-0:05)."
DOG = "A dog runs across the room."
HAPPY = "So he is happy."
JEWELS = "An operator mentions crown jewels (audio, 0:04-0:06)."
RESPONSES = [
    {"id": "r1", "response": f"{PHONE} {ASKS} {GRUMPY}\nAnswer: B"},  # 2 perception, faithful; correct
    {"id": "r2", "response": f"{LAUGH} {DOG} {HAPPY}\nAnswer: A"},  # 2 perception, both unfaithful; wrong
    {"id": "r3", "response": "Bad humor means grumpy, so it is B.\nAnswer: B"},  # no perception step
    {"id": "r4", "response": f"{JEWELS} Hence B.\nAnswer: B"},  # the judge's label is unreadable
]


def label(kind: str, modality: str | None = None, faithful: bool | None = None, reason: str = "checked") -> str:
    return json.dumps({"type": kind, "modality": modality, "faithful": faithful, "reason": reason})


STEP_ANSWERS = {
    PHONE: label("perception", "visual", True), ASKS: label("perception", "audio", True), GRUMPY: label("reasoning"),
    LAUGH: label("perception", "audio", False, "he says he is in a bad humor"),
    DOG: label("perception", "visual", False, "there is no dog"), HAPPY: label("reasoning"),
    "Bad humor means grumpy, so it is B.": label("reasoning"),
    JEWELS: "I think maybe?", "Hence B.": label("reasoning"),
}


def m(task: str, inputs: dict, text: str) -> dict:
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "chains.jsonl"
    p.write_text("".join(json.dumps({**r, "media": "friday.mp4", "question": "What mood is the man in?",
                                     "options": ["happy", "bad humor"], "gold": "B"}) + "\n" for r in RESPONSES))
    return p


def labelling_input(path: Path) -> Path:
    """``RESPONSES`` as a faithfulness input whose question the cassette does not match on (the
    annotate and calibrate tests' input: friday.mp4, question "q", options a/b, gold B)."""
    path.write_text("".join(json.dumps({**r, "media": "friday.mp4", "question": "q", "options": ["a", "b"],
                                        "gold": "B"}) + "\n" for r in RESPONSES))
    return path


def cassette(tmp: Path) -> Path:
    rows = [m("faith_describe", {}, "A woman in a hat talks on a telephone; a man's voice says he is in a bad humor.")]
    rows += [m("faith_step", {"step": s}, a) for s, a in STEP_ANSWERS.items()]
    for r in RESPONSES:  # whole-chain answers, in step order
        from murgat.core.text import preprocess, split_sentences

        steps = [s.text for s in split_sentences(preprocess(r["response"], 2).reasoning)]
        rows.append(m("faith_chain", {"steps": steps}, json.dumps(
            {"steps": [{"index": i, **json.loads(STEP_ANSWERS[s])} if STEP_ANSWERS[s].startswith("{") else
                       {"index": i, "type": "perception", "faithful": "maybe"} for i, s in enumerate(steps)]})))
    p = tmp / "judge.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


@pytest.mark.parametrize("granularity", ["step", "chain"])
def test_upr_2x2_and_counts_by_hand(tmp_path, data, example_media, capsys, granularity) -> None:
    log = tmp_path / "served.log"
    out = tmp_path / "run"
    code = main(["faithfulness", str(data), "--media-root", str(example_media), "--judge", f"replay:{cassette(tmp_path)}",
                 "-J", f"log={log}", "--out", str(out), "--granularity", granularity, "--json", "--quiet"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    # UPR = (0 + 2) / (2 + 2); r3 has no perception step, r4's only perception step is undetermined
    assert doc["upr"]["value"] == 0.5 and doc["perception_steps"] == 4 and doc["unfaithful_steps"] == 2
    assert doc["upr_by_modality"]["visual"]["value"] == 0.5 and doc["upr_by_modality"]["audio"]["value"] == 0.5
    assert doc["upr_per_response_mean"]["value"] == 0.5  # r1 0.0, r2 1.0
    assert doc["n_no_perception"] == 1 and doc["undetermined_steps"] == 1
    assert doc["undetermined_causes"] == {"unparseable": 1}
    assert doc["answer_x_faithfulness"] == {"correct_faithful": 2, "correct_unfaithful": 0, "wrong_faithful": 0,
                                            "wrong_unfaithful": 1, "unknown_faithful": 0, "unknown_unfaithful": 0}
    assert doc["accuracy"]["value"] == 0.75
    res = {r.id: r for r in RunFolder(out, repair=False, record=FaithResult).latest_results()}
    assert res["r2"].upr == 1.0 and res["r1"].upr == 0.0 and res["r3"].upr is None and res["r3"].case == "no_perception"
    assert res["r4"].any_unfaithful is None and res["r4"].case == "undetermined"
    assert res["r2"].steps[1].evidence == "whole media"  # DOG cites nothing
    assert res["r2"].steps[0].evidence == ("whole media" if granularity == "chain" else "cited segments")
    served = log.read_text().splitlines()
    # grounding: one description of the media for all four chains (memoised in the run)
    n_steps = 3 + 3 + 1 + 2
    assert len(served) == 1 + (n_steps if granularity == "step" else 4)
    if granularity == "step":
        assert res["r1"].steps[0].evidence == "cited segments"


def test_judge_segmentation_falls_back_to_sentences_when_unreadable(tmp_path, data, example_media, capsys) -> None:
    cas = cassette(tmp_path)
    extra = [m("faith_segment", {}, "Sure! Here are the steps: one, two.")]
    cas.write_text(cas.read_text() + "".join(json.dumps(r) + "\n" for r in extra))
    out = tmp_path / "run"
    assert main(["faithfulness", str(data), "--media-root", str(example_media), "--judge", f"replay:{cas}",
                 "--out", str(out), "--segmentation", "judge", "--ids", "r1", "--json", "--quiet"]) == 0
    (r,) = RunFolder(out, repair=False, record=FaithResult).latest_results()
    assert "judge segmentation unusable" in r.meta["segmentation_note"] and r.n_steps == 3
    capsys.readouterr()


def test_ratio_ci_and_paired_difference_by_hand() -> None:
    iv = ratio_ci([0, 2, 1], [2, 2, 2], n_resamples=500, seed=1)
    assert iv.value == pytest.approx(0.5) and 0.0 <= iv.ci_low <= 0.5 <= iv.ci_high <= 1.0
    d = paired_ratio_diff([(1, 2), (2, 2)], [(0, 2), (1, 2)], n_resamples=500)
    assert d.value == pytest.approx(0.25 - 0.75)
    assert ratio_ci([0], [0]).value is None  # no perception step at all: no UPR, not 0


def test_text_output_formats_percent_intervals(tmp_path, data, example_media, capsys) -> None:
    assert main(["faithfulness", str(data), "--media-root", str(example_media), "--judge", f"replay:{cassette(tmp_path)}",
                 "--out", str(tmp_path / "run"), "--quiet"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "UPR (unfaithful / perception steps)" in out and "50.0%" in out and "(2/4)" in out
