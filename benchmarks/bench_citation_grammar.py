"""The text readers in linear time (#31): citation grammar, sentence splitter, answer reader.

Adversarial inputs, each at growing sizes; for each size the seconds of the reader and the
seconds per character. A reader is linear when the time per character does not grow with the
size: the check is a **ratio** (time per character at the largest size over that at the
smallest size used for the check, at most ``--max-growth``, default 3), never an absolute time,
so it holds on any machine.

Families (what each reads, and the input that used to blow up):

- ``and_chain``: ``murgat citations "The man talks (a and a and … a !)."`` — the old entry pattern
  read each " and " of a label two ways (exponential: 16 terms 27 s, 18 terms > 2 min).
- ``many_groups``: a response of N such groups plus label/space/separator variants, split into
  sentences (what ``score``, ``validate``, ``faithfulness`` and ``ground`` do first).
- ``answer_spaces``: a word followed by N spaces, read as an answer (the old option patterns had
  two ``\\s*`` around an optional part: quadratic, 46-72 s at 50,000 spaces in a program's result).
- ``split_long``: cited sentences up to 2 MB (``validate`` on 2 MB took 33 s), one sentence holding
  thousands of groups, and lines separated by a newline and a vertical tab.
- ``strip_spaces``: ``strip_citations`` on a sentence with a long run of spaces.

Every size is timed twice: as a user runs it, and with Python's cyclic garbage collector paused.
The check uses the second: the readers allocate one record object per citation, and with a
million live objects the collector's passes add time that grows with the heap, not with the
reader's algorithm (both figures are written; at 2 MB the collector adds about 70 %).

Each case runs in a child process with a time limit (``--timeout``, default 60 s) so that code
that hangs is reported as ``timeout`` instead of stopping the benchmark. ``--code DIR`` runs the
children against another checkout (e.g. ``git archive <rev> murgat media | tar -x -C DIR``) to
measure the code before a change. Run: ``python benchmarks/bench_citation_grammar.py``; writes
``benchmarks/results/citation_grammar.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r"""
import json, sys, time
family, size = sys.argv[1], int(sys.argv[2])
from murgat.core.citations import find_groups, strip_citations
from murgat.core.text import preprocess, split_sentences

def chain(k):
    return "(" + " and ".join(["a"] * k) + " !)"

if family == "and_chain":
    text = "The man talks " + chain(size) + "."
    fn = lambda: find_groups(text)
elif family == "many_groups":
    variants = [chain(60), "(" + "visual and " * 30 + "audio !)", "(" + "a " * 150 + "0:1)",
                "(visual, 0:01" + ", 0:02" * 50 + " !)", "(" + " & ".join(["audio"] * 50) + ", x)"]
    text = " ".join(f"Claim {i} {variants[i % len(variants)]}." for i in range(size))
    fn = lambda: split_sentences(text)
elif family == "answer_spaces":
    from murgat.core.answers import read_answer
    words = ["option", "answer is", "Answer", "A", "the answer is", "choice", "Answer:"]
    texts = [w + " " * size + "x" for w in words] + [w + " " * size for w in words]
    fn = lambda: [(preprocess(t, 5), read_answer(t, n_options=5)) for t in texts]
    text = "".join(texts)
