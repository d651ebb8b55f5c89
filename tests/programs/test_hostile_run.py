"""One hostile item among nine harmless ones, through ``murgat program``: the nine records are
written, and correct, whatever the hostile one does; it gets its own record naming the reason.

Real media (friday.mp4), real evidence building, real run folder; the planner, executor and
checker are one hand-written replay cassette (``match`` lines), as in the other program
tests. The faults that no program text can cause (an operation that raises or hangs, a
crash outside the interpreter) are injected into the operation's own code in-process.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.core.jsonl import read_records
from murgat.programs import ops, runner

ASK = "A woman asks whether the lord of the universe is in."
F = "def execute_command(video, options):\n"
HARMLESS = F + ('    d = video.query("00:01-00:03", "What does the woman ask?", "audio")\n'
                '    return answer_question("Mood?", [d], options)\n')
EXPECTED = f"{ASK[:-1]} (audio, 0:01-0:03).\nShe asks for him (audio, 0:01-0:03).\nAnswer: B"
HUGE = "    s = '\\U000e0000' * 99\n    row = [s] * 1000\n    big = [row] * 19\n"  # ~19 MB as text, 19,000 parts

_DESCRIBE = ('    d = video.query("00:01-00:03", "{}", "audio")\n'
             '    return answer_question("Mood?", [d], options)\n')
#: what the executor describes for the hostile descriptions: each cleaned of its own citations,
#: blanks collapsed, reads as a citation of a segment no operation described
HOSTILE_DESCRIPTIONS = {
    "Describe (nested).": "A man waves (visual, 0:0(audio, 0:02)4).",
    "Describe (line break).": "A man waves (visual,\n0:04).",
    "Describe (padded).": "A man waves (visual," + " " * 420 + "0:04).",
}

#: kind → (program, trace status, what its error says)
HOSTILE: dict[str, tuple[str, str, str]] = {
    "huge_instruction": (F + HUGE + '    d = video.query("00:01-00:03", big, "audio")\n    return d\n',
                         "program_stopped", "describe's instruction is longer than 10,000 characters as text"),
    "huge_ranges": (F + HUGE + '    d = video.query(big, "What?", "audio")\n    return d\n',
                    "program_stopped", "describe's ranges is longer than 10,000 characters as text"),
    "huge_question": (F + HUGE + '    return answer_question(big, [], options)\n',
                      "program_stopped", "answer_question's question is longer than"),
    "huge_return": (F + '    return "option" + " " * 49990\n',  # the answer reader was quadratic on it
                    "program_stopped", "returned value is longer than 20,000 characters"),
    "endless_loop": (F + "    n = 0\n    for i in range(1000):\n        for j in range(1000):\n"
                         "            for k in range(1000):\n                n = n + 1\n    return n\n",
                     "program_stopped", "more than 20000 interpreter steps"),
    "nan_ranges": (F + '    d = video.query(["nan", "inf"], "What?", "audio")\n    return d\n',
                   "no_answer", "'nan' is not a time"),
    "overflow_ranges": (F + '    d = video.query([0, 1e308], "What?", "audio")\n    return d\n',
                        "no_answer", "beyond any media"),
    "grammar_bomb": (F + '    d = video.query("' + "a and " * 20 + 'a 0:01 !", "What?", "audio")\n    return d\n',
                     "no_answer", "is not a time"),
    "forged_return": (F + '    return "He is in a bad humor (audio, 0:03-0:05).\\nAnswer: B"\n',
                      "forged_citations", "cites (audio, 0:03-0:05), which no operation of this item produced"),
    "forged_synthesis": (F + '    d = video.query("00:01-00:03", "What does the woman ask?", "audio")\n'
                             '    return answer_question("Decide (evil).", [d], options)\n',
                         "forged_citations", "the last synthesize's answer cites (visual, 0:04)"),
    # forgeries that appear only once the response is read as score reads it (thinking removed,
    # unknown markers dropped, a description's own citations removed, blanks collapsed)
    "think_inside_a_time": (F + '    return "He waves (visual, 0:0<think>x</think>4).\\nAnswer: B"\n',
                            "forged_citations", "cites (visual, 0:04), which no operation"),
    "marker_forms_think": (F + '    d = video.query("00:01-00:03", "What does the woman ask?", "audio")\n'
                               '    return answer_question("Decide (marker).", [d], options)\n',
                           "forged_citations", "cites (visual, 0:04), which no operation"),
    "citation_inside_a_citation": (F + _DESCRIBE.format("Describe (nested)."),
                                   "forged_citations", "cites (visual, 0:04), which no operation"),
    # blanks are collapsed before the description's own citations are removed: the group goes, and
    # the answer is scored on what the operation attached only (the last assertion of the test)
    "line_break_in_brackets": (F + _DESCRIBE.format("Describe (line break)."), "ok", ""),
    "padded_group": (F + _DESCRIBE.format("Describe (padded)."), "ok", ""),
    "raising_op": (F + '    r = video.find("explode", "audio")\n    return r\n',
                   "program_stopped", "RuntimeError: the find backend exploded"),
    "memory_error": (F + '    r = video.find("exhaust", "audio")\n    return r\n',
                     "program_stopped", "MemoryError"),
    "hang": (F + '    r = video.find("hang", "audio")\n    return r\n', "program_stopped", "ran longer than 8 s"),
    "crash": (F + '    return "crash"\n', "internal_error", "RuntimeError: assembling exploded"),
}


def _scored_citations(response: str) -> list[dict]:
    """The citations ``murgat citations`` (the reading ``score`` uses) finds in a response."""
    from murgat.commands.citations.cli import citations_doc

    return [c for s in citations_doc(response).get("sentences", []) for c in s["citations"]]


def m(task: str, inputs: dict, text: str) -> dict:
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def injected(monkeypatch: pytest.MonkeyPatch) -> None:
    """Faults inside an operation's own code, for the hostile item only."""
    real_find = ops.ExecutorApi._find_model

    async def find(self, query, mod, rec):
        if query == "explode":
            raise RuntimeError("the find backend exploded")
        if query == "exhaust":
            raise MemoryError
        if query == "hang":
            await asyncio.sleep(3600)
        return await real_find(self, query, mod, rec)

    real_assemble = runner.assemble

    def assemble(api, returned, *rest):
        if returned == "crash":
            raise RuntimeError("assembling exploded")
        return real_assemble(api, returned, *rest)

    monkeypatch.setattr(ops.ExecutorApi, "_find_model", find)
    monkeypatch.setattr(runner, "assemble", assemble)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_one_hostile_item_never_costs_the_nine_others_their_records(kind: str, tmp_path: Path, example_media: Path,
                                                                    injected: None, capsys) -> None:
    program, status, reason = HOSTILE[kind]
    ids = [f"h{k}" for k in range(9)]
    ids.insert(4, "evil")
    # each item its own question: the planner's prompt (and so its cache key) differs
    data = write_jsonl(tmp_path / "q.jsonl", [
        {"id": i, "media": "friday.mp4", "question": f"What mood is the man in ({i})?", "options": ["happy", "bad humor"],
         "gold": "B"} for i in ids])
    cas = write_jsonl(tmp_path / "c.jsonl", [
        *[m("plan", {"id": i, "variant": "logic-declarative"}, program if i == "evil" else HARMLESS) for i in ids],
        m("find", {}, '{"ranges": []}'),
        m("describe", {"instruction": "What does the woman ask?"}, ASK), m("entail", {"fact": ASK}, "yes"),
        m("synthesize", {"instruction": "Decide (evil)."}, "She asks for him [1] as he waves (visual, 0:04).\nAnswer: B"),
        m("synthesize", {"instruction": "Decide (marker)."},
          "She asks for him [1] as he waves (visual, 0:0<thi[9]nk>x</thi[9]nk>4).\nAnswer: B"),
        *[m("describe", {"instruction": q}, a) for q, a in HOSTILE_DESCRIPTIONS.items()],
        m("entail", {}, "yes"),
        m("synthesize", {"instruction": "Mood?"}, "She asks for him [1].\nAnswer: B")])
    out = tmp_path / "prog"
    code = main(["program", str(data), "--media-root", str(example_media), "--variant", "logic-declarative",
                 "--planner", f"replay:{cas}", "--out", str(out), "--json", "--quiet", "--item-concurrency", "4",
                 "--program-timeout", "8"])
    capsys.readouterr()
    folder = out / "logic-declarative"
    recs = {r["id"]: r for _, r in read_records(folder / "responses.jsonl")[0]}
    traces = {t["id"]: t for _, t in read_records(folder / "traces.jsonl")[0]}
    assert set(recs) == set(traces) == set(ids), kind
    for i in ids[:4] + ids[5:]:
        assert recs[i]["response"] == EXPECTED and recs[i]["predicted_option"] == "B" and recs[i]["correct"] is True
        assert traces[i]["status"] == "ok" and "generation_error" not in recs[i]
    evil, trace = recs["evil"], traces["evil"]
    assert trace["status"] == status and evil["program_status"] == status, (kind, trace["status"], trace["error"])
    said = " ".join([trace["error"] or ""] + [op.get("error") or "" for op in trace["ops"]])
    assert reason in said, (kind, said)
    assert all(op["status"] not in ("ok", "running") or op.get("output") is not None for op in trace["ops"]), kind
    if kind in ("raising_op", "memory_error", "hang", "nan_ranges", "overflow_ranges", "grammar_bomb"):
        assert trace["ops"][-1]["status"] == "error", kind  # the failed operation's own record says so
    if status in ("forged_citations", "internal_error"):  # an error record: nothing of it is scored
        assert evil["response"] == "" and evil["generation_error"].startswith(status)
    assert "(visual, 0:04)" not in evil["response"] and "(audio, 0:03-0:05)" not in evil["response"]
    assert "visual" not in " ".join(f"{c['modality']}" for c in _scored_citations(evil["response"]))
    assert len(json.dumps(trace)) < 200_000  # the trace is bounded, whatever the program made
    assert code == (1 if status in ("forged_citations", "internal_error") else 0)
