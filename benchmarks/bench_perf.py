"""Performance targets of `murgat score` with an OpenAI-compatible judge (a stand-in server).

1. client CPU per judge call (image + audio parts, instant server, this process only);
2. latency floor: N responses at 0.05 s latency and concurrency 64 — wall vs the bound
   max(calls / concurrency × latency, dependent rounds × latency); time to first request;
3. warm rerun: every answer cached — wall time, and whether any media was decoded;
4. peak RSS for 500 vs 10,000 responses;
5. two capacity-limited endpoints vs one (``-J base_url=URL1,URL2``).

Run: ``python benchmarks/bench_perf.py [--quick]``; writes ``benchmarks/results/perf.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MEDIA = HERE.parent / "examples" / "media"
FILES = ["friday.mp4", "nasa_13013.mp4", "bikes.mp4", "flower.webm"]


class Standin:
    def __init__(self, latency: float, capacity: int | None = None, first: Path | None = None) -> None:
        cmd = [sys.executable, str(HERE / "standin_server.py"), "--latency", str(latency)]
        if capacity:
            cmd += ["--capacity", str(capacity)]
        if first:
            cmd += ["--first-file", str(first)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        self.url = f"http://127.0.0.1:{line[1]}/v1"

    def stop(self) -> str:
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=10)
        return err.strip()


def responses(tmp: Path, n: int) -> Path:
    p = tmp / f"r{n}.jsonl"
    with open(p, "w") as f:
        for k in range(n):
            media = FILES[k % len(FILES)]
            text = (f"Speaker {k} says a short line (audio, 0:0{k % 3}-0:0{k % 3 + 2}). "
                    f"Person {k} stands near the desk (visual, 0:0{k % 4}).")
            f.write(json.dumps({"id": f"r{k:05d}", "media": media, "response": text}) + "\n")
    return p


def client_cpu(n_calls: int) -> dict:
    from murgat.judges.openai_compat import OpenAIJudge
    from murgat.judges.types import AudioPart, GenerateConfig, ImagePart, JudgeRequest, TextPart

    srv = Standin(0.0)
    try:
        img = (np.random.default_rng(0).random((256, 256, 3)) * 255).astype(np.uint8)
        aud = np.random.default_rng(1).standard_normal(16000).astype(np.float32) * 0.1
        judge = OpenAIJudge("standin", {"base_url": srv.url, "api_key": "x"})
        cfg = GenerateConfig(concurrency=64)

        async def go() -> tuple[float, float]:
            reqs = [JudgeRequest(parts=[TextPart(f"Claim {i}: a bell rings."), ImagePart(image=img, time=1.0),
                                        AudioPart(samples=aud, start=0.0, end=1.0), TextPart("yes or no?")],
                                 config=cfg, task="entail") for i in range(n_calls)]
            for r in reqs[:8]:
                await judge.generate(r)  # warm the connection pool
            t0, c0 = time.perf_counter(), time.process_time()
            await asyncio.gather(*(judge.generate(r) for r in reqs[8:]))
            return time.perf_counter() - t0, time.process_time() - c0

        wall, cpu = asyncio.run(go())
        n = n_calls - 8
        return {"calls": n, "client_cpu_ms_per_call": round(cpu / n * 1000, 3), "calls_per_s": round(n / wall, 1),
                "errors": judge.stats.errors, "client": judge.options.get("client", "lean")}
    finally:
        srv.stop()


def score(tmp: Path, inp: Path, out: Path, url: str, conc: int, cache_dir: Path, extra: list[str] | None = None) -> dict:
    env = {**os.environ, "MURGAT_CACHE_DIR": str(cache_dir), "OPENAI_API_KEY": "x"}
    cmd = [sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(MEDIA), "--judge", "openai:standin",
           "-J", f"base_url={url}", "--out", str(out), "--concurrency", str(conc), "--item-concurrency", str(conc * 4),
           "--quiet", "--json", *(extra or [])]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.time() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if proc.returncode not in (0, 1):
        raise RuntimeError(proc.stderr[-3000:])
    doc = json.loads(proc.stdout)
    return {"wall_s": round(wall, 2), "started": t0, "summary": doc, "peak_rss_mb_so_far": round(rss, 1)}


def peak_rss(inp: Path, out: Path, url: str, cache_dir: Path) -> float:
    env = {**os.environ, "MURGAT_CACHE_DIR": str(cache_dir), "OPENAI_API_KEY": "x"}
    code = ("import resource, sys; from murgat.cli import main; import io, contextlib\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    args = ["score", str(inp), "--media-root", str(MEDIA), "--judge", "openai:standin", "-J", f"base_url={url}",
            "--out", str(out), "--concurrency", "64", "--item-concurrency", "256", "--quiet", "--json"]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return float(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=500)
    a = ap.parse_args()
    # byte-code caches as an installed murgat has them (see bench_score.py)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    res: dict = {}
    res["client"] = client_cpu(600 if a.quick else 2008)
    print("client:", res["client"], flush=True)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cache = tmp / "mcache"
        inp = responses(tmp, a.n)
        first = tmp / "first.txt"
        srv = Standin(0.05, first=first)
        try:
            cold = score(tmp, inp, tmp / "run", srv.url, 64, cache)
            sent = cold["summary"]["extra"]["this_invocation"]["sent"]
            bound = max(sent / 64 * 0.05, 3 * 0.05)
            t_first = float(first.read_text().split()[0]) - cold["started"] if first.exists() else None
            res["latency_floor"] = {"responses": a.n, "calls": sent, "wall_s": cold["wall_s"], "bound_s": round(bound, 2),
                                    "ratio": round(cold["wall_s"] / bound, 2),
                                    "first_request_after_s": round(t_first, 2) if t_first else None,
                                    "murgat_s": cold["summary"]["murgat_s"]["value"]}
            print("latency floor:", res["latency_floor"], flush=True)
            res["_cold_started"] = cold["started"]
            res["_cold_wall"] = cold["wall_s"]
            warm_cache = tmp / "mcache-warm"
            warm = score(tmp, inp, tmp / "run2", srv.url, 64, warm_cache, ["--cache", str(tmp / "run" / "cache.sqlite")])
            written = [p for p in warm_cache.rglob("*") if p.is_file()] if warm_cache.exists() else []
            # ffprobe answers (namespace "probe") are stream lists, not decoded media
            probes = [p for p in written if p.relative_to(warm_cache).parts[0] == "probe"]
            res["warm_rerun"] = {"responses": a.n, "wall_s": warm["wall_s"],
                                 "sent": warm["summary"]["extra"]["this_invocation"]["sent"],
                                 "media_cache_files_written": len(written) - len(probes), "probe_entries_written": len(probes)}
            print("warm rerun:", res["warm_rerun"], flush=True)
        finally:
            info = srv.stop()
            print("server:", info)
        if not a.quick:
            fast = Standin(0.0)
            try:
                small = peak_rss(responses(tmp, 500), tmp / "m500", fast.url, cache)
                big = peak_rss(responses(tmp, 10_000), tmp / "m10k", fast.url, cache)
            finally:
                fast.stop()
            res["memory"] = {"peak_rss_mb_500": round(small, 1), "peak_rss_mb_10000": round(big, 1),
                             "ratio": round(big / small, 2)}
            print("memory:", res["memory"], flush=True)
        s1, s2 = Standin(0.05, capacity=8), Standin(0.05, capacity=8)
        try:
            inp2 = responses(tmp, 200)
            one = score(tmp, inp2, tmp / "e1", s1.url, 64, cache)
            two = score(tmp, inp2, tmp / "e2", f"{s1.url},{s2.url}", 64, cache)
            res["endpoints"] = {"one_wall_s": one["wall_s"], "two_wall_s": two["wall_s"],
                                "speedup": round(one["wall_s"] / two["wall_s"], 2)}
            print("endpoints:", res["endpoints"], flush=True)
        finally:
            s1.stop()
            s2.stop()
    (HERE / "results" / "perf.json").write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
