"""Grounding metrics for a NExT-GQA-test-sized run: 5,553 questions over 990 videos,
synthetic gold spans and synthetic cited answers (no media, no judge).

Run: ``python benchmarks/bench_grounding.py [--n 5553] [--bootstrap 2000]``. Prints the
time of each phase and writes ``benchmarks/results/grounding.json``. Times are reported,
never asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _t(x: float) -> str:
    return f"{int(x // 60)}:{x % 60:04.1f}"


def synthesize(n: int, n_videos: int, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """Gold lines (murgat gold JSONL) and responses (murgat JSONL)."""
    rng = random.Random(seed)
    durations = [rng.uniform(20, 180) for _ in range(n_videos)]
    gold, responses = [], []
    for i in range(n):
        v = i % n_videos
        dur = durations[v]
        segs = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            a = rng.uniform(0, dur - 6)
            segs.append((round(a, 1), round(min(dur, a + rng.uniform(2, 15)), 1)))
        choices = [f"option {k}" for k in range(5)]
        idx = rng.randrange(5)
        gold.append({"id": f"{v}_{i}", "video": str(v), "duration": round(dur, 2), "fps": 30.0, "need": "any",
                     "answer": {"text": choices[idx], "choices": choices, "index": idx},
                     "evidence": [{"modality": "visual", "start": a, "end": b} for a, b in segs]})
        cites = []
        for _ in range(rng.choice((0, 1, 1, 2, 3, 4))):
            a = rng.uniform(0, dur - 4)
            if rng.random() < 0.3:
                cites.append(f"(visual, {_t(a)})")
            else:
                cites.append(f"(visual, {_t(a)}-{_t(a + rng.uniform(1, 10))})")
        sentences = [f"Step {k} shows something {c}." for k, c in enumerate(cites)] or ["Nothing is cited."]
        letter = "ABCDE"[idx if rng.random() < 0.6 else rng.randrange(5)]
        responses.append({"id": f"{v}_{i}", "media": str(v), "options": choices,
                          "response": " ".join(sentences) + f"\nAnswer: {letter}"})
    return gold, responses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5553, help="questions (NExT-GQA test: 5,553)")
    ap.add_argument("--videos", type=int, default=990, help="videos the questions are spread over")
    ap.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    args = ap.parse_args()

    from murgat.commands.ground.run import GroundSettings, ground
    from murgat.core.gold import load_gold

    gold, responses = synthesize(args.n, args.videos)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
        (t / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))
        t0 = time.perf_counter()
        items = load_gold(t / "gold.jsonl")
        t_gold = time.perf_counter() - t0
        s = GroundSettings(n_resamples=args.bootstrap)
        t0 = time.perf_counter()
        res = ground(t / "r.jsonl", items, t / "run", s)
        t_ground = time.perf_counter() - t0
        t0 = time.perf_counter()
        clustered = ground(t / "r.jsonl", items, None, GroundSettings(n_resamples=args.bootstrap, cluster_by_video=True))
        t_clustered = time.perf_counter() - t0
    ng = res.summary.nextgqa
    out = {
        "n_questions": args.n, "n_videos": args.videos, "bootstrap": args.bootstrap,
        "seconds_load_gold": round(t_gold, 3),
        "seconds_ground_with_run_folder": round(t_ground, 3),
        "seconds_ground_clustered_no_folder": round(t_clustered, 3),
        "responses_per_second": round(args.n / t_ground, 1),
        "nextgqa_n": ng["n"], "nextgqa_without_visual_citation": ng["n_without_visual_citation"],
        "nextgqa_miop": round(ng["miop"]["value"], 2), "nextgqa_acc_gqa": round(ng["acc_gqa"]["value"], 2),
        "clustered_miop_ci": [round(clustered.summary.nextgqa["miop"]["ci_low"], 2),
                              round(clustered.summary.nextgqa["miop"]["ci_high"], 2)],
    }
    for k, v in out.items():
        print(f"{k:36s} {v}")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "grounding.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
