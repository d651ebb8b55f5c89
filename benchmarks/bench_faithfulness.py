"""Step faithfulness: labelling calls per chain (per step vs per chain) and reflect's extra
calls per item as a function of the number of unfaithful steps.

Chains of N cited steps about the real friday.mp4 are labelled by a replay judge (answers
by step text), so every count is the real number of requests murgat makes. Run:
``python benchmarks/bench_faithfulness.py``; writes ``benchmarks/results/faithfulness.json``.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEDIA = HERE.parent / "examples" / "media"
Q = {"media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"], "gold": "B"}


def m(task, inputs, text):
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def lab(faithful):
    return json.dumps({"type": "perception", "modality": "audio", "faithful": faithful, "reason": "bench"})


def served(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def run(args: list[str]) -> dict:
    from murgat.cli import main

    with contextlib.redirect_stdout(io.StringIO()) as buf:
        main(args)
    return json.loads(buf.getvalue())


def labelling(tmp: Path, sizes=(4, 8, 12)) -> list[dict]:
    rows = []
    for n in sizes:
        steps = [f"Fact {k} is heard (audio, 0:0{k % 5 + 1})." for k in range(n)]
        cas = [m("faith_describe", {}, "A phone call.")] + [m("faith_step", {"step": s}, lab(True)) for s in steps]
        cas.append(m("faith_chain", {}, json.dumps({"steps": [{"index": i, "type": "perception", "modality": "audio",
                                                                "faithful": True} for i in range(n)]})))
        c = tmp / f"l{n}.jsonl"
        c.write_text("".join(json.dumps(r) + "\n" for r in cas))
        data = tmp / f"d{n}.jsonl"
        data.write_text("".join(json.dumps({**Q, "id": f"x{j}", "response": " ".join(steps) + "\nAnswer: B"}) + "\n"
                                for j in range(3)))
        row = {"steps_per_chain": n}
        for gran in ("step", "chain"):
            log = tmp / f"log{n}{gran}"
            # different chains per item would not be deduplicated; identical ones here are, so count per item = first item
            run(["faithfulness", str(data), "--media-root", str(MEDIA), "--judge", f"replay:{c}", "-J", f"log={log}",
                 "--out", str(tmp / f"r{n}{gran}"), "--granularity", gran, "--ids", "x0", "--json", "--quiet"])
            row[f"calls_{gran}"] = served(log)
        rows.append(row)
    return rows


def reflect_calls(tmp: Path, n_steps: int = 6, k: int = 3) -> list[dict]:
    out = []
    for resolve in (True, False):
        for u in range(0, 4):
            bad = set(range(0, 2 * u, 2))
            steps = [f"Fake {i} (audio, 0:01)." if i in bad else f"Fact {i} (audio, 0:01)." for i in range(n_steps)]
            cas = [m("faith_describe", {}, "A phone call.")]
            # the detector (faith_detect) and the judge measuring before/after (faith_step) agree here
            cas += [m(t, {"step": s}, lab(not s.startswith("Fake"))) for s in steps for t in ("faith_detect", "faith_step")]
            for i in bad:
                for a in range(1, k + 1):
                    fixed = f"Fixed {i} try {a} (audio, 0:01)."
                    cas.append(m("reflect_regenerate" if a == 1 else "reflect_regenerate_again", {"index": i, "attempt": a},
                                 fixed))
                    cas += [m(t, {"step": fixed}, lab(resolve)) for t in ("faith_detect", "faith_step")]
                cas.append(m("reflect_continue", {"index": i}, " ".join(steps[i + 1:]) + "\nAnswer: B"))
            c = tmp / f"rf{u}{resolve}.jsonl"
            c.write_text("".join(json.dumps(r) + "\n" for r in cas))
            data = tmp / f"rq{u}{resolve}.jsonl"
            data.write_text(json.dumps({**Q, "id": "c"}) + "\n")
            start = tmp / f"rs{u}{resolve}.jsonl"
            start.write_text(json.dumps({**Q, "id": "c", "response": " ".join(steps) + "\nAnswer: B"}) + "\n")
            doc = run(["reflect", str(data), "--media-root", str(MEDIA), "--model", f"replay:{c}", "--detector",
                       f"replay:{c}", "--from", str(start), "--out", str(tmp / f"ro{u}{resolve}"), "--json", "--quiet",
                       "--k", str(k), "--granularity", "step"])
            out.append({"unfaithful_steps": u, "resolved_on_first_try": resolve,
                        "extra_calls_per_item": doc["extra_calls_per_item"],
                        "labelling_calls_per_item": doc["labelling_calls_per_item"],
                        "judge_calls_per_item": doc["judge_calls_per_item"]})
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        lab_rows = labelling(tmp)
        ref_rows = reflect_calls(tmp)
    for r in lab_rows:
        print(r)
    for r in ref_rows:
        print(r)
    (HERE / "results" / "faithfulness.json").write_text(json.dumps({"labelling": lab_rows, "reflect": ref_rows}, indent=2))


if __name__ == "__main__":
    main()