elif family == "split_long":
    n = size // 40
    parts = [
        " ".join(f"Claim number {i} holds (visual, 0:{i % 60:02d})." for i in range(n // 3)),
        "One sentence " + " ".join(f"(audio, 0:{i % 60:02d})" for i in range(n // 3)) + ".",
        "\n\x0b".join(f"line {i} (visual, 0:01)" for i in range(n // 3)),
    ]
    text = "\n\n".join(parts)
    fn = lambda: split_sentences(text)
elif family == "strip_spaces":
    text = "He waves (visual, 0:01)" + " " * size + "and leaves."
    fn = lambda: strip_citations.__wrapped__(text) if hasattr(strip_citations, "__wrapped__") else strip_citations(text)
else:
    raise SystemExit(f"unknown family {family}")
import gc

def measure():
    t0 = time.perf_counter()
    fn()  # warm (caches of compiled patterns); a slow reader is measured by this one call
    best = time.perf_counter() - t0
    reps = 1
    t_all = time.perf_counter()
    while best < 0.5 and (reps < 4 or (time.perf_counter() - t_all < 0.5 and reps < 50)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        reps += 1
    return best, reps

with_gc, reps = measure()
gc.collect()
gc.disable()
without_gc, _ = measure()
gc.enable()
print(json.dumps({"chars": len(text), "seconds": with_gc, "seconds_no_gc": without_gc, "reps": reps}))
"""

#: sizes per family; the check compares the largest with the smallest in CHECK
SIZES = {
    "and_chain": [8, 12, 14, 16, 18, 30, 60],
    "many_groups": [250, 1000, 4000],
    "answer_spaces": [10_000, 50_000, 200_000],
    "split_long": [250_000, 500_000, 1_000_000, 2_000_000],
    "strip_spaces": [10_000, 50_000, 200_000],
}
QUICK = {
    "and_chain": [8, 12, 14, 30, 60],
    "many_groups": [250, 1000],
    "answer_spaces": [10_000, 50_000],
    "split_long": [250_000, 1_000_000],
    "strip_spaces": [10_000, 50_000],
}
#: sizes the linearity check uses (the smallest are dominated by the fixed cost of a call)
CHECK = {"and_chain": (18, 60), "many_groups": (250, 4000), "answer_spaces": (10_000, 200_000),
         "split_long": (250_000, 2_000_000), "strip_spaces": (10_000, 200_000)}
CHECK_QUICK = {"and_chain": (14, 60), "many_groups": (250, 1000), "answer_spaces": (10_000, 50_000),
               "split_long": (250_000, 1_000_000), "strip_spaces": (10_000, 50_000)}


def run_case(family: str, size: int, code: Path, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, family, str(size)], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=str(code))
    except subprocess.TimeoutExpired:
        return {"size": size, "status": "timeout", "wall_s": round(time.perf_counter() - t0, 1)}
    if proc.returncode != 0:
        return {"size": size, "status": "error", "stderr": proc.stderr[-400:]}
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"size": size, "status": "ok", "chars": doc["chars"], "seconds": round(doc["seconds"], 6),
            "us_per_char": round(1e6 * doc["seconds"] / doc["chars"], 4), "seconds_no_gc": round(doc["seconds_no_gc"], 6),
            "us_per_char_no_gc": round(1e6 * doc["seconds_no_gc"] / doc["chars"], 4), "reps": doc["reps"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout whose murgat is measured (default: this one)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one case may take before it is a timeout")
    ap.add_argument("--max-growth", type=float, default=3.0, help="largest allowed ratio of time per character")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--families", default=",".join(SIZES), help="comma-separated families to run")
    ap.add_argument("--no-check", action="store_true", help="report only (e.g. for the code before a fix)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "citation_grammar.json")
    args = ap.parse_args(argv)
    sizes, check = (QUICK, CHECK_QUICK) if args.quick else (SIZES, CHECK)
    doc: dict = {"code": str(args.code), "families": {}, "max_growth": args.max_growth}
    failed = []
    for family in args.families.split(","):
        rows = []
        for size in sizes[family]:
            row = run_case(family, size, args.code, args.timeout)
            rows.append(row)
            print(f"{family:14s} size {size:>9,}  {row['status']:7s}"
                  + (f"  {row['seconds']:9.4f} s  {row['us_per_char']:8.4f} µs/char  (collector paused: "
                     f"{row['us_per_char_no_gc']:.4f} µs/char)" if row["status"] == "ok" else ""), flush=True)
            if row["status"] == "timeout":
                break  # larger sizes would time out too
        lo, hi = check[family]
        by = {r["size"]: r for r in rows if r["status"] == "ok"}
        growth = growth_gc = None
        if lo in by and hi in by:
            growth = round(by[hi]["us_per_char_no_gc"] / by[lo]["us_per_char_no_gc"], 2)
            growth_gc = round(by[hi]["us_per_char"] / by[lo]["us_per_char"], 2)
        linear = growth is not None and growth <= args.max_growth
        doc["families"][family] = {"rows": rows, "check_sizes": [lo, hi], "growth_per_char": growth,
                                   "growth_per_char_with_gc": growth_gc, "linear": linear}
        print(f"{family:14s} time per character grows {growth if growth is not None else 'n/a'}x "
              f"(with the garbage collector: {growth_gc if growth_gc is not None else 'n/a'}x) "
              f"from size {lo:,} to {hi:,} ({'linear' if linear else 'NOT linear'})", flush=True)
        if not linear:
            failed.append(family)
    doc["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    if failed and not args.no_check:
        print(f"not linear: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
