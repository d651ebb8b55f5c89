"""``murgat reflect`` (Algorithm 2) checked call by call, on real media with replay answers.

The model and the detector are replay judges answering by step text / attempt number; a
failing detector is a stand-in OpenAI-compatible server on 127.0.0.1 answering 503 (real
HTTP, real SDK).
"""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main
from murgat.jsonl import read_records

from ...standin import StandIn

LAUGH = "A man laughs loudly (audio, 0:03-0:05)."
ASKS = "She asks whether the lord of the universe is in (audio, 0:01-0:03)."
HAPPY = "So he is happy."
QUIET = "A man laughs quietly (audio, 0:03-0:05)."
MOOD = "A man says he is in a bad humor (audio, 0:03-0:05)."
DOG = "A dog barks (audio, 0:01)."
DOGS = ["A dog growls (audio, 0:01).", "A puppy yaps (audio, 0:01).", "A wolf howls (audio, 0:01)."]
GRUMPY = "So he is grumpy."


def label(kind, faithful=None, reason="checked"):
    return json.dumps({"type": kind, "modality": "audio" if kind == "perception" else None, "faithful": faithful,
                       "reason": reason})


def m(task, inputs, text):
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def setup(tmp: Path) -> tuple[Path, Path, Path]:
    q = tmp / "q.jsonl"
    base = {"media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"], "gold": "B"}
    q.write_text("".join(json.dumps({**base, "id": i}) + "\n" for i in ("c1", "c2", "g1")))
    start = tmp / "from.jsonl"
    start.write_text(json.dumps({**base, "id": "c1", "response": f"{LAUGH} {ASKS} {HAPPY}\nAnswer: A"}) + "\n"
                     + json.dumps({**base, "id": "c2", "response": "Bad humor means grumpy.\nAnswer: B"}) + "\n")
    rows = [
        m("faith_describe", {}, "A woman on a telephone; a man's voice says he is in a bad humor."),
        m("faith_step", {"step": LAUGH}, label("perception", False, "he says he is in a bad humor")),
        m("faith_step", {"step": ASKS}, label("perception", True)),
        m("faith_step", {"step": HAPPY}, label("reasoning")),
        m("faith_step", {"step": QUIET}, label("perception", False, "nobody laughs")),
        m("faith_step", {"step": MOOD}, label("perception", True)),
        m("faith_step", {"step": DOG}, label("perception", False, "there is no dog")),
        *[m("faith_step", {"step": d}, label("perception", False, "no animal")) for d in DOGS],
        m("faith_step", {"step": GRUMPY}, label("reasoning")),
        m("faith_step", {"step": "Bad humor means grumpy."}, label("reasoning")),
        # the model: regenerations by step and attempt, continuations by where they start
        m("reflect_regenerate", {"id": "c1", "index": 0, "attempt": 1}, QUIET),
        m("reflect_regenerate", {"id": "c1", "index": 0, "attempt": 2}, MOOD),
        *[m("reflect_regenerate", {"id": "c1", "index": 1, "attempt": k + 1}, d) for k, d in enumerate(DOGS)],
        m("reflect_continue", {"id": "c1", "index": 0}, f"{DOG} {GRUMPY}\nAnswer: B"),  # brings a new unfaithful step
        m("reflect_continue", {"id": "c1", "index": 1}, f"{GRUMPY}\nAnswer: B"),
        m("generate", {"id": "g1"}, f"{MOOD} {GRUMPY}\nAnswer: B"),
    ]
    cas = tmp / "answers.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return q, start, cas


