"""Label schema validation, the FaithScore importer on the real file, fact matching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.human_eval.labels import LabelError, load_faithscore, load_labels
from murgat.human_eval.matching import greedy_match, lexical_similarity, match_facts

# FaithScore's labels, copied into the repository (MIT; tests/data/real/annotations/faithscore/README.md)
FAITHSCORE = Path(__file__).resolve().parents[1] / "data" / "real" / "annotations" / "faithscore" / "annotation.jsonl"


def test_labels_validate_with_clear_errors(tmp_path: Path) -> None:
    good = {"id": "a", "annotator": "x", "sentences": [{"index": 0, "verifiable": True, "facts": [
        {"text": "A man waves.", "citations": ["visual, 0:01"], "supported": True, "necessary": [True]}]}]}
    p = tmp_path / "l.jsonl"
    p.write_text(json.dumps(good) + "\n")
    assert load_labels(p)[0].sentences[0].facts[0].necessary == [True]
    bad = json.loads(json.dumps(good))
    bad["sentences"][0]["facts"][0]["necessary"] = [True, False]
    p.write_text(json.dumps(bad) + "\n")
    with pytest.raises(LabelError, match=r"line 1: field 'sentences\.0\.facts\.0'.*2 flags for 1 citations"):
        load_labels(p)
    p.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(LabelError, match="line 2: id 'a' labelled twice"):
        load_labels(p)


def test_faithscore_imports_with_data_polarity() -> None:
    labels = load_faithscore(FAITHSCORE)
    assert len(labels) == 180
    facts = [f for a in labels for s in a.sentences for f in s.facts]
    assert len(facts) == 1380
    assert sum(f.supported for f in facts) == 1114  # 81% supported under the file's own polarity
    giraffes = next(a for a in labels if any("three giraffes standing in a field" in (s.text or "") for s in a.sentences))
    by_text = {f.text: f.supported for s in giraffes.sentences for f in s.facts}
    assert by_text["There is a sky."] is True and by_text["There are three giraffes."] is False
    habitat = [s for s in giraffes.sentences if "natural habitat" in (s.text or "")]
    assert habitat and habitat[0].verifiable is False
    flipped = load_faithscore(FAITHSCORE, polarity="readme")
    assert sum(f.supported for a in flipped for s in a.sentences for f in s.facts) == 266


def test_optimal_matching_beats_greedy() -> None:
    """P1 is most like G1 (0.9) but also like G2 (0.8); P2 is like G1 only (0.7).
    Greedy pairs P1-G1 first and strands P2; the optimal matching pairs P1-G2 and P2-G1."""
    table = {("P1", "G1"): 0.9, ("P1", "G2"): 0.8, ("P2", "G1"): 0.7}

    def sim(a: str, b: str) -> float:
        return table.get((a, b), 0.0)

    greedy = greedy_match(["P1", "P2"], ["G1", "G2"], sim, threshold=0.5)
    best = match_facts(["P1", "P2"], ["G1", "G2"], sim, threshold=0.5)
    assert greedy.pairs == [(0, 0, 0.9)]
    assert best.pairs == [(0, 1, 0.8), (1, 0, 0.7)]
    assert best.precision == 1.0 and best.recall == 1.0 and greedy.recall == 0.5


def test_lexical_similarity() -> None:
    assert lexical_similarity("There are two dogs.", "two dogs are there") == 1.0
    assert lexical_similarity("a red car", "a blue car") == pytest.approx(0.5)


def test_threshold_blocks_weak_pairs() -> None:
    m = match_facts(["a dog barks"], ["the sky is blue"], threshold=0.3)
    assert m.pairs == [] and m.recall == 0.0
