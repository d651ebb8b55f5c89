"""`murgat score` end to end on real media with a replay judge.

The judge answers come from a hand-written cassette in the raw text format a chat model
returns ("Yes.", "No", a JSON object for decomposition), served by the ``replay`` provider
through the normal judge path (cache, parsing, accounting). Every score below was worked
out by hand from DESIGN.md's metric.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main

FRIDAY = (
    "A woman in a hat talks to the operators (visual, 0:01). "
    "She asks whether the lord of the universe is in (audio, 0:01-0:03). "
    "An operator says he is in a bad humor and somebody must have stolen the crown jewels (audio, 0:03-0:06; visual, 0:04). "
    "So he is angry.\nAnswer: B"
)
NASA = (
    "The narrator names NASA's Goddard Space Flight Center (audio, 0:08-0:12). "
    "A worker stands on an orange lift (visual, 0:06; visual, 0:40). "
    "The mirror is gold.\nAnswer: C"
)


def cassette_lines() -> list[dict]:
    def verify(sentence: str, label: str) -> dict:
        return {"match": {"task": "verify", "inputs": {"sentence": sentence}}, "output": {"text": label}}

    def decompose(sentence: str, facts: list[str]) -> dict:
        return {"match": {"task": "decompose", "inputs": {"sentence": sentence}},
                "output": {"text": "```json\n" + json.dumps({"facts": facts}) + "\n```"}}

    def entail(fact: str, evidence: list[str], answer: str) -> dict:
        return {"match": {"task": "entail", "inputs": {"fact": fact, "evidence": evidence}}, "output": {"text": answer}}

    bad, crown = "An operator says he is in a bad humor.", "An operator says somebody must have stolen the crown jewels."
    both = ["audio 0:03-0:06", "visual 0:04"]
    return [
        verify("A woman in a hat talks to the operators.", "Yes"),
        verify("She asks whether the lord of the universe is in.", "yes."),
        verify("An operator says he is in a bad humor and somebody must have stolen the crown jewels.", "Label: yes"),
        verify("So he is angry.", "No"),
        decompose("A woman in a hat talks to the operators (visual, 0:01).",
                  ["A woman in a hat talks to the operators (visual, 0:01)."]),
        decompose("She asks whether the lord of the universe is in (audio, 0:01-0:03).",
                  ["She asks whether the lord of the universe is in (audio, 0:01-0:03)."]),
        decompose("An operator says he is in a bad humor and somebody must have stolen the crown jewels "
                  "(audio, 0:03-0:06; visual, 0:04).",
                  [f"{bad[:-1]} (audio, 0:03-0:06; visual, 0:04).", f"{crown[:-1]} (audio, 0:03-0:06; visual, 0:04)."]),
        entail("A woman in a hat talks to the operators.", ["visual 0:01"], "Yes."),
        entail("She asks whether the lord of the universe is in.", ["audio 0:01-0:03"], "No"),
        entail(bad, both, "yes"), entail(bad, ["audio 0:03-0:06"], "yes"), entail(bad, ["visual 0:04"], "no"),
        entail(crown, both, "yes"), entail(crown, ["audio 0:03-0:06"], "no"), entail(crown, ["visual 0:04"], "no"),
        # nasa
        verify("The narrator names NASA's Goddard Space Flight Center.", "yes"),
        verify("A worker stands on an orange lift.", "yes"),
        verify("The mirror is gold.", "yes"),
        decompose("The narrator names NASA's Goddard Space Flight Center (audio, 0:08-0:12).",
                  ["The narrator names NASA's Goddard Space Flight Center (audio, 0:08-0:12)."]),
        decompose("A worker stands on an orange lift (visual, 0:06; visual, 0:40).",
                  ["A worker stands on an orange lift (visual, 0:06; visual, 0:40; audio, 0:02)."]),
        entail("The narrator names NASA's Goddard Space Flight Center.", ["audio 0:08-0:12"], "Yes"),
        entail("A worker stands on an orange lift.", ["visual 0:06"], "yes"),
    ]


@pytest.fixture
def setup(tmp_path: Path, example_media: Path) -> tuple[Path, Path]:
    cas = tmp_path / "cassette.jsonl"
    cas.write_text("\n".join(json.dumps(x) for x in cassette_lines()) + "\n")
    inp = tmp_path / "responses.jsonl"
    rows = [
        {"id": "friday", "media": "friday.mp4", "question": "Mood?", "options": ["a", "b", "c", "d"], "gold": "B",
         "response": FRIDAY},
        {"id": "nasa", "media": "nasa_13013", "question": "Where?", "options": ["a", "b", "c", "d"], "gold": "A",
         "response": NASA},
    ]
    inp.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return inp, cas


def results(out: Path) -> dict[str, dict]:
    return {json.loads(x)["id"]: json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()}


def test_scores_match_hand_computed_values(setup, tmp_path: Path, example_media: Path, capsys) -> None:
    inp, cas = setup
    out = tmp_path / "run"
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out),
                 "--quiet", "--json"]) == 0
    res = results(out)
    f = res["friday"]["scores"]
    # facts: S0 R1 P1; S1 R0 P0; S2a R1 P0.5 (visual redundant); S2b R1 P1 (both needed)
    assert f["coverage"] == 1.0
    assert f["precision"] == pytest.approx(2.5 / 4)
    assert f["recall"] == pytest.approx(3 / 4)
    f1 = 2 * 0.625 * 0.75 / (0.625 + 0.75)
    assert f["f1"] == pytest.approx(f1) and f["murgat_s"] == pytest.approx(f1)
    n = res["nasa"]["scores"]
    # V=3, Vc=2; S1's second citation is past the end (invalid → not precise); the invented audio citation is dropped
    assert n["coverage"] == pytest.approx(2 / 3)
    assert n["precision"] == pytest.approx(0.75) and n["recall"] == 1.0
    assert n["murgat_s"] == pytest.approx(2 / 3 * (2 * 0.75 / 1.75))
    nasa_fact = res["nasa"]["sentences"][1]["facts"][0]
    assert [c["raw"] for c in nasa_fact["dropped_citations"]] == ["audio, 0:02"]
    assert any("did not make" in note for note in res["nasa"]["sentences"][1]["notes"])
    assert res["friday"]["correct"] is True and res["nasa"]["correct"] is False
    summary = json.loads((out / "summary.json").read_text())
    for key in ("n_items", "n_errors", "coverage", "precision", "recall", "f1", "murgat_s", "accuracy"):
        assert key in summary
    assert summary["n_items"] == 2 and summary["n_errors"] == 0
    assert summary["murgat_s"]["value"] == pytest.approx((f["murgat_s"] + n["murgat_s"]) / 2)
    assert 0 <= summary["murgat_s"]["ci_low"] <= summary["murgat_s"]["ci_high"] <= 1
    assert summary["accuracy"]["value"] == 0.5
    # calls: friday 4 verify + 3 decompose + (1 + 1 + 3 + 3) entail; nasa 3 + 2 + 2
    assert summary["extra"]["this_invocation"]["sent"] == 4 + 3 + 8 + 3 + 2 + 2 == summary["sent"]
    assert (out / "report.html").exists() and json.loads((out / "config.json").read_text())["fingerprint"]


def test_rerun_resumes_with_no_new_calls(setup, tmp_path: Path, example_media: Path) -> None:
    inp, cas = setup
    out = tmp_path / "run"
    args = ["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out), "--quiet",
            "--json"]
    assert main(args) == 0
    first = (out / "results.jsonl").read_text()
    assert main(args) == 0
    assert (out / "results.jsonl").read_text() == first
    assert json.loads((out / "summary.json").read_text())["extra"]["this_invocation"]["sent"] == 0


def test_changed_settings_are_refused_on_resume(setup, tmp_path: Path, example_media: Path) -> None:
    inp, cas = setup
    out = tmp_path / "run"
    base = ["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out), "--quiet"]
    assert main(base) == 0
    assert main([*base, "--precision-mode", "strict"]) == 2


DUP = "Someone mentions the crown jewels (audio, 0:04-0:06; audio, 0:05-0:06)."


@pytest.mark.parametrize(
    ("mode", "friday_p", "dup_p"),
    [("alce", 2.5 / 4, 1.0), ("strict", 2.5 / 4, 0.0), ("individual", 1.5 / 4, 1.0)],
)
def test_precision_modes_through_pipeline(setup, tmp_path: Path, example_media: Path, mode: str, friday_p: float,
                                          dup_p: float) -> None:
    """Per-mode precision worked out by hand.

    friday S2a: joint yes, audio alone yes, visual alone no → 0.5 in every mode.
    friday S2b: joint yes, both alone no → alce/strict 1.0 (each is needed), individual 0.0.
    dup: two audio citations that each entail alone → alce 1.0, strict 0.0 (neither is needed), individual 1.0.
    """
    inp, cas = setup
    with open(cas, "a") as f:
        claim = "Someone mentions the crown jewels."
        for ev in (["audio 0:04-0:06", "audio 0:05-0:06"], ["audio 0:04-0:06"], ["audio 0:05-0:06"]):
            f.write(json.dumps({"match": {"task": "entail", "inputs": {"fact": claim, "evidence": ev}},
                                "output": {"text": "yes"}}) + "\n")
        f.write(json.dumps({"match": {"task": "verify", "inputs": {"sentence": claim}}, "output": {"text": "yes"}}) + "\n")
        f.write(json.dumps({"match": {"task": "decompose", "inputs": {"sentence": DUP}},
                            "output": {"text": json.dumps({"facts": [DUP]})}}) + "\n")
    with open(inp, "a") as f:
        f.write(json.dumps({"id": "dup", "media": "friday.mp4", "response": DUP}) + "\n")
    out = tmp_path / f"run-{mode}"
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out", str(out),
                 "--quiet", "--precision-mode", mode]) == 0
    res = results(out)
    assert res["friday"]["scores"]["precision"] == pytest.approx(friday_p)
    assert res["dup"]["scores"]["precision"] == pytest.approx(dup_p)
    assert res["dup"]["scores"]["recall"] == 1.0


def test_replay_miss_fails_loudly(tmp_path: Path, example_media: Path, capsys) -> None:
    cas = tmp_path / "empty.jsonl"
    cas.write_text("")
    inp = tmp_path / "r.jsonl"
    inp.write_text(json.dumps({"id": "x", "media": "friday.mp4", "response": "She talks (audio, 0:01)."}) + "\n")
    code = main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out",
                 str(tmp_path / "o"), "--quiet"])
    assert code == 3 and "no recorded answer" in capsys.readouterr().err