def test_algorithm_2_call_by_call(tmp_path, example_media, capsys) -> None:
    q, start, cas = setup(tmp_path)
    out = tmp_path / "reflect"
    code = main(["reflect", str(q), "--media-root", str(example_media), "--model", f"replay:{cas}", "--detector",
                 f"replay:{cas}", "--from", str(start), "--ids", "c1,c2", "--out", str(out), "--json", "--quiet"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    tr = {r["id"]: r for _, r in read_records(out / "traces.jsonl")[0]}
    t1 = tr["c1"]["trace"]
    ev = t1["events"]
    assert [(e["index"], e["verdict"]) for e in ev] == [(0, "unfaithful"), (1, "unfaithful"), (2, "reasoning")]
    # step 0: regenerated twice, accepted on the 2nd attempt, then continued from r1'
    assert [(a["text"], a["verdict"]) for a in ev[0]["attempts"]] == [(QUIET, "unfaithful"), (MOOD, "faithful")]
    assert ev[0]["resolved"] is True and ev[0]["continuation"].startswith(DOG)
    # step 1 came from the continuation and is unfaithful: K = 3 attempts used, unresolved, kept (last attempt)
    assert ev[1]["text"] == DOG and [a["text"] for a in ev[1]["attempts"]] == DOGS and ev[1]["resolved"] is False
    assert t1["resolved_after"] == {"2": 1} and t1["unresolved"] == 1 and t1["regenerations"] == 2
    assert t1["final"] == f"{MOOD} {DOGS[-1]} {GRUMPY}\nAnswer: B"
    (c1,) = [r for _, r in read_records(out / "responses.jsonl")[0] if r["id"] == "c1"]
    assert c1["response"] == t1["final"] and c1["correct"] is True and c1["original_response"].startswith(LAUGH)
    # before: LAUGH unfaithful, ASKS faithful → 1/2; after: MOOD faithful, last dog unfaithful → 1/2
    assert tr["c1"]["before"] == {"perception": 2, "unfaithful": 1, "undetermined": 0}
    assert tr["c1"]["after"] == {"perception": 2, "unfaithful": 1, "undetermined": 0}
    # c2 has no perception step: nothing regenerated, no calls to the model
    assert tr["c2"]["trace"]["regenerations"] == 0 and tr["c2"]["after"]["perception"] == 0
    assert doc["upr_before"]["value"] == 0.5 and doc["upr_after"]["value"] == 0.5
    assert doc["upr_difference"]["value"] == 0.0
    assert doc["accuracy_before"] == 0.5 and doc["accuracy_after"] == 1.0
    assert doc["accuracy_difference"]["value"] == 0.5
    assert doc["regenerations_invoked"] == 2 and doc["resolved_after_attempts"] == {"2": 1} and doc["unresolved"] == 1
    # extra (paid) calls of c1's walk: checks of steps 1 and 2 (step 0's check was cached by the "before" labelling)
    # + 2 regenerations + 2 checks + 1 continuation + 3 regenerations + 3 checks + 1 continuation
    assert tr["c1"]["extra_calls"] == 2 + 2 + 2 + 1 + 3 + 3 + 1


def test_reflect_generates_the_chain_when_no_from(tmp_path, example_media, capsys) -> None:
    q, _, cas = setup(tmp_path)
    out = tmp_path / "reflect"
    assert main(["reflect", str(q), "--media-root", str(example_media), "--model", f"replay:{cas}", "--detector",
                 f"replay:{cas}", "--ids", "g1", "--out", str(out), "--json", "--quiet"]) == 0
    (rec,) = [r for _, r in read_records(out / "responses.jsonl")[0]]
    assert rec["response"] == f"{MOOD} {GRUMPY}\nAnswer: B" and rec["reflect"]["regenerations"] == 0
    capsys.readouterr()


def test_a_failing_detector_never_counts_as_faithful(tmp_path, example_media, capsys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    q, start, cas = setup(tmp_path)
    out = tmp_path / "reflect"
    with StandIn() as server:
        server.mode = "fail"
        code = main(["reflect", str(q), "--media-root", str(example_media), "--model", f"replay:{cas}", "--detector",
                     "openai:judge", "-D", f"base_url={server.base_url}", "--retries", "0", "--variant", "vanilla",
                     "--from", str(start), "--ids", "c1", "--out", str(out), "--json", "--quiet"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    (t,) = [r for _, r in read_records(out / "traces.jsonl")[0]]
    assert [e["verdict"] for e in t["trace"]["events"]] == ["undetermined"] * 3
    assert t["trace"]["regenerations"] == 0 and t["after"] == {"perception": 0, "unfaithful": 0, "undetermined": 3}
    assert doc["upr_after"]["value"] is None  # nothing decided: no UPR, and certainly not 0
