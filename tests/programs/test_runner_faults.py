"""One item's program failure is that item's recorded stop, never another item's loss; a
trace is always writable; a description is checked against the segments it cites, however
the planner wrote the times. Real media (friday.mp4), hand-written replay answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.core.jsonl import read_records
from murgat.programs.bounded import TRACE_MAX_CHARS, TRACE_MAX_DEPTH, TRACE_MAX_ITEMS, Budget, writable
from murgat.programs.ops import OpRecord
from murgat.programs.runner import ItemTrace, PlanAttempt, _finish

ASK = "A woman asks whether the lord of the universe is in."


def m(task: str, inputs: dict, text: str) -> dict:
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def item(i: str) -> dict:
    # each item its own question: the planner's prompt (and so its cache key) differs
    return {"id": i, "media": "friday.mp4", "question": f"What mood is the man in ({i})?",
            "options": ["happy", "bad humor"], "gold": "B"}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


F = "def execute_command(video, options):\n"
PLANS = {
    "good": F + '    d = video.query("00:01-00:03", "What does the woman ask?", "audio")\n'
                '    return answer_question("Mood?", [d], options)\n',
    "bad": F + "    x = [1, 2]\n    return x[::0]\n",  # ValueError inside an allowed operation
    "odd": F + '    x = "caf\\ud800"\n    return x\n',  # a lone surrogate in a returned string
    "huge": "Let me think. " * 20_000,  # 280,000 characters of prose: refused before extraction
}


def test_one_items_failure_never_reaches_another(tmp_path: Path, example_media: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "q.jsonl", [item(i) for i in PLANS])
    cas = write_jsonl(tmp_path / "c.jsonl", [
        *[m("plan", {"id": i, "variant": "logic-declarative"}, code) for i, code in PLANS.items()],
        m("describe", {"instruction": "What does the woman ask?"}, ASK), m("entail", {"fact": ASK}, "yes"),
        m("synthesize", {}, "She asks for him [1].\nAnswer: B")])
    out = tmp_path / "prog"
    main(["program", str(data), "--media-root", str(example_media), "--variant", "logic-declarative", "--planner",
          f"replay:{cas}", "--out", str(out), "--json", "--quiet", "--item-concurrency", "4"])
    capsys.readouterr()
    traces = {t["id"]: t for _, t in read_records(out / "logic-declarative" / "traces.jsonl")[0]}
    recs = {r["id"]: r for _, r in read_records(out / "logic-declarative" / "responses.jsonl")[0]}
    assert set(traces) == set(recs) == set(PLANS)
    assert traces["good"]["status"] == "ok" and recs["good"]["predicted_option"] == "B"
    assert recs["good"]["response"].startswith(ASK[:-1] + " (audio, 0:01-0:03).")
    bad = traces["bad"]
    assert bad["status"] == "program_stopped" and recs["bad"]["program_status"] == "program_stopped"
    assert bad["error"] == "line 3, column 11: slice step cannot be zero"
    assert bad["stopped_at"] == {"line": 3, "column": 11}
    assert traces["odd"]["status"] == "no_answer" and traces["odd"]["returned"] == "caf\\ud800"
    huge = traces["huge"]
    assert huge["status"] == "planning_error" and "longer than 200000 characters" in huge["error"]


def test_traces_are_always_writable() -> None:
    deep: object = 1
    for _ in range(1000):
        deep = [deep]
    trace = ItemTrace(id="x\ud800", variant="v", returned="r\udcff",
                      ops=[OpRecord(op="describe", inputs={"ranges": deep, "instruction": "why\ud83d?"})])
    record, safe = _finish({"id": "x\ud800", "response": "a\ud800b", "nested": deep}, trace, 0.0)
    line = safe.model_dump_json()
    assert '"returned":"r\\\\udcff"' in line and '"instruction":"why\\\\ud83d?"' in line
    assert "nested deeper than" in line and safe.status == "ok"
    assert record["response"] == "a\\ud800b"
    assert json.dumps(record, ensure_ascii=False).encode("utf-8")
    assert writable({"a": 1.5, 2: [None, True]}) == {"a": 1.5, "2": [None, True]}
    cut = writable(deep)
    for _ in range(TRACE_MAX_DEPTH):
        cut = cut[0]
    assert isinstance(cut, str)


def test_described_times_written_as_text_are_checked_against_the_cited_segments(tmp_path: Path, example_media: Path,
                                                                               capsys) -> None:
    """``--judge embedded`` reads the transcript of the cited segments. A ``describe`` whose
    times the planner wrote as "00:01-00:03" was checked before the transcript was loaded
    ("no speech is heard in audio 0:01-0:03", dropped as unverified) while the same claim
    through ``find()`` was checked with it: both must get the same verdict from the same words."""
    data = write_jsonl(tmp_path / "q.jsonl", [item("friday-q")])
    cas = write_jsonl(tmp_path / "c.jsonl", [
        m("plan", {"variant": "narrative-declarative"},
          '- describe("00:01-00:03", "audio", "What does the woman ask?")\n- synthesize("Decide.")'),
        m("plan", {"variant": "narrative-imperative"},
          '- describe(find("lord of the universe", "audio"), "audio", "What does the woman ask?")\n'
          '- synthesize("Decide.")'),
        m("find", {"query": "lord of the universe"}, '{"ranges": [[1.0, 3.0]]}'),
        m("describe", {"instruction": "What does the woman ask?"}, ASK),
        m("synthesize", {}, "She asks for him [1].\nAnswer: B")])
    out = tmp_path / "prog"
    main(["program", str(data), "--media-root", str(example_media), "--variant",
          "narrative-declarative,narrative-imperative", "--planner", f"replay:{cas}", "--judge", "embedded",
          "--out", str(out), "--json", "--quiet"])
    capsys.readouterr()
    ops = {}
    for v in ("narrative-declarative", "narrative-imperative"):
        (trace,) = [t for _, t in read_records(out / v / "traces.jsonl")[0]]
        (ops[v],) = [op for op in trace["ops"] if op["op"] == "describe"]
    written, found = ops["narrative-declarative"], ops["narrative-imperative"]
    assert written["citations"] == found["citations"] == ["audio, 0:01-0:03"]
    assert "no speech is heard" not in written["check"][0]["raw"]
    assert written["check"][0]["raw"] == found["check"][0]["raw"]
    assert written["status"] == found["status"]


def test_a_replay_miss_inside_a_program_still_ends_the_run_loudly(tmp_path: Path, example_media: Path,
                                                                   capsys) -> None:
    """Only the item's own failures become its record: a cassette miss is the run's (exit 3)."""
    data = write_jsonl(tmp_path / "q.jsonl", [item("good")])
    cas = write_jsonl(tmp_path / "c.jsonl", [m("plan", {"id": "good", "variant": "logic-declarative"}, PLANS["good"])])
    code = main(["program", str(data), "--media-root", str(example_media), "--variant", "logic-declarative",
                 "--planner", f"replay:{cas}", "--out", str(tmp_path / "prog"), "--json", "--quiet"])
    assert code == 3 and "replay cassette miss" in capsys.readouterr().err


def test_a_trace_is_bounded_whatever_it_holds() -> None:
    """Strings, lists and the whole trace are cut with a marker: serialising a trace that held
    a huge value several times over needed gigabytes, and the process aborted (exit 134) in
    the serializer, where no ``except`` can catch it."""
    huge = "x" * 1_000_000 + "\ud800"
    ops = [OpRecord(op="describe", inputs={"instruction": huge, "ranges": [huge] * 10}, output=huge) for _ in range(5)]
    trace = ItemTrace(id="x", variant="v", ops=ops, plan_attempts=[PlanAttempt(attempt=0, raw=huge * 3)])
    record, safe = _finish({"id": "x", "response": "Answer: B", "options": list(range(20_000))}, trace, 0.0)
    line = safe.model_dump_json()
    assert len(line) < 2 * TRACE_MAX_CHARS and safe.status == "ok" and safe.trace_cut > 0
    # the replans are written last (the operations first): this one is cut, with a note saying how much
    assert (safe.plan_attempts[0].raw or "").endswith(" more characters not kept]")
    assert "…[not kept" in line or "more items not kept" in line or "more characters not kept" in line
    assert record["response"] == "Answer: B" and record["options"][-1] == f"…[{20_000 - TRACE_MAX_ITEMS} more items not kept]"


def test_the_bounded_writer_keeps_small_values_exactly() -> None:
    value = {"a": [1, 2.5, None, True, "é\U0001f600"], "b": {"c": ["x" * 1000]}, 3: "k"}
    budget = Budget()
    assert writable(value, budget) == {"a": [1, 2.5, None, True, "é\U0001f600"], "b": {"c": ["x" * 1000]}, "3": "k"}
    assert budget.cut == 0
    small = Budget(chars=50, max_string=20, max_items=3)
    got = writable({"s": "y" * 100, "l": list(range(10)), "t": "z" * 40}, small)
    assert got["s"] == "y" * 20 + "…[80 more characters not kept]"
    assert got["l"] == [0, 1, 2, "…[7 more items not kept]"]
    assert got["t"] == "z" * 20 + "…[20 more characters not kept]" or got["t"].startswith("…[")
    assert small.cut >= 3


@pytest.mark.parametrize("shape", ["one_huge_output", "output_of_many_pieces", "four_long_replans"])
def test_a_trace_keeps_every_key_whatever_one_value_costs(shape: str) -> None:
    """A value that would spend the trace's whole budget is cut with a note; the keys after it
    (the operations, the error, the step counts) are still written."""
    outputs = {"one_huge_output": "x" * 9_700_000, "output_of_many_pieces": ["y" * 100] * 97_000}
    ops = [OpRecord(op="describe", output=outputs.get(shape, "short"), status="error", error="stopped here")
           for _ in range(3)]
    replans = [PlanAttempt(attempt=k, raw="r" * 1_100_000, error="refused") for k in range(4 if shape == "four_long_replans" else 1)]
    trace = ItemTrace(id="x", variant="v", status="program_stopped", error="ran longer than 8 s", interpreter_steps=1234,
                      op_calls=3, judge_calls=5, plan_attempts=replans, ops=ops)
    _, safe = _finish({"id": "x"}, trace, 0.0)
    assert len(safe.model_dump_json()) < 2 * TRACE_MAX_CHARS
    assert safe.error == "ran longer than 8 s" and safe.interpreter_steps == 1234 and safe.judge_calls == 5
    assert [(o.op, o.status, o.error) for o in safe.ops] == [("describe", "error", "stopped here")] * 3
    assert [p.attempt for p in safe.plan_attempts] == list(range(len(replans)))
    assert safe.trace_cut > 0
    line = safe.model_dump_json()
    assert "not kept" in line
