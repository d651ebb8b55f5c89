"""Every program variant end to end on real media (friday.mp4), scored by ``murgat score``.

Planner, executor and checker answers are hand-written replay lines (``match`` on the
stage and its inputs); the media decoding, evidence building, interpreter, citation
attachment, runtime check, response assembly and scoring are all real. Expected scores
are computed by hand in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.core.citations import strip_citations
from murgat.core.jsonl import read_records
from murgat.core.text import split_sentences

Q = {"id": "friday-q", "media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"],
     "gold": "B"}

PROGRAMS = {
    "logic-declarative": '''Here is the program.
```python
def execute_command(video, options):
    ask = video.query("00:01-00:03", "What does the woman ask?", "audio")
    mood = video.query("00:03-00:05", "What is said about his mood?", "audio")
    seen = video.query("00:04", "Who is on screen?", "visual")
    return answer_question("What mood is the man in?", [ask, mood, seen], options)
```''',
    "logic-imperative": '''```python
def execute_command(video, options):
    found = video.find("bad humor", "audio")
    mood = video.query(found, "What is said about his mood?", "audio")
    return answer_question("What mood is the man in?", [mood], options)
```''',
    "narrative-declarative": '''- describe("00:01-00:03", "audio", "What does the woman ask?")
- describe("00:02", "visual", "Describe the crowd.")
- describe("00:03-00:05", "audio", "What is said about his mood?")
- synthesize("Decide the mood.")''',
    "narrative-imperative": '''1. describe(find("bad humor", "audio"), "audio", "What is said about his mood?")
2. describe(find("a telephone", "visual"), "visual", "Who is on screen?")
3. synthesize("Decide the mood.")''',
}
ASK = "A woman asks whether the lord of the universe is in."
MOOD = "A man says he is in a bad humor."
WRONG = "A man wears a crown."
SEEN = "A woman talks on a telephone."
CROWD = "A crowd cheers."


def m(task: str, inputs: dict, text: str) -> dict:
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def program_cassette(tmp: Path) -> Path:
    rows = [m("plan", {"id": "friday-q", "variant": v}, code) for v, code in PROGRAMS.items()]
    rows += [
        m("find", {"query": "bad humor", "modality": "audio"}, '{"ranges": [[3.0, 4.3]]}'),
        m("find", {"query": "a telephone", "modality": "visual"}, '{"ranges": []}'),
        m("describe", {"instruction": "What does the woman ask?"}, ASK),
        m("describe", {"instruction": "What is said about his mood?"}, MOOD),
        m("describe", {"instruction": "Who is on screen?", "attempt": 0}, WRONG),
        m("describe", {"instruction": "Who is on screen?", "attempt": 1}, SEEN),
        m("describe", {"instruction": "Describe the crowd."}, CROWD),
        # the runtime check (entailment of each description by its own segments)
        m("entail", {"fact": ASK}, "yes"), m("entail", {"fact": MOOD}, "yes"),
        m("entail", {"fact": WRONG}, "no, nobody wears a crown"), m("entail", {"fact": SEEN}, "yes"),
        m("entail", {"fact": CROWD}, "no"),
        m("synthesize", {"instruction": "What mood is the man in?", "descriptions": [1, 2, 3]},
          "She asks for the boss [1] and hears he is in a bad humor [2] while on the phone [3].\nAnswer: B"),
        m("synthesize", {"instruction": "What mood is the man in?", "descriptions": [1]},
          "He is in a bad humor [1].\nAnswer: B"),
        m("synthesize", {"instruction": "Decide the mood.", "descriptions": [1, 3]},
          "She asks for him [1] and learns he is in a bad humor [3].\nAnswer: (B)"),
        m("synthesize", {"instruction": "Decide the mood.", "descriptions": [1]}, "He is in a bad humor [1].\nAnswer: B"),
        m("synthesize", {"instruction": "Decide the mood.", "descriptions": [1, 2, 3]},
          "A crowd cheers [2] and he is in a bad humor [3].\nAnswer: B"),
    ]
    p = tmp / "program.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


EXPECTED = {
    "logic-declarative": (f"{ASK[:-1]} (audio, 0:01-0:03). {MOOD[:-1]} (audio, 0:03-0:05). {SEEN[:-1]} (visual, 0:04).\n"
                          "She asks for the boss (audio, 0:01-0:03) and hears he is in a bad humor (audio, 0:03-0:05) "
                          "while on the phone (visual, 0:04).\nAnswer: B"),
    "logic-imperative": f"{MOOD[:-1]} (audio, 0:03-0:04.3).\nHe is in a bad humor (audio, 0:03-0:04.3).\nAnswer: B",
    "narrative-declarative": (f"{ASK[:-1]} (audio, 0:01-0:03). {MOOD[:-1]} (audio, 0:03-0:05).\nShe asks for him "
                              "(audio, 0:01-0:03) and learns he is in a bad humor (audio, 0:03-0:05).\nAnswer: B"),
    "narrative-imperative": f"{MOOD[:-1]} (audio, 0:03-0:04.3).\nHe is in a bad humor (audio, 0:03-0:04.3).\nAnswer: B",
}


def score_cassette(tmp: Path) -> Path:
    """Descriptions are verifiable, conclusions are not; one fact per sentence; the scoring
    judge accepts ASK and MOOD and rejects SEEN (unlike the runtime checker)."""
    rows = []
    for text in EXPECTED.values():
        for i, s in enumerate(split_sentences(text.rsplit("\nAnswer", 1)[0])):
            is_description = strip_citations(s.text) in (ASK, MOOD, SEEN)
            rows.append(m("verify", {"sentence": strip_citations(s.text)}, "yes" if is_description else "no"))
            rows.append(m("decompose", {"sentence": s.text}, json.dumps({"facts": [s.text]})))
            del i
    rows += [m("entail", {"fact": ASK}, "yes"), m("entail", {"fact": MOOD}, "yes"), m("entail", {"fact": SEEN}, "no")]
    p = tmp / "score.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps(Q) + "\n")
    return p


def test_every_variant_end_to_end_and_scored(tmp_path: Path, data: Path, example_media: Path, capsys) -> None:
    out = tmp_path / "prog"
    cas = program_cassette(tmp_path)
    args = ["program", str(data), "--media-root", str(example_media), "--variant", "all", "--planner", f"replay:{cas}",
            "--out", str(out), "--json", "--quiet"]
    assert main(args) == 0
    capsys.readouterr()
    for v, expected in EXPECTED.items():
        (rec,) = [r for _, r in read_records(out / v / "responses.jsonl")[0]]
        assert rec["response"] == expected, v
        assert rec["predicted_option"] == "B" and rec["correct"] is True and rec["program_status"] == "ok"
    traces = {v: next(t for _, t in read_records(out / v / "traces.jsonl")[0]) for v in EXPECTED}
    ld = traces["logic-declarative"]
    seen = [op for op in ld["ops"] if op["op"] == "describe"][2]
    assert [c["verdict"] for c in seen["check"]] == ["no", "yes"] and seen["status"] == "verified"
    assert seen["citations"] == ["visual, 0:04"] and seen["output"] == SEEN
    assert ld["judge_calls"] == 1 + 2 + 2 + 4 + 1  # plan, ask, mood, seen (2 tries × describe+check), synthesize
    nd = traces["narrative-declarative"]
    crowd = [op for op in nd["ops"] if op["op"] == "describe"][1]
    assert crowd["status"] == "unverified" and [c["verdict"] for c in crowd["check"]] == ["no", "no", "no"]
    ni = traces["narrative-imperative"]
    assert [op["status"] for op in ni["ops"]] == ["ok", "verified", "empty", "empty", "ok"]
    assert ni["ops"][0]["inputs"]["backend"] == "model" and ni["ops"][0]["output"] == [[3.0, 4.3]]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["variants"]["narrative-declarative"]["descriptions"] == {"unverified": 1, "verified": 2}
    assert summary["variants"]["logic-declarative"]["regenerations"] == 1


def test_variants_scored_with_hand_computed_values(tmp_path: Path, data: Path, example_media: Path, capsys) -> None:
    out = tmp_path / "prog"
    cas = program_cassette(tmp_path)
    scas = score_cassette(tmp_path)
    code = main(["program", str(data), "--media-root", str(example_media), "--variant", "all", "--planner",
                 f"replay:{cas}", "--judge", f"replay:{scas}", "--no-check", "--out", str(out), "--json", "--quiet"])
    # without the check, the wrong first description of the screen and the crowd are kept, unchecked
    assert code == 0
    capsys.readouterr()
    (ld,) = [r for _, r in read_records(out / "logic-declarative" / "responses.jsonl")[0]]
    (nd,) = [r for _, r in read_records(out / "narrative-declarative" / "responses.jsonl")[0]]
    assert "A man wears a crown (visual, 0:04)." in ld["response"] and ld["descriptions"] == {"unchecked": 3}
    assert "A crowd cheers (visual, 0:02)." in nd["response"]
    out2 = tmp_path / "prog2"
    assert main(["program", str(data), "--media-root", str(example_media), "--variant", "all", "--planner",
                 f"replay:{cas}", "--executor", f"replay:{cas}", "--judge", f"replay:{cas}", "--out", str(out2),
                 "--quiet", "--json"]) == 0
    capsys.readouterr()
    scores = {}
    for v in EXPECTED:
        run = tmp_path / f"run-{v}"
        assert main(["score", str(out2 / v / "responses.jsonl"), "--media-root", str(example_media), "--judge",
                     f"replay:{scas}", "--out", str(run), "--quiet", "--json"]) == 0
        scores[v] = json.loads(capsys.readouterr().out)
    # logic-declarative: 3 cited descriptions verifiable, conclusion not → coverage 1; facts ASK yes, MOOD yes,
    # SEEN no (one citation each: precision = recall) → P = R = F1 = 2/3
    assert scores["logic-declarative"]["murgat_s"]["value"] == pytest.approx(2 / 3)
    assert scores["logic-declarative"]["recall"]["value"] == pytest.approx(2 / 3)
    for v in ("logic-imperative", "narrative-declarative", "narrative-imperative"):
        assert scores[v]["murgat_s"]["value"] == 1.0 and scores[v]["coverage"]["value"] == 1.0, v
    assert all(s["accuracy"]["value"] == 1.0 for s in scores.values())


def test_program_score_flag_compares_variants_against_a_baseline(tmp_path, data, example_media, capsys) -> None:
    cas = program_cassette(tmp_path)
    baseline = tmp_path / "cite.jsonl"
    baseline.write_text(json.dumps({**Q, "response": f"{ASK[:-1]} (audio, 0:01-0:03). {SEEN[:-1]} (visual, 0:04).\n"
                                    "Answer: B"}) + "\n")
    scas = json.loads(json.dumps([json.loads(x) for x in score_cassette(tmp_path).read_text().splitlines()]))
    scas += [m("verify", {"sentence": strip_citations(s.text)}, "yes") for s in split_sentences(f"{ASK} {SEEN}")]
    scas += [m("decompose", {"sentence": s.text}, json.dumps({"facts": [s.text]}))
             for s in split_sentences(f"{ASK[:-1]} (audio, 0:01-0:03). {SEEN[:-1]} (visual, 0:04).")]
    scas.append(m("entail", {"fact": CROWD}, "no"))  # the same judge is the runtime checker here
    judge = tmp_path / "judge.jsonl"
    judge.write_text("".join(json.dumps(r) + "\n" for r in scas))
    out = tmp_path / "prog"
    code = main(["program", str(data), "--media-root", str(example_media), "--variant",
                 "logic-imperative,narrative-declarative", "--planner", f"replay:{cas}", "--judge", f"replay:{judge}",
                 "--out", str(out), "--score", "--baseline", str(baseline), "--json", "--quiet"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    runs = {r["run"]: r for r in doc["comparison"]["runs"]}
    # baseline: ASK yes, SEEN no → 1/2; both variants 1.0 → Δ = +0.5 each
    assert runs["baseline"]["murgat_s"]["value"] == 0.5
    assert runs["logic-imperative"]["murgat_s"]["value"] == 1.0
    assert [d["murgat_s"]["value"] for d in doc["comparison"]["differences"]] == [0.5, 0.5]


def test_planner_prose_syntax_error_and_over_budget_programs(tmp_path, data, example_media, capsys) -> None:
    bad = {
        "logic-declarative": "I would just answer B, no program needed.",
        "logic-imperative": "```python\ndef execute_command(video, options):\n    x = (\n```",
        "narrative-declarative": "\n".join(f'- describe("00:01", "visual", "Step {k}")' for k in range(30)),
        "narrative-imperative": "- import os\n- describe(__import__('os'), 'audio', 'x')",
    }
    rows = [m("plan", {"id": "friday-q", "variant": v}, code) for v, code in bad.items()]
    rows += [m("describe", {}, "A woman is on screen."), m("entail", {}, "yes")]
    cas = tmp_path / "bad.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "prog"
    code = main(["program", str(data), "--media-root", str(example_media), "--variant", "all", "--planner",
                 f"replay:{cas}", "--out", str(out), "--json", "--quiet", "--replan", "1"])
    assert code == 1  # items without a program answer fail the run, loudly
    err = capsys.readouterr().err
    assert "FAILED" in err
    tr = {v: next(t for _, t in read_records(out / v / "traces.jsonl")[0]) for v in bad}
    assert tr["logic-declarative"]["status"] == "planning_error" and "no 'def execute_command" in tr["logic-declarative"]["error"]
    assert len(tr["logic-declarative"]["plan_attempts"]) == 2  # --replan 1: the refusal went back once
    assert "syntax error" in tr["logic-imperative"]["error"]
    assert tr["narrative-declarative"]["status"] == "program_stopped"
    assert "more than 24 operation calls" in tr["narrative-declarative"]["error"]
    assert len([op for op in tr["narrative-declarative"]["ops"] if op["status"] == "verified"]) == 24
    assert tr["narrative-imperative"]["status"] == "planning_error"
    recs = {v: next(r for _, r in read_records(out / v / "responses.jsonl")[0]) for v in bad}
    assert recs["logic-declarative"]["generation_error"].startswith("planning_error")
    assert recs["narrative-declarative"]["response"].count("(visual, 0:01)") == 24  # kept what it described


def test_resume_asks_nothing_again(tmp_path, data, example_media, capsys) -> None:
    cas = program_cassette(tmp_path)
    log = tmp_path / "served.log"
    args = ["program", str(data), "--media-root", str(example_media), "--variant", "all", "--planner", f"replay:{cas}",
            "-P", f"log={log}", "--out", str(tmp_path / "prog"), "--json", "--quiet"]
    assert main(args) == 0
    first = log.read_text().count("\n")
    assert main(args) == 0
    assert log.read_text().count("\n") == first
    capsys.readouterr()


def test_view_rewrites_a_program_runs_page(tmp_path: Path, data: Path, example_media: Path, capsys) -> None:
    """``murgat view OUT`` on a program folder writes its page again (as for score, faithfulness and
    reflect folders), rather than saying that a program run has no page of its own."""
    out = tmp_path / "prog"
    cas = program_cassette(tmp_path)
    assert main(["program", str(data), "--media-root", str(example_media), "--variant",
                 "logic-imperative,narrative-declarative", "--planner", f"replay:{cas}", "--out", str(out),
                 "--json", "--quiet"]) == 0
    first = (out / "report.html").read_text(encoding="utf-8")
    (out / "report.html").unlink()
    capsys.readouterr()
    assert main(["view", str(out), "--media-root", str(example_media)]) == 0
    assert "wrote" in capsys.readouterr().out
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page == first  # the same page: every variant and item the folder holds
    other = tmp_path / "elsewhere.html"
    assert main(["view", str(out), "--out", str(other), "--media-root", str(example_media)]) == 0
    assert "friday-q · narrative-declarative" in other.read_text(encoding="utf-8")
