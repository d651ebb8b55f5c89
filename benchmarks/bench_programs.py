"""Programs: interpreter overhead, and model/judge calls per item per variant (check on / off).

1. Interpreter overhead: a logic program with a loop of N operations against an instant
   in-process API; reported in µs per operation and per program (parse + check + run).
2. Calls per item: ``murgat program`` on the real friday.mp4 question with hand-written
   replay answers (planner, executor and checker), every variant, with the runtime check on
   and off. Run: ``python benchmarks/bench_programs.py``; writes ``benchmarks/results/programs.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

from programs.interpreter import Api, Interpreter, TimeRange
from programs.safety import Limits, parse_program

HERE = Path(__file__).resolve().parent
MEDIA = HERE.parent / "examples" / "media"


class InstantApi(Api):
    async def find(self, query, modality):
        return [TimeRange(1.0, 2.0, modality, "bench")]

    async def describe(self, ranges, modality, instruction):
        return "described"

    async def synthesize(self, instruction, options=None):
        return "Answer: A"


def interpreter_overhead(n_ops: int = 20, repeats: int = 300) -> dict:
    code = ("def execute_command(video, options):\n    notes = []\n"
            f"    for i in range({n_ops - 1}):\n"
            "        r = video.find(f'event {i}', 'visual')\n"
            "        notes = notes + [len(r)]\n"
            "    return answer_question('q', notes, options)\n")
    limits = Limits(max_ops=1000)

    async def once() -> None:
        await Interpreter(InstantApi(), limits, options=["a", "b"]).run(parse_program(code, limits))

    async def many() -> float:
        t0 = time.perf_counter()
        for _ in range(repeats):
            await once()
        return time.perf_counter() - t0

    wall = asyncio.run(many())
    per_program = wall / repeats
    return {"ops_per_program": n_ops, "us_per_program": round(per_program * 1e6, 1),
            "us_per_operation": round(per_program / n_ops * 1e6, 1)}


PROGRAMS = {
    "logic-declarative": ('def execute_command(video, options):\n'
                          '    a = video.query("00:01-00:03", "What does the woman ask?", "audio")\n'
                          '    b = video.query("00:04", "Who is on screen?", "visual")\n'
                          '    return answer_question("What mood is the man in?", [a, b], options)\n'),
    "logic-imperative": ('def execute_command(video, options):\n'
                         '    f = video.find("bad humor", "audio")\n'
                         '    a = video.query(f, "What is said about his mood?", "audio")\n'
                         '    return answer_question("What mood is the man in?", [a], options)\n'),
    "narrative-declarative": ('- describe("00:01-00:03", "audio", "What does the woman ask?")\n'
                              '- describe("00:04", "visual", "Who is on screen?")\n- synthesize("Decide.")\n'),
    "narrative-imperative": ('- describe(find("bad humor", "audio"), "audio", "What is said about his mood?")\n'
                             '- synthesize("Decide.")\n'),
}


def calls_per_item(tmp: Path) -> dict:
    from murgat.cli import main

    def m(task, inputs, text):
        return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}

    rows = [m("plan", {"variant": v}, c) for v, c in PROGRAMS.items()]
    rows += [m("find", {}, '{"ranges": [[3.0, 4.3]]}'),
             m("describe", {"instruction": "Who is on screen?", "attempt": 0}, "A man wears a crown."),
             m("describe", {}, "A woman talks on a telephone."),
             m("entail", {"fact": "A man wears a crown."}, "no"), m("entail", {}, "yes"),
             m("synthesize", {}, "He is grumpy [1].\nAnswer: B")]
    cas = tmp / "bench.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    q = tmp / "q.jsonl"
    q.write_text(json.dumps({"id": "friday-q", "media": "friday.mp4", "question": "What mood is the man in?",
                             "options": ["happy", "bad humor"], "gold": "B"}) + "\n")
    out = {}
    for check in (True, False):
        folder = tmp / f"prog-{check}"
        args = ["program", str(q), "--media-root", str(MEDIA), "--variant", "all", "--planner", f"replay:{cas}",
                "--out", str(folder), "--json", "--quiet"] + ([] if check else ["--no-check"])
        with contextlib.redirect_stdout(io.StringIO()) as buf:
            main(args)
        doc = json.loads(buf.getvalue())
        out["check_on" if check else "check_off"] = {v: s["calls_per_item"] for v, s in doc["variants"].items()}
    return out


def main() -> None:
    over = interpreter_overhead()
    print("interpreter:", over)
    with tempfile.TemporaryDirectory() as d:
        calls = calls_per_item(Path(d))
    print("calls per item:", json.dumps(calls, indent=1))
    (HERE / "results" / "programs.json").write_text(json.dumps({"interpreter": over, "calls_per_item": calls}, indent=2))


if __name__ == "__main__":
    main()
