"""``murgat reflect`` (Algorithm 2) checked call by call, on real media with replay answers.

The model and the detector are replay judges answering by step text / attempt number, the
independent judge another replay cassette; a failing detector is a stand-in OpenAI-compatible
server on 127.0.0.1 answering 503, and a sampling model is that server scripted (real HTTP,
real SDK).
"""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main
from murgat.core.jsonl import read_records
from murgat.core.upr import paired_ratio_diff
from tests.standin import StandIn

LAUGH = "A man laughs loudly (audio, 0:03-0:05)."
ASKS = "She asks whether the lord of the universe is in (audio, 0:01-0:03)."
HAPPY = "So he is happy."
QUIET = "A man laughs quietly (audio, 0:03-0:05)."
MOOD = "A man says he is in a bad humor (audio, 0:03-0:05)."
DOG = "A dog barks (audio, 0:01)."
DOGS = ["A dog growls (audio, 0:01).", "A puppy yaps (audio, 0:01).", "A wolf howls (audio, 0:01)."]
GRUMPY = "So he is grumpy."
FUZZY = "Something happens (audio, 0:02)."


def label(kind, faithful=None, reason="checked"):
    return json.dumps({"type": kind, "modality": "audio" if kind == "perception" else None, "faithful": faithful,
                       "reason": reason})


def m(task, inputs, text):
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def setup(tmp: Path) -> tuple[Path, Path, Path]:
    q = tmp / "q.jsonl"
    base = {"media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"], "gold": "B"}
    q.write_text("".join(json.dumps({**base, "id": i}) + "\n" for i in ("c1", "c2", "c3", "g1")))
    start = tmp / "from.jsonl"
    start.write_text(json.dumps({**base, "id": "c1", "response": f"{LAUGH} {ASKS} {HAPPY}\nAnswer: A"}) + "\n"
                     + json.dumps({**base, "id": "c2", "response": "Bad humor means grumpy.\nAnswer: B"}) + "\n"
                     + json.dumps({**base, "id": "c3", "response": f"{DOG} {GRUMPY}\nAnswer: B"}) + "\n")
    detector = {LAUGH: label("perception", False, "he says he is in a bad humor"), ASKS: label("perception", True),
                HAPPY: label("reasoning"), QUIET: label("perception", False, "nobody laughs"),
                MOOD: label("perception", True), DOG: label("perception", False, "there is no dog"),
                **{d: label("perception", False, "no animal") for d in DOGS}, GRUMPY: label("reasoning"),
                "Bad humor means grumpy.": label("reasoning"), FUZZY: "I think maybe?"}
    rows = [
        m("faith_describe", {}, "A woman on a telephone; a man's voice says he is in a bad humor."),
        # the detector answers with its own prompt (faith_detect)
        *[m("faith_detect", {"step": st}, ans) for st, ans in detector.items()],
        # the model: regenerations by step and attempt, continuations by where they start
        m("reflect_regenerate", {"id": "c1", "index": 0, "attempt": 1}, QUIET),
        m("reflect_regenerate_again", {"id": "c1", "index": 0, "attempt": 2}, MOOD),
        m("reflect_regenerate", {"id": "c1", "index": 1, "attempt": 1}, DOGS[0]),
        *[m("reflect_regenerate_again", {"id": "c1", "index": 1, "attempt": k + 1}, DOGS[k]) for k in (1, 2)],
        m("reflect_continue", {"id": "c1", "index": 0}, f"{DOG} {GRUMPY}\nAnswer: B"),  # brings a new unfaithful step
        m("reflect_continue", {"id": "c1", "index": 1}, f"{GRUMPY}\nAnswer: B"),
        m("reflect_regenerate", {"id": "c3", "index": 0, "attempt": 1}, FUZZY),  # the detector cannot label it
        m("reflect_continue", {"id": "c3", "index": 0}, f"{GRUMPY}\nAnswer: B"),
        m("generate", {"id": "g1"}, f"{MOOD} {GRUMPY}\nAnswer: B"),
        # without --judge the detector's judge also measures, by default one labelling call per chain
        *[m("faith_chain", {"steps": chain}, json.dumps({"steps": [
            {"index": i, **json.loads(detector[st])} if detector[st].startswith("{") else
            {"index": i, "type": "perception", "faithful": "maybe"} for i, st in enumerate(chain)]}))
          for chain in ([LAUGH, ASKS, HAPPY], [MOOD, DOGS[-1], GRUMPY], ["Bad humor means grumpy."], [DOG, GRUMPY],
                        [FUZZY, GRUMPY], [MOOD, GRUMPY])],
    ]
    cas = tmp / "answers.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # the independent judge (the labelling prompt, per step): it also finds ASKS unfaithful
    judge = {**{st: ans for st, ans in detector.items()}, ASKS: label("perception", False, "she asks for the king")}
    jrows = [m("faith_describe", {}, "A phone call."), *[m("faith_step", {"step": st}, a) for st, a in judge.items()]]
    (tmp / "judge.jsonl").write_text("".join(json.dumps(r) + "\n" for r in jrows))
    return q, start, cas


