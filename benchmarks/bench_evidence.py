"""Evidence for 100 citations over a 70 s film: decode-once-and-slice vs. one ffmpeg
re-encode per citation (what the authors' public script does), cold and warm.

Run: ``python benchmarks/bench_evidence.py [--n 100] [--media PATH]``. Prints a table and
writes ``benchmarks/results/evidence.json``. Numbers are reported as ratios, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_MEDIA = "tears-of-steel-battle-clip-medium.webm"  # bundled in tests/data/real/media (CC BY 3.0)


def make_citations(n: int, duration: float, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        mod = "visual" if i % 2 == 0 else "audio"
        if rng.random() < 0.4:
            t = rng.uniform(0, duration - 1)
            out.append(f"({mod}, {int(t // 60)}:{t % 60:06.3f})")
        else:
            a = rng.uniform(0, duration - 5)
            b = a + rng.uniform(1, 4)
            out.append(f"({mod}, {int(a // 60)}:{a % 60:06.3f}-{int(b // 60)}:{b % 60:06.3f})")
    return out


def per_citation_reencode(path: str, cites: list, tmp: Path) -> float:
    """Baseline: one ffmpeg process per citation, re-encoding a one-modality clip file."""
    t0 = time.perf_counter()
    for k, c in enumerate(cites):
        start, end = c.start, c.end
        if c.point:
            start, end = (max(0, start - 1), start + 1) if c.modality == "audio" else (start, start + 0.04)
        out = tmp / f"clip{k}.{'mp4' if c.modality == 'visual' else 'wav'}"
        args = ["ffmpeg", "-v", "error", "-y", "-ss", f"{start:.3f}", "-to", f"{end:.3f}", "-i", path]
        if c.modality == "visual":
            args += ["-an", "-c:v", "libx264", "-preset", "ultrafast"]
        else:
            args += ["-vn", "-ac", "1", "-ar", "16000"]
        subprocess.run([*args, str(out)], check=True)
    return time.perf_counter() - t0


def decode_once(path: str, cites: list) -> float:
    from murgat.media.evidence import EvidenceConfig, build_evidence

    t0 = time.perf_counter()
    build_evidence(path, cites, EvidenceConfig(fps=1.0, max_frames=8))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--media", default=None, help=f"a media file (default: the bundled {DEFAULT_MEDIA})")
    args = ap.parse_args()
    if args.media is None:
        sys.path.insert(0, str(HERE))
        from realdata import real_media  # bundled media first; a missing file stops with its name

        args.media = str(real_media(DEFAULT_MEDIA))
    with tempfile.TemporaryDirectory() as td:
        os.environ["MURGAT_CACHE_DIR"] = str(Path(td) / "cache")
        from murgat.core.citations import check_durations, parse_citations
        from murgat.media import audio, frames
        from murgat.media.streams import probe

        info = probe(args.media)
        dur = min(info.video_duration or 0, info.audio_duration or 0)
        cites = check_durations([c for s in make_citations(args.n, dur) for c in parse_citations(s)], info.durations())
        tmp = Path(td) / "clips"
        tmp.mkdir()
        base = per_citation_reencode(args.media, cites, tmp)
        cold = decode_once(args.media, cites)  # decodes audio track and opens the video
        warm_mem = decode_once(args.media, cites)  # readers and track already in memory
        audio.clear_memory_cache()
        frames.clear_readers()
        warm_disk = decode_once(args.media, cites)  # audio from the disk cache, video reopened
    n = len(cites)
    rows = {
        "citations": n,
        "media": Path(args.media).name,
        "per_citation_reencode_s": base,
        "decode_once_cold_s": cold,
        "decode_once_warm_memory_s": warm_mem,
        "decode_once_warm_disk_cache_s": warm_disk,
        "ms_per_citation": {
            "reencode": 1000 * base / n, "cold": 1000 * cold / n,
            "warm_memory": 1000 * warm_mem / n, "warm_disk": 1000 * warm_disk / n,
        },
        "speedup_vs_reencode": {"cold": base / cold, "warm_memory": base / warm_mem, "warm_disk": base / warm_disk},
    }
    out = HERE / "results" / "evidence.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=2))
    print(f"{n} citations on {rows['media']}")
    for k, v in rows["ms_per_citation"].items():
        print(f"  {k:<12} {v:8.1f} ms/citation")
    for k, v in rows["speedup_vs_reencode"].items():
        print(f"  speed-up {k:<12} {v:6.1f}x")


if __name__ == "__main__":
    main()
