"""The engine at scale (#21): start-up, a 100,000-item run, and a linear ``generate`` resume.

1. **Start-up with ``--limit``**: a 200,000-line input scored with ``--limit 5``: seconds from
   launch to the first judge request (the stand-in server notes when it arrives). Before the
   engine, the whole file was validated and duplicate ids were checked with ``list.count``.
2. **A big run**: ``--items`` responses (default 100,000; one verifiable uncited sentence each,
   so one judge call per item) against the stand-in server with ``--latency`` (0.2 s), judge and
   item concurrency ``--concurrency`` (256): wall time from launch, the latency bound
   (calls / concurrency × latency), their ratio, and the process's peak RSS.
3. **``generate`` resume**: a folder with N records done and N to do, for N = ``--resume-sizes``
   (1,000 and 4,000): seconds of the resuming run with an instant replay model. Linear
   resume: the time grows about as N (the old code re-read its output per remaining item: N²).

Run: ``python benchmarks/bench_engine.py [--items 100000] [--skip-big]``; writes
``benchmarks/results/engine.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEDIA = HERE.parent / "examples" / "media"
sys.path.insert(0, str(HERE))
from bench_perf import Standin  # noqa: E402


def _env(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "MURGAT_CACHE_DIR": str(tmp / "media-cache"), "OPENAI_API_KEY": "x"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed murgat runs from byte-code caches
    return env


def write_items(path: Path, n: int, cited: bool = False) -> Path:
    with open(path, "w") as f:
        for k in range(n):
            text = f"Speaker {k} says a short line" + (" (audio, 0:01-0:03)." if cited else ".")
            f.write(json.dumps({"id": f"r{k:06d}", "media": "friday.mp4", "response": text}) + "\n")
    return path


def limit_start(tmp: Path, lines: int) -> dict:
    inp = write_items(tmp / "big.jsonl", lines)
    first = tmp / "first.txt"
    srv = Standin(0.0, first=first)
    try:
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-m", "murgat", "score", str(inp), "--limit", "5", "--media-root",
                               str(MEDIA), "--judge", "openai:standin", "-J", f"base_url={srv.url}", "--out",
                               str(tmp / "limit-run"), "--quiet", "--json"], capture_output=True, text=True, env=_env(tmp))
        wall = time.time() - t0
    finally:
        srv.stop()
    if proc.returncode not in (0, 1):
        raise RuntimeError(proc.stderr[-2000:])
    t_first = float(first.read_text().split()[0])
    return {"input_lines": lines, "limit": 5, "first_request_after_s": round(t_first - t0, 3), "wall_s": round(wall, 2),
            "input_mb": round(inp.stat().st_size / 1e6, 1)}


def big_run(tmp: Path, n: int, latency: float, conc: int) -> dict:
    inp = write_items(tmp / f"items-{n}.jsonl", n)
    srv = Standin(latency)
    code = ("import resource, sys, io, contextlib; from murgat.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()): code = main(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    try:
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-c", code, "score", str(inp), "--media-root", str(MEDIA), "--judge",
                               "openai:standin", "-J", f"base_url={srv.url}", "--out", str(tmp / "big-run"),
                               "--concurrency", str(conc), "--item-concurrency", str(conc), "--quiet", "--json"],
                              capture_output=True, text=True, env=_env(tmp))
        wall = time.time() - t0
    finally:
        served = srv.stop()
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    rss = float(proc.stdout.strip().splitlines()[-1])
    stats = json.loads(served.splitlines()[-1]) if served else {}
    calls = stats.get("served", n)
    bound = calls / conc * latency
    return {"items": n, "judge_calls": calls, "latency_s": latency, "concurrency": conc, "wall_s": round(wall, 1),
            "latency_bound_s": round(bound, 1), "ratio_to_bound": round(wall / bound, 3),
            "peak_in_flight": stats.get("peak_in_flight"), "peak_rss_mb": round(rss, 1)}


def generate_resume(tmp: Path, n: int) -> dict:
    d = tmp / f"gen-{n}"
    d.mkdir()
    rows = [{"id": f"q{k:06d}", "media": "friday.mp4", "question": "?", "options": ["a", "b"], "gold": "A"}
            for k in range(2 * n)]
    (d / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cas = d / "c.jsonl"
    cas.write_text(json.dumps({"match": {"task": "generate"}, "output": {"text": "Answer: A"}}) + "\n")
    base = [sys.executable, "-m", "murgat", "generate", str(d / "q.jsonl"), "--model", f"replay:{cas}", "--mode", "base",
            "--media-root", str(MEDIA), "--out", str(d / "out"), "--concurrency", "64", "--json"]
    subprocess.run([*base, "--limit", str(n)], capture_output=True, text=True, env=_env(tmp), check=True)
    t0 = time.perf_counter()
    subprocess.run(base, capture_output=True, text=True, env=_env(tmp), check=True)
    return {"done": n, "to_do": n, "resume_run_s": round(time.perf_counter() - t0, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--resume-sizes", default="1000,4000")
    ap.add_argument("--skip-big", action="store_true")
    args = ap.parse_args()
    out: dict = {}
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        out["limit_start"] = limit_start(tmp, args.lines)
        print(json.dumps(out["limit_start"]), flush=True)
        sizes = [int(x) for x in args.resume_sizes.split(",")]
        out["generate_resume"] = [generate_resume(tmp, n) for n in sizes]
        r = out["generate_resume"]
        out["generate_resume_growth"] = {"size_ratio": sizes[-1] / sizes[0],
                                         "time_ratio": round(r[-1]["resume_run_s"] / r[0]["resume_run_s"], 2)}
        print(json.dumps(out["generate_resume"]), json.dumps(out["generate_resume_growth"]), flush=True)
        if not args.skip_big:
            out["big_run"] = big_run(tmp, args.items, args.latency, args.concurrency)
            print(json.dumps(out["big_run"]), flush=True)
    out["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                      "max_rss_children_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)}
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "engine.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
