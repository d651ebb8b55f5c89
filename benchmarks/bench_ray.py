"""Media-bound scoring on Ray: throughput with 1 and 2 Ray workers vs the local executor, and
the driver's own cost per item.

Work: the offline ``embedded`` judge (real ASR, OCR and sound tagging) on several real files,
cold media caches (a fresh ``MURGAT_CACHE_DIR`` per run), so the time goes to decoding,
transcription, OCR and tagging — the work Ray spreads. Each run is a fresh ``murgat score``
in this process (the driver), so ``time.process_time()`` is the driver's CPU (its Ray client
threads included; the workers are other processes).

Configurations: ``local``; ``ray_1_worker`` (a 1-CPU Ray instance); ``ray_2_cpus_auto`` (2 CPUs,
each transcribing task reserving the 2 CPUs its ASR threads use, so one runs at a time);
``ray_2_workers`` (2 CPUs, tasks reserving 1, so two run at once, each with 2 ASR threads).

Run: ``python benchmarks/bench_ray.py [--per-file 3]``; writes ``benchmarks/results/ray.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FILES = {
    "friday.mp4": "She says somebody must have stolen the crown jewels (audio, 0:04-0:06). A woman sits at a desk "
                  "(visual, 0:02).",
    "nasa_13013.mp4": "The narrator says this is the optical and science segment of the Webb (audio, 0:00-0:04). "
                      "A worker stands on an orange lift (visual, 0:05).",
    "jfk.flac": "He says ask not what your country can do for you (audio, 0:03-0:07).",
    "countdown.mp3": "The voice says five (audio, 0:08-0:09). Music plays (audio, 0:04-0:06).",
    "chaplin.mp4": "Music plays (audio, 0:02-0:05). Chaplin stands on a sidewalk (visual, 0:03).",
    "pyannote_sample.wav": "One speaker says she is in New Jersey now (audio, 0:20-0:22).",
}


def inputs(tmp: Path, per_file: int) -> Path:
    p = tmp / "in.jsonl"
    with open(p, "w") as f:
        for name, text in FILES.items():
            for k in range(per_file):
                f.write(json.dumps({"id": f"{name}-{k}", "media": name, "response": f"Item {k}. {text}"}) + "\n")
    return p


def run(inp: Path, out: Path, cache_dir: Path, extra: list[str]) -> dict:
    from murgat.cli import main

    os.environ["MURGAT_CACHE_DIR"] = str(cache_dir)
    t0, c0 = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        sys.path.insert(0, str(HERE))
        from realdata import media_root  # bundled copies first; a missing file stops with its name

        real = media_root(FILES, out.parent / "media")
        code = main(["score", str(inp), "--media-root", str(real), "--judge", "embedded", "--out", str(out),
                     "--quiet", "--json", *extra])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    summary = json.loads((out / "summary.json").read_text())
    return {"exit": code, "wall_s": round(wall, 2), "driver_cpu_s": round(cpu, 2), "items": summary["n_items"],
            "murgat_s": summary["murgat_s"]["value"], "ray": summary["extra"].get("ray")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-file", type=int, default=3)
    a = ap.parse_args()
    res: dict = {"files": list(FILES), "cpus_on_machine": os.cpu_count()}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        inp = inputs(tmp, a.per_file)
        n = len(FILES) * a.per_file
        for name, extra in (("local", []), ("ray_1_worker", ["--executor", "ray", "--ray-cpus", "1"]),
                            ("ray_2_cpus_auto", ["--executor", "ray", "--ray-cpus", "2"]),
                            ("ray_2_workers", ["--executor", "ray", "--ray-cpus", "2", "--ray-task-cpus", "1"])):
            r = run(inp, tmp / name, tmp / f"cache-{name}", [*extra, "--ray-group-size", str(a.per_file)]
                    if extra else [])
            r["items_per_s"] = round(n / r["wall_s"], 2)
            r["driver_cpu_ms_per_item"] = round(r["driver_cpu_s"] / n * 1000, 1)
            res[name] = r
            print(name, r, flush=True)
        # the driver's share without media work: every answer and every transcript cached
        warm = run(inp, tmp / "warm", tmp / "cache-ray_2_workers",
                   ["--executor", "ray", "--ray-cpus", "2", "--cache", str(tmp / "ray_2_workers" / "cache.sqlite")])
        warm["driver_cpu_ms_per_item"] = round(warm["driver_cpu_s"] / n * 1000, 1)
        res["ray_2_workers_warm"] = warm
        print("warm", warm, flush=True)
    res["speedup_2_vs_1_worker"] = round(res["ray_1_worker"]["wall_s"] / res["ray_2_workers"]["wall_s"], 2)
    res["same_murgat_s"] = len({res[k]["murgat_s"] for k in ("local", "ray_1_worker", "ray_2_cpus_auto",
                                                             "ray_2_workers")}) == 1
    (HERE / "results" / "ray.json").write_text(json.dumps(res, indent=2))
    print(json.dumps({k: res[k] for k in ("speedup_2_vs_1_worker", "same_murgat_s")}))


if __name__ == "__main__":
    sys.exit(main())