def test_algorithm_2_call_by_call(tmp_path, example_media, capsys) -> None:
    q, start, cas = setup(tmp_path)
    out = tmp_path / "reflect"
    code = main(["reflect", str(q), "--media-root", str(example_media), "--model", f"replay:{cas}", "--detector",
                 f"replay:{cas}", "--judge", f"replay:{tmp_path / 'judge.jsonl'}", "--granularity", "step",
                 "--from", str(start), "--ids", "c1,c2", "--out", str(out), "--json", "--quiet"])
    assert code == 0
    cap = capsys.readouterr()
    assert "not an independent measurement" not in cap.err
    doc = json.loads(cap.out)
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
    # the detector's view — before: LAUGH unfaithful, ASKS faithful → 1/2; after: MOOD faithful, last dog unfaithful
    assert tr["c1"]["detector_before"] == {"perception": 2, "unfaithful": 1, "undetermined": 0}
    assert tr["c1"]["detector_after"] == {"perception": 2, "unfaithful": 1, "undetermined": 0}
    # the judge's (what the summary's UPR is): it also rejects ASKS → before 2/2, after 1/2
    assert tr["c1"]["before"] == {"perception": 2, "unfaithful": 2, "undetermined": 0}
    assert tr["c1"]["after"] == {"perception": 2, "unfaithful": 1, "undetermined": 0}
    assert [s["text"] for s in tr["c1"]["judge_labels"]["after"]] == [MOOD, DOGS[-1], GRUMPY]
    # c2 has no perception step: nothing regenerated, no calls to the model
    assert tr["c2"]["trace"]["regenerations"] == 0 and tr["c2"]["after"]["perception"] == 0
    assert doc["upr_before"]["value"] == 1.0 and doc["upr_after"]["value"] == 0.5
    assert doc["upr_difference"]["value"] == -0.5
    dv = doc["detector_view"]
    assert dv["upr_before"]["value"] == 0.5 and dv["upr_after"]["value"] == 0.5 and dv["upr_difference"]["value"] == 0.0
    assert doc["measured_by"]["independent"] is True and doc["detector_prompt"] == "detect"
    # the difference's CI is the paired bootstrap over responses of the judge's counts (c1, c2 in id order)
    pairs = [(tr[i]["before"]["unfaithful"], tr[i]["before"]["perception"]) for i in ("c1", "c2")]
    after = [(tr[i]["after"]["unfaithful"], tr[i]["after"]["perception"]) for i in ("c1", "c2")]
    assert doc["upr_difference"] == paired_ratio_diff(pairs, after).model_dump()
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
                 f"replay:{cas}", "--judge", f"replay:{tmp_path / 'judge.jsonl'}", "--granularity", "step",
                 "--ids", "g1", "--out", str(out), "--json", "--quiet"]) == 0
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


def _kind(prompt: str) -> str:
    if "write only a new replacement" in prompt:
        return "again"
    if "write only a replacement" in prompt:
        return "regenerate"
    if "Continue the reasoning" in prompt:
        return "continue"
    return "other"


