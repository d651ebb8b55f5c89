"""Cost and memory of one very long response: input tokens and peak RSS grow linearly.

A response of N cited sentences (N = 1k, 4k, 16k) is scored with ``--dry-run`` against an
OpenAI-compatible judge spec (nothing is sent; every prompt is rendered and counted, and
evidence is built). Reported per N: estimated input tokens, tokens per sentence, peak RSS
of the process, wall time. The bounded decomposition context (3 sentences / 1,500 chars,
the default) is compared with the old unbounded one (every earlier sentence) at the sizes
the old one survives. Run: ``python benchmarks/bench_long_response.py``; writes
``benchmarks/results/long_response.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEDIA = HERE.parent / "examples" / "media"

CHILD = """
import json, resource, sys, io, contextlib
from murgat.cli import main
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    code = main(sys.argv[1:])
doc = json.loads(buf.getvalue())
doc["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
doc["code"] = code
print(json.dumps(doc))
"""


def run(n: int, bounded: bool, tmp: Path) -> dict:
    text = " ".join(f"The speaker mentions item number {k} clearly (audio, 0:0{k % 8}-0:0{k % 8 + 1})." for k in range(n))
    inp = tmp / f"r{n}.jsonl"
    inp.write_text(json.dumps({"id": f"long{n}", "media": "friday.mp4", "response": text}) + "\n")
    args = ["score", str(inp), "--media-root", str(MEDIA), "--judge", "openai:bench-model", "-J",
            "base_url=http://127.0.0.1:9/v1", "-J", "api_key=none", "--out", str(tmp / f"out{n}{bounded}"), "--dry-run",
            "--max-response-chars", "100000000"]
    if not bounded:
        args += ["--decompose-context", "1000000", "--decompose-context-chars", "1000000000"]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"sentences": n, "context": "bounded" if bounded else "unbounded", "est_input_tokens": doc["est_input_tokens"],
            "tokens_per_sentence": round(doc["est_input_tokens"] / n, 1), "judge_calls": doc["judge_calls_upper_bound"],
            "peak_rss_mb": round(doc["peak_rss_mb"], 1), "wall_s": round(wall, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,4000,16000")
    ap.add_argument("--unbounded-sizes", default="1000,4000")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for n in [int(x) for x in a.sizes.split(",")]:
            rows.append(run(n, True, tmp))
            print(rows[-1], flush=True)
        for n in [int(x) for x in a.unbounded_sizes.split(",") if x]:
            rows.append(run(n, False, tmp))
            print(rows[-1], flush=True)
    b = [r for r in rows if r["context"] == "bounded"]
    if len(b) >= 2:
        first, last = b[0], b[-1]
        ratio = last["sentences"] / first["sentences"]
        print(f"bounded: {ratio:.0f}x the sentences -> {last['est_input_tokens'] / first['est_input_tokens']:.2f}x the tokens, "
              f"{last['peak_rss_mb'] / first['peak_rss_mb']:.2f}x the peak RSS")
    out = HERE / "results" / "long_response.json"
    out.write_text(json.dumps({"rows": rows, "machine": f"{resource.getpagesize()} B pages; see README"}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
