"""What the judge probes cost: requests, media sent, bytes and seconds, cold and warm.

Against the tests' stand-in server as an honest perceiving judge (real HTTP, murgat's lean client),
for each way of sending visual ranges, and the embedded judge (real Whisper, OCR, sound tagger).
"cold": a fresh media cache and response cache (the clip is made, the text channels read it);
"warm": the same caches again (every answer from the response cache).

Run: ``python benchmarks/bench_probes.py``. Prints a table and writes ``benchmarks/results/probes.json``.
Seconds depend on the machine; they are reported, never asserted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def _run(spec: str, opts: dict[str, str], cache_file: Path) -> dict[str, Any]:
    from murgat.commands.judge_check.check import entail_config
    from murgat.judges import make_judge
    from murgat.judges.cache import ResponseCache
    from murgat.judging.probes.paths import EntailPath
    from murgat.judging.probes.runner import run_probes
    from murgat.settings.judge_check import JudgeCheckSettings

    cfg = entail_config(JudgeCheckSettings(judge=spec, judge_option=[f"{k}={v}" for k, v in opts.items()]))
    cache = ResponseCache(cache_file)
    judge = make_judge(spec, opts, cache=cache, config=cfg.generate)
    if judge.needs_evidence_text:
        cfg.evidence.text = True

    async def go() -> Any:
        try:
            return await run_probes([EntailPath(judge, cfg, variant=cfg.entail_variant)])
        finally:
            await judge.aclose()

    t0 = time.perf_counter()
    report = asyncio.run(go())
    seconds = time.perf_counter() - t0
    cache.close()
    t = judge.sent_totals
    j = report.judges[0]
    return {"seconds": round(seconds, 2), "passed": j.passed, "failed": j.failed, "abstained": j.abstained,
            "calls": j.calls, "cache_hits": j.cache_hits, "images": t.images, "image_sizes": t.image_sizes,
            "audio_s": t.audio_s, "video_clips": t.video_clips, "video_s": t.video_s, "request_bytes": t.request_bytes}


def main() -> None:
    from standin import StandIn

    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MURGAT_CACHE_DIR"] = str(Path(tmp) / "media")
        with StandIn() as server:
            server.honest = True
            for video in ("frames", "clip"):
                for phase in ("cold", "warm"):
                    rows[f"openai video={video} {phase}"] = _run(
                        "openai:probe-model", {"base_url": server.base_url, "video": video},
                        Path(tmp) / f"openai-{video}.sqlite")
        for phase in ("cold", "warm"):
            rows[f"embedded {phase}"] = _run("embedded", {}, Path(tmp) / "embedded.sqlite")
    print(f"{'run':28} {'s':>6} {'pass':>4} {'fail':>4} {'abst':>4} {'calls':>5} {'hits':>4} {'images':>6} "
          f"{'audio s':>7} {'clips':>5} {'kB':>6}")
    for name, r in rows.items():
        print(f"{name:28} {r['seconds']:6.2f} {r['passed']:4d} {r['failed']:4d} {r['abstained']:4d} {r['calls']:5d} "
              f"{r['cache_hits']:4d} {r['images']:6d} {r['audio_s']:7.1f} {r['video_clips']:5d} "
              f"{r['request_bytes'] / 1000:6.0f}")
    out = HERE / "results" / "probes.json"
    out.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