def test_regenerations_reach_a_sampling_model_and_a_rerun_pays_nothing(tmp_path, example_media, capsys,
                                                                      monkeypatch) -> None:
    """At temperature 0.7 each attempt must be a new sample: a model that repeats the rejected step
    word for word, then writes another wrong step, then a right one, is asked three times."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    q, start, cas = setup(tmp_path)
    sampled = iter([LAUGH, QUIET, MOOD])  # what the model draws on its 1st, 2nd and 3rd regeneration

    def model(prompt: str, body: dict) -> str:
        kind = _kind(prompt)
        if kind in ("regenerate", "again"):
            return next(sampled)
        return f"{HAPPY}\nAnswer: B" if kind == "continue" else "?"

    out = tmp_path / "reflect"
    argv = ["reflect", str(q), "--media-root", str(example_media), "--detector", f"replay:{cas}", "--judge",
            f"replay:{tmp_path / 'judge.jsonl'}", "--granularity", "step", "--from", str(start), "--ids", "c1",
            "--temperature", "0.7", "--out", str(out), "--json", "--quiet"]
    with StandIn() as server:
        server.script = model
        assert main([*argv, "--model", "openai:sampler", "-M", f"base_url={server.base_url}"]) == 0
        capsys.readouterr()
        kinds = [_kind(" ".join(p.get("text", "") for p in r["messages"][-1]["content"]
                                if isinstance(p, dict))) for r in server.requests]
        prompts_sent = [" ".join(p.get("text", "") for p in r["messages"][-1]["content"] if isinstance(p, dict))
                        for r in server.requests]
        assert kinds.count("regenerate") == 1 and kinds.count("again") == 2  # every attempt reached the model
        assert all(r["temperature"] == 0.7 for r in server.requests)
        (t,) = [r for _, r in read_records(out / "traces.jsonl")[0]]
        ev0 = t["trace"]["events"][0]
        assert [(a["text"], a["verdict"]) for a in ev0["attempts"]] == [(LAUGH, "unfaithful"), (QUIET, "unfaithful"),
                                                                         (MOOD, "faithful")]
        assert ev0["resolved"] is True and t["trace"]["resolved_after"] == {"3": 1}
        # attempt 3 shows the original rejected step and the latest attempt, each with the detector's reason
        third = [p for p, k in zip(prompts_sent, kinds, strict=True) if k == "again"][-1]
        assert f"Your original step (rejected): {LAUGH}\nWhy it was rejected: he says he is in a bad humor" in third
        assert f"Your latest replacement (attempt 2, also rejected): {QUIET}\nWhy it was rejected: nobody laughs" in third
        assert "This is attempt 3" in third
        # a rerun of the same folder redoes the item from the cache: nothing is asked again
        n = len(server.requests)
        for name in ("results.jsonl", "responses.jsonl", "traces.jsonl"):  # the item is done again
            (out / name).unlink()
        assert main([*argv, "--model", "openai:sampler", "-M", f"base_url={server.base_url}"]) == 0
        capsys.readouterr()
        assert len(server.requests) == n
    (t2,) = [r for _, r in read_records(out / "traces.jsonl")[0]]
    assert t2["trace"]["events"] == t["trace"]["events"] and t2["extra_calls"] == 0


def test_undetermined_counts_regenerated_steps_the_detector_could_not_label(tmp_path, example_media, capsys) -> None:
    q, start, cas = setup(tmp_path)
    out = tmp_path / "reflect"
    assert main(["reflect", str(q), "--media-root", str(example_media), "--model", f"replay:{cas}", "--detector",
                 f"replay:{cas}", "--judge", f"replay:{tmp_path / 'judge.jsonl'}", "--granularity", "step",
                 "--from", str(start), "--ids", "c3", "--out", str(out), "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (t,) = [r for _, r in read_records(out / "traces.jsonl")[0]]
    ev = t["trace"]["events"]
    # DOG is rejected; its replacement FUZZY gets an unreadable verdict: regeneration stops, FUZZY is kept
    assert [(a["text"], a["verdict"]) for a in ev[0]["attempts"]] == [(FUZZY, "undetermined")]
    assert ev[0]["resolved"] is False and t["trace"]["undetermined"] == 1 and doc["undetermined_steps"] == 1


def test_detector_prompt_is_recorded_and_the_labelling_prompt_is_a_variant(tmp_path, example_media, capsys) -> None:
    q, start, cas = setup(tmp_path)
    # --detector-prompt label: the detector asks with the labelling prompt (task faith_step)
    lab = [json.loads(x) for x in cas.read_text().splitlines()]
    for r in lab:
        if r["match"]["task"] == "faith_detect":
            r["match"]["task"] = "faith_step"
    cas.write_text("".join(json.dumps(r) + "\n" for r in lab))
    out = tmp_path / "reflect"
    assert main(["reflect", str(q), "--media-root", str(example_media), "--model", f"replay:{cas}", "--detector",
                 f"replay:{cas}", "--detector-prompt", "label", "--granularity", "step", "--from", str(start),
                 "--ids", "c2", "--out", str(out), "--json", "--quiet"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["detector_prompt"] == "label"
    # no --judge: the detector measures, and the run says so
    assert doc["measured_by"] == {"judge": f"replay:{cas}", "independent": False, "variant": "grounding",
                                  "granularity": "step", "note": doc["measured_by"]["note"]}
    assert "not an independent measurement" in cap.err and "not an independent" in doc["measured_by"]["note"]


def test_caps_bound_what_a_rejecting_detector_can_demand(tmp_path, example_media, capsys, monkeypatch) -> None:
    """A detector that rejects every step and a model whose continuations keep adding steps: the
    per-item caps bound the calls (issue 22), and the trace says which cap stopped the walk."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    q, start, _ = setup(tmp_path)
    drawn = iter(range(10_000))

    def both(prompt: str, body: dict) -> str:
        kind = _kind(prompt)
        if kind in ("regenerate", "again"):
            return f"A cat sings song {next(drawn)} (audio, 0:01)."
        if kind == "continue":
            return " ".join(f"A bird calls {next(drawn)} (audio, 0:02)." for _ in range(5)) + "\nAnswer: B"
        if "You review one step" in prompt:
            return label("perception", False, "not there")
        return json.dumps({"steps": []})  # the judge's chain labelling: unusable, steps undetermined

    out = tmp_path / "reflect"
    with StandIn() as server:
        server.script = both
        spec = ["-M", f"base_url={server.base_url}", "-D", f"base_url={server.base_url}"]
        assert main(["reflect", str(q), "--media-root", str(example_media), "--model", "openai:m", "--detector",
                     "openai:d", *spec, "--variant", "vanilla", "--from", str(start), "--ids", "c1", "--k", "3",
                     "--max-regenerations", "4", "--max-steps", "6", "--out", str(out), "--json", "--quiet",
                     "--probes", "off"]) == 0  # counts every request: no judge probes
        texts = [" ".join(p.get("text", "") for p in r["messages"][-1]["content"] if isinstance(p, dict))
                 for r in server.requests]
        kinds = [_kind(x) for x in texts]
    doc = json.loads(capsys.readouterr().out)
    # the detector asked with its own prompt: the question with its options, errors that matter to it only
    detect = [x for x in texts if "You review one step" in x]
    assert detect and all("(A) happy\n(B) bad humor" in x and "matters for answering the question" in x
                          for x in detect)
    (t,) = [r for _, r in read_records(out / "traces.jsonl")[0]]
    tr = t["trace"]
    # step 0: attempts 1-3 and a continuation; step 1: attempt 4 (the cap) and a continuation; later steps are
    # checked but not regenerated; checking stops after 6 steps
    assert kinds.count("regenerate") + kinds.count("again") == 4 == tr["attempts"] == doc["regeneration_attempts"]
    assert kinds.count("continue") == 2
    assert tr["not_regenerated"] == 4 and len(tr["events"]) == 6 and tr["unchecked"] > 0
    assert "--max-steps 6" in tr["stopped"] and doc["items_stopped_by_a_cap"] == 1
    assert t["detector_after"]["undetermined"] == tr["unchecked"]  # unchecked steps are never counted as faithful
    # every request, counted: the detector labels the 3 original steps, checks 6 steps (the first from the cache)
    # and 4 attempts; the model is asked 4 regenerations and 2 continuations; the judge labels 2 chains
    assert tr["unchecked"] == 1 and len(server.requests) == 3 + 5 + 4 + 4 + 2 + 2


def test_defaults_measure_with_the_detector_judge_per_chain(tmp_path, example_media, capsys) -> None:
    q, start, cas = setup(tmp_path)
    out = tmp_path / "reflect"
    assert main(["reflect", str(q), "--media-root", str(example_media), "--model", f"replay:{cas}", "--detector",
                 f"replay:{cas}", "--from", str(start), "--ids", "c1,c2", "--out", str(out), "--json", "--quiet"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert "warning: --judge not given" in cap.err and doc["measured_by"]["granularity"] == "chain"
    # the detector's judge with the labelling prompt agrees with the detector here: 1/2 before and after
    assert doc["upr_before"]["value"] == 0.5 == doc["upr_after"]["value"]
    assert doc["detector_view"]["upr_before"]["value"] == 0.5
