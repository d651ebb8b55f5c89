"""Programs: interpreter overhead, and model/judge calls per item per variant (check on / off).

1. Interpreter overhead: a logic program with a loop of N operations against an instant
   in-process API; reported in CPU µs per operation and per program (parse + check + run),
   best of five rounds.
2. Calls per item: ``murgat program`` on the real friday.mp4 question with hand-written
   replay answers (planner, executor and checker), every variant, with the runtime check on
   and off.
3. Text caps: what refusing a value that is ~19 MB as text costs (time, peak memory), against
   what ``str()`` of it costs (what operations' arguments used to be).
4. Isolation: the wall time of nine harmless items beside one hostile item (each kind) over
   ten harmless items, and how many of the nine records are exactly right.
Run: ``python benchmarks/bench_programs.py``; writes ``benchmarks/results/programs.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

from murgat.programs.interpreter import Api, Interpreter, TimeRange
from murgat.programs.safety import Limits, parse_program

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
        t0 = time.process_time()
        for _ in range(repeats):
            await once()
        return time.process_time() - t0

    # CPU time, best of five rounds: on a shared machine wall time measures the neighbours
    per_program = min(asyncio.run(many()) for _ in range(5)) / repeats
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


def text_caps() -> dict:
    import tracemalloc

    from murgat.programs.bounded import text_of

    big = [["\U000e0000" * 99] * 1000] * 19  # ~19,000 parts, ~19 MB as text

    def measure(fn) -> tuple[float, float]:
        tracemalloc.start()
        t0 = time.perf_counter()
        fn()
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return round(seconds * 1e3, 3), round(peak / 2**20, 2)

    capped_ms, capped_mib = measure(lambda: text_of(big, 10_000))
    whole_ms, whole_mib = measure(lambda: str(big))
    return {"text_chars": len(str(big)), "refused_ms": capped_ms, "refused_peak_mib": capped_mib,
            "str_ms": whole_ms, "str_peak_mib": whole_mib}


ASK = "A woman asks whether the lord of the universe is in."
F = "def execute_command(video, options):\n"
HARMLESS = F + ('    d = video.query("00:01-00:03", "What does the woman ask?", "audio")\n'
                '    return answer_question("Mood?", [d], options)\n')
EXPECTED = f"{ASK[:-1]} (audio, 0:01-0:03).\nShe asks for him (audio, 0:01-0:03).\nAnswer: B"
HOSTILE = {
    "none": HARMLESS,
    "huge_instruction": F + "    s = '\\U000e0000' * 99\n    row = [s] * 1000\n    big = [row] * 19\n"
                            '    return video.query("00:01-00:03", big, "audio")\n',
    "huge_return": F + '    return "option" + " " * 49990\n',  # the answer reader was quadratic on it
    "endless_loop": F + "    n = 0\n    for i in range(1000):\n        for j in range(1000):\n            n = n + 1\n"
                        "    return n\n",
    "forged_return": F + '    return "He is grumpy (audio, 0:03-0:05).\\nAnswer: B"\n',
}


def isolation(tmp: Path) -> dict:
    from murgat.cli import main
    from murgat.core.jsonl import read_records

    def m(task, inputs, text):
        return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}

    ids = [f"h{k}" for k in range(9)] + ["evil"]
    q = tmp / "iso.jsonl"
    q.write_text("".join(json.dumps({"id": i, "media": "friday.mp4", "question": f"Mood ({i})?",
                                     "options": ["happy", "bad humor"], "gold": "B"}) + "\n" for i in ids))
    out: dict = {}
    for kind, program in [("warm-up", HARMLESS), *HOSTILE.items()]:  # the first run also decodes media
        cas = tmp / f"iso-{kind}.jsonl"
        rows = [m("plan", {"id": i}, program if i == "evil" else HARMLESS) for i in ids]
        rows += [m("describe", {}, ASK), m("entail", {}, "yes"), m("synthesize", {}, "She asks for him [1].\nAnswer: B")]
        cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
        folder = tmp / f"iso-{kind}"
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["program", str(q), "--media-root", str(MEDIA), "--variant", "logic-declarative", "--planner",
                  f"replay:{cas}", "--out", str(folder), "--json", "--quiet"])
        seconds = time.perf_counter() - t0
        recs = {r["id"]: r for _, r in read_records(folder / "logic-declarative" / "responses.jsonl")[0]}
        right = sum(1 for i in ids[:9] if recs.get(i, {}).get("response") == EXPECTED)
        out[kind] = {"seconds": round(seconds, 2), "harmless_right": right}
    out.pop("warm-up")
    base = out["none"]["seconds"]
    for v in out.values():
        v["ratio"] = round(v["seconds"] / base, 2)
    return out


def main() -> None:
    over = interpreter_overhead()
    print("interpreter:", over)
    caps = text_caps()
    print("text caps:", caps)
    with tempfile.TemporaryDirectory() as d:
        calls = calls_per_item(Path(d))
        iso = isolation(Path(d))
    print("calls per item:", json.dumps(calls, indent=1))
    print("isolation:", json.dumps(iso, indent=1))
    (HERE / "results" / "programs.json").write_text(json.dumps({"interpreter": over, "calls_per_item": calls,
                                                                "text_caps": caps, "isolation": iso}, indent=2))


if __name__ == "__main__":
    main()
