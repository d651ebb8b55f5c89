"""`murgat score` throughput: 50 responses on real media, a replay judge that sleeps 300 ms
per call, judge concurrency 1, 8 and 32.

Reports wall time, judge calls per response, the ratio to concurrency 1 and to the lower
bound (calls / concurrency × 0.3 s), and the cache hit rate of a second run over the same
cache. Run: ``python benchmarks/bench_score.py [--n 50] [--delay 0.3] [--levels 1,8,32]``;
writes ``benchmarks/results/score.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEDIA = HERE.parent / "examples" / "media"


def build(tmp: Path, n: int) -> tuple[Path, Path]:
    rows, cas = [], []
    for k in range(n):
        media = "friday.mp4" if k % 2 == 0 else "nasa_13013.mp4"
        s1 = f"Speaker {k} says a short line."
        s2 = f"Person {k} stands near the desk."
        t1 = f"{s1[:-1]} (audio, 0:0{k % 4}-0:0{k % 4 + 2})."
        t2 = f"{s2[:-1]} (visual, 0:0{k % 5}; audio, 0:0{k % 5}-0:0{k % 5 + 1})."
        rows.append({"id": f"r{k:03d}", "media": media, "response": f"{t1} {t2}"})
        for s, t in ((s1, t1), (s2, t2)):
            cas.append({"match": {"task": "verify", "inputs": {"sentence": s}}, "output": {"text": "yes"}})
            cas.append({"match": {"task": "decompose", "inputs": {"sentence": t}}, "output": {"text": json.dumps({"facts": [t]})}})
        cas.append({"match": {"task": "entail", "inputs": {"fact": s1}}, "output": {"text": "yes"}})
        vis, aud = f"visual 0:0{k % 5}", f"audio 0:0{k % 5}-0:0{k % 5 + 1}"
        # same start: segments are ordered by modality, so audio comes first
        for labels, ans in (([aud, vis], "yes"), ([vis], "no"), ([aud], "no")):
            cas.append({"match": {"task": "entail", "inputs": {"fact": s2, "evidence": labels}}, "output": {"text": ans}})
    inp, cpath = tmp / "in.jsonl", tmp / "cassette.jsonl"
    inp.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cpath.write_text("\n".join(json.dumps(c) for c in cas) + "\n")
    return inp, cpath


def score(inp: Path, cas: Path, out: Path, cache: Path, conc: int, delay: float) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(MEDIA), "--judge", f"replay:{cas}",
           "-J", f"delay_s={delay}", "--out", str(out), "--cache", str(cache), "--concurrency", str(conc), "--quiet", "--json"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--delay", type=float, default=0.3)
    ap.add_argument("--levels", default="1,8,32")
    args = ap.parse_args()
    # an installed murgat runs from byte-code caches, which the warm-up run writes unless the
    # shell forbids it: PYTHONDONTWRITEBYTECODE would make every timed run compile ~300 modules
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    rows = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        os.environ.setdefault("MURGAT_CACHE_DIR", str(tmp / "media-cache"))
        inp, cas = build(tmp, args.n)
        score(inp, cas, tmp / "warmup", tmp / "warm.sqlite", 32, 0.0)  # decode media/ASR caches once
        for conc in (int(x) for x in args.levels.split(",")):
            cache = tmp / f"cache-{conc}.sqlite"
            wall, summ = score(inp, cas, tmp / f"run-{conc}", cache, conc, args.delay)
            sent = summ["extra"]["this_invocation"]["sent"]
            wall2, summ2 = score(inp, cas, tmp / f"rerun-{conc}", cache, conc, args.delay)
            req2 = summ2["extra"]["this_invocation"]["requests"]
            rows.append({
                "concurrency": conc, "wall_s": wall, "judge_calls": sent, "calls_per_response": sent / args.n,
                "lower_bound_s": sent / conc * args.delay, "ratio_to_lower_bound": wall / (sent / conc * args.delay),
                "second_run_wall_s": wall2, "second_run_cache_hit_rate": summ2["extra"]["this_invocation"]["cache_hits"] / max(1, req2),
            })
    base = rows[0]["wall_s"]
    for r in rows:
        r["speedup_vs_concurrency_1"] = base / r["wall_s"]
    out = HERE / "results" / "score.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"responses": args.n, "delay_s": args.delay, "rows": rows}, indent=2))
    print(f"{args.n} responses, replay judge sleeping {args.delay * 1000:.0f} ms per call")
    print(f"{'conc':>5} {'wall s':>8} {'calls/resp':>10} {'bound s':>8} {'x bound':>8} {'speed-up':>9} {'2nd-run hits':>13}")
    for r in rows:
        print(f"{r['concurrency']:>5} {r['wall_s']:>8.1f} {r['calls_per_response']:>10.1f} {r['lower_bound_s']:>8.1f} "
              f"{r['ratio_to_lower_bound']:>8.2f} {r['speedup_vs_concurrency_1']:>9.1f} {r['second_run_cache_hit_rate']:>13.0%}")


if __name__ == "__main__":
    main()
