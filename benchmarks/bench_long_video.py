"""Long videos: the cost of evidence follows the cited seconds, not the file's length.

Media (made once, never committed; cached in ``$MURGAT_BENCH_CACHE`` or ``~/.cache/murgat-bench``):

* ``long60.mp4`` — 60 minutes of ffmpeg's ``testsrc2`` at 320x180, 10 fps (x264 ultrafast, a
  keyframe every 10 s) with a 44.1 kHz stereo AAC tone whose pitch steps every 3 s;
* ``clip13.mp4`` — the same recipe, 13 seconds (the reference the issue compares with);
* ``score{k}.mp4`` (k = 0..4) — the same picture (stream copy) with five different tones
  (16 kHz mono AAC), so five files with five different digests;
* ``speech60.m4a`` — 60 minutes of espeak-ng speech: a 45-s passage looped, then a final
  passage with words said nowhere else (the citations of the offline-judge run point there).

Measured, each in a fresh process (``cold``: empty media cache; ``warm``: the same cache, a new
process; the file's bytes are in the OS page cache either way — dropping it would need root on a
shared machine):

1. **Evidence** for 1, 10 and 100 citation pairs (a 4-s visual range and a 2-s audio range ten
   seconds later, as in the issue: ``(visual, 35:00-35:04; audio, 35:10-35:12)``) spread over the
   file: seconds inside the process (probe, digest, decoding, JPEG/WAV encoding of every part) and
   the whole process, and peak RSS of the process (and of its ffmpeg children), on the 60-minute
   file against the 13-s clip. ``--before REF`` also runs the one-pair case with the code of
   ``REF`` (default c23eead, before this work) from a ``git archive`` copy.
2. **A 30-minute audio and a 30-minute visual citation**: what is sent and the notes.
3. **``murgat score``**: 50 responses (3 cited sentences each) over the five one-hour files at
   ``--concurrency 16`` against the stand-in judge (``benchmarks/standin_server.py``): wall time
   and peak RSS; and the one-pair case of 1. through the command path (``murgat score`` of one
   response, cold, on the hour against the clip: process wall time and peak RSS).
4. **The offline judge** on claims cited at the end of the hour of speech: windowed ASR
   (``murgat.media.asr.transcript_source``) and sound tags — wall, RSS, seconds of audio heard by ASR.

Run: ``python benchmarks/bench_long_video.py [--skip-score] [--skip-embedded] [--before REF|none]``;
writes ``benchmarks/results/long_video.json``. Figures are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = Path(os.environ.get("MURGAT_BENCH_CACHE", Path.home() / ".cache" / "murgat-bench"))
sys.path.insert(0, str(HERE))

TONE = "0.3*sin(2*PI*(300+40*mod(floor(t/3),12)+{shift})*t)"


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", *args], check=True)


def _done(path: Path) -> bool:
    return path.exists() and path.with_suffix(path.suffix + ".ok").exists()


def _mark(path: Path) -> Path:
    path.with_suffix(path.suffix + ".ok").write_text("ok")
    return path


def picture(seconds: int) -> Path:
    """The test pattern alone (encoded once per length; every file of that length copies it)."""
    out = CACHE / f"picture{seconds}.mp4"
    if not _done(out):
        _ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x180:rate=10", "-t", str(seconds), "-c:v", "libx264",
                "-preset", "ultrafast", "-g", "100", "-pix_fmt", "yuv420p", "-an", str(out))
        _mark(out)
    return out


def video(name: str, seconds: int, shift: int = 0, rate: int = 44100, channels: int = 2, kbps: int = 64) -> Path:
    out = CACHE / name
    if not _done(out):
        _ffmpeg("-i", str(picture(seconds)), "-f", "lavfi", "-i", f"aevalsrc='{TONE.format(shift=shift)}':s={rate}",
                "-map", "0:v", "-map", "1:a", "-t", str(seconds), "-c:v", "copy", "-c:a", "aac", "-b:a", f"{kbps}k",
                "-ac", str(channels), "-movflags", "+faststart", str(out))
        _mark(out)
    return out


LOOP_TEXT = ("This is the long recording of the planning meeting. The weather is calm and the river is quiet. "
             "The committee discussed the budget for the library and the new bicycle lanes. Several members asked "
             "about the schedule for the bridge repairs. The chair thanked everyone for coming.")
FINAL_TEXT = ("Here is the last announcement of the day. The secret code word is pineapple. "
              "I repeat, the code word is pineapple. The night train leaves from platform nine.")


def speech(seconds: int = 3600) -> tuple[Path, float, float]:
    """An hour of speech, the time its last passage starts and that passage's length (seconds)."""
    out = CACHE / "speech60.m4a"
    meta = CACHE / "speech60.json"
    if not (_done(out) and meta.exists()):
        with tempfile.TemporaryDirectory() as td:
            loop, final = Path(td) / "loop.wav", Path(td) / "final.wav"
            subprocess.run(["espeak-ng", "-s", "160", "-w", str(loop), LOOP_TEXT], check=True)
            subprocess.run(["espeak-ng", "-s", "150", "-w", str(final), FINAL_TEXT], check=True)
            final_s = float(json.loads(subprocess.run(
                ["ffprobe", "-v", "error", "-print_format", "json", "-show_format", str(final)],
                capture_output=True, text=True, check=True).stdout)["format"]["duration"])
            start = seconds - final_s - 2.0
            _ffmpeg("-stream_loop", "-1", "-t", f"{start:.3f}", "-i", str(loop), "-i", str(final), "-filter_complex",
                    "[0:a]aresample=16000,aformat=channel_layouts=mono[a];[1:a]aresample=16000,aformat=channel_layouts=mono[b];"
                    "[a][b]concat=n=2:v=0:a=1[o]", "-map", "[o]", "-c:a", "aac", "-b:a", "32k", str(out))
        meta.write_text(json.dumps({"final_start": start, "final_s": final_s}))
        _mark(out)
    doc = json.loads(meta.read_text())
    return out, float(doc["final_start"]), float(doc["final_s"])


# ----- evidence in a fresh process -----

CHILD = r"""
import json, resource, sys, time
t_start = time.perf_counter()
args = json.loads(sys.argv[1])
from murgat.media.evidence import EvidenceConfig, build_evidence
from murgat.media.streams import probe
from murgat.core.citations import check_durations, parse_citations
from murgat.judges.evidence import evidence_parts
from murgat.judges.types import AudioPart, ImagePart, VideoPart
t0 = time.perf_counter()
info = probe(args["media"])
cites = check_durations([c for s in args["cites"] for c in parse_citations(s)], info.durations())
ev = build_evidence(args["media"], cites, EvidenceConfig())
parts = evidence_parts(ev, False)
nbytes = 0
for p in parts:  # what a provider sends: every frame as JPEG, every audio piece as WAV
    if isinstance(p, AudioPart):
        nbytes += len(p.wav())
    elif isinstance(p, ImagePart):
        nbytes += len(p.encoded())
    elif isinstance(p, VideoPart):
        nbytes += sum(len(ImagePart(image=f.image).encoded()) for f in p.frames)
t1 = time.perf_counter()
notes = [n.text for n in getattr(ev, "notes", [])]
print(json.dumps({"evidence_s": t1 - t0, "import_s": t0 - t_start, "segments": len(ev.segments),
                  "available": sum(s.available for s in ev.segments), "request_bytes": nbytes,
                  "audio_s_sent": sum(len(s.audio) / s.sr for s in ev.segments if s.audio is not None),
                  "frames_sent": sum(len(s.frames) for s in ev.segments), "notes": notes,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "children_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def pairs(n: int, duration: float, seed: int = 0) -> list[str]:
    """``n`` citation pairs spread evenly (with a little jitter) over the file."""
    rng = random.Random(seed)
    span = max(0.0, duration - 20.0)
    out = []
    for k in range(n):
        t = span * (k + rng.uniform(0.1, 0.9)) / n if n > 1 else min(span, 2100.0)
        a = round(t, 1)
        out.append(f"(visual, {_ts(a)}-{_ts(a + 4)}; audio, {_ts(a + 10 if duration > 20 else a + 1)}-"
                   f"{_ts(a + 12 if duration > 20 else a + 3)})")
    return out


def _ts(t: float) -> str:
    h, rem = divmod(t, 3600)
    m, s = divmod(rem, 60)
    return f"{int(h)}:{int(m):02d}:{s:04.1f}" if h else f"{int(m)}:{s:04.1f}"


def evidence_run(media: Path, cites: list[str], cache: Path, code_root: Path | None = None) -> dict[str, Any]:
    env = {**os.environ, "MURGAT_CACHE_DIR": str(cache), "MURGAT_CACHE_MAX_BYTES": str(50 * 1024**3)}
    if code_root is not None:
        env["PYTHONPATH"] = str(code_root)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps({"media": str(media), "cites": cites})],
                          capture_output=True, text=True, env=env, cwd=str(code_root or ROOT))
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row["process_s"] = wall
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}


def repeated(media: Path, cites: list[str], repeat: int, code_root: Path | None = None) -> tuple[dict, dict]:
    """Cold (fresh cache) then warm runs, ``repeat`` times: the median of each time, the largest RSS
    (this machine's two cores are shared, so single timings are noisy)."""
    colds, warms = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as td:
            cache = Path(td) / "cache"
            colds.append(evidence_run(media, cites, cache, code_root))
            warms.append(evidence_run(media, cites, cache, code_root))
    return _summarise(colds), _summarise(warms)


def _summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(rows[-1])
    for k in ("evidence_s", "process_s", "import_s"):
        vals = sorted(r[k] for r in rows)
        out[k] = vals[len(vals) // 2]
        out[f"{k}_all"] = [r[k] for r in rows]
    for k in ("rss_mb", "children_rss_mb"):
        out[k] = max(r[k] for r in rows)
    return out


def evidence_table(long: Path, clip: Path, counts: list[int], before: Path | None, repeat: int = 3) -> dict[str, Any]:
    from murgat.media.streams import probe

    out: dict[str, Any] = {"repeat": repeat}
    for label, media in (("60 min", long), ("13 s", clip)):
        dur = float(probe(media).duration or 0.0)
        for n in counts:
            cold, warm = repeated(media, pairs(n, dur), repeat if n == 1 else 1)
            out[f"{label}, {n} pairs"] = {"cold": cold, "warm": warm}
            print(f"{label:>7} {n:>4} pairs: cold {cold['evidence_s']:6.2f} s in process ({cold['process_s']:5.2f} s "
                  f"process), {cold['rss_mb']:6.0f} MB; warm {warm['evidence_s']:6.2f} s, {warm['rss_mb']:6.0f} MB",
                  flush=True)
        if before is not None:
            b_cold, b_warm = repeated(media, pairs(1, dur), 1, before)
            out[f"{label}, 1 pair, before"] = {"cold": b_cold, "warm": b_warm}
            print(f"{label:>7}    1 pair BEFORE: cold {b_cold['evidence_s']:6.2f} s ({b_cold['process_s']:5.2f} s "
                  f"process), {b_cold['rss_mb']:6.0f} MB; warm {b_warm['evidence_s']:6.2f} s, {b_warm['rss_mb']:6.0f} MB",
                  flush=True)
    one_long, one_clip = out["60 min, 1 pairs"]["cold"], out["13 s, 1 pairs"]["cold"]
    bound = 1.5 * one_clip["evidence_s"] + 1.0
    out["must_hold_one_pair"] = {
        "long_cold_evidence_s": one_long["evidence_s"], "clip_cold_evidence_s": one_clip["evidence_s"],
        "bound_s (1.5 x clip + 1 s)": round(bound, 3), "within": one_long["evidence_s"] <= bound,
        "long_cold_process_s": one_long["process_s"], "clip_cold_process_s": one_clip["process_s"],
        "process_within (1.5 x clip + 1 s)": one_long["process_s"] <= 1.5 * one_clip["process_s"] + 1.0,
        "long_peak_rss_mb": one_long["rss_mb"], "rss_under_300_mb": one_long["rss_mb"] < 300}
    return out


def long_citations(long: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as td:
        row = evidence_run(long, ["(audio, 10:00-40:00)", "(visual, 10:00-40:00)"], Path(td) / "cache")
    print("30-minute citations:", json.dumps(row["notes"], ensure_ascii=False), flush=True)
    return row


def before_tree(ref: str) -> Path | None:
    if ref == "none":
        return None
    dest = Path(tempfile.mkdtemp(prefix="murgat-before-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


# ----- murgat score over five one-hour files -----

RSS_WRAPPER = ("import resource, sys, io, contextlib; from murgat.cli import main\n"
               "with contextlib.redirect_stdout(io.StringIO()): code = main(sys.argv[1:])\n"
               "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "
               "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, code)")


def score_run(videos: list[Path], n: int = 50, conc: int = 16, latency: float = 0.05) -> dict[str, Any]:
    from bench_perf import Standin

    from murgat.media.streams import probe

    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        inp = tmp / "responses.jsonl"
        with open(inp, "w") as f:
            for k in range(n):
                v = videos[k % len(videos)]
                dur = float(probe(v).duration or 0.0) - 20
                a, b, c = (rng.uniform(0, dur) for _ in range(3))
                text = (f"A test pattern with colour bars is on screen (visual, {_ts(a)}-{_ts(a + 4)}). "
                        f"A steady tone is heard (audio, {_ts(b)}-{_ts(b + 2)}). "
                        f"The picture shows a moving circle (visual, {_ts(c)}).")
                f.write(json.dumps({"id": f"r{k:03d}", "media": v.name, "response": text}) + "\n")
        srv = Standin(latency)
        env = {**os.environ, "MURGAT_CACHE_DIR": str(tmp / "media-cache"), "OPENAI_API_KEY": "x"}
        try:
            t0 = time.time()
            proc = subprocess.run([sys.executable, "-c", RSS_WRAPPER, "score", str(inp), "--media-root",
                                   str(videos[0].parent), "--judge", "openai:standin", "-J", f"base_url={srv.url}",
                                   "--out", str(tmp / "run"), "--cache", str(tmp / "judge.sqlite"), "--concurrency",
                                   str(conc), "--item-concurrency", str(conc), "--quiet", "--json"],
                                  capture_output=True, text=True, env=env, cwd=str(ROOT))
            wall = time.time() - t0
        finally:
            served = srv.stop()
        if proc.returncode not in (0, 1):
            raise RuntimeError(proc.stderr[-3000:])
        rss, child_rss, code = proc.stdout.strip().splitlines()[-1].split()
        summary = json.loads((tmp / "run" / "summary.json").read_text()) if (tmp / "run" / "summary.json").exists() else {}
        records = [json.loads(x) for x in (tmp / "run" / "results.jsonl").read_text().splitlines() if x.strip()] \
            if (tmp / "run" / "results.jsonl").exists() else []
    stats = json.loads(served.splitlines()[-1]) if served else {}
    errors = sum(1 for r in records if r.get("error"))
    row = {"responses": n, "videos": len(videos), "video_minutes": 60, "concurrency": conc, "wall_s": round(wall, 1),
           "peak_rss_mb": round(float(rss), 1), "peak_child_rss_mb": round(float(child_rss), 1), "exit_code": int(code),
           "judge_calls": stats.get("served"), "records": len(records), "error_records": errors,
           "murgat_s": summary.get("murgat_s", summary.get("mean")), "rss_under_2_gb": float(rss) < 2048}
    print("score:", json.dumps(row), flush=True)
    return row


def command_one_pair(long: Path, clip: Path, repeat: int = 3, latency: float = 0.05) -> dict[str, Any]:
    """The one-pair case through the command path: ``murgat score`` of one response citing one 4-s
    visual range and one 2-s audio range (5 judge questions) on the 60-minute file and on the 13-s
    clip, cold (empty media and judge caches, a fresh process): the whole process's wall time and
    peak RSS. The judge's latency and murgat's start-up are the same on both, so the difference is
    the evidence (with the run's evidence limits, notes and keys as a run makes them)."""
    from bench_perf import Standin

    from murgat.media.streams import probe

    rows: dict[str, Any] = {}
    srv = Standin(latency)
    try:
        for label, media in (("60 min", long), ("13 s", clip)):
            (pair,) = pairs(1, float(probe(media).duration or 0.0))
            runs = []
            for _ in range(repeat):
                with tempfile.TemporaryDirectory() as td:
                    tmp = Path(td)
                    inp = tmp / "one.jsonl"
                    inp.write_text(json.dumps({"id": "one", "media": media.name,
                                               "response": f"A test pattern with a steady tone is shown {pair}."}) + "\n")
                    env = {**os.environ, "MURGAT_CACHE_DIR": str(tmp / "media-cache"), "OPENAI_API_KEY": "x"}
                    t0 = time.perf_counter()
                    proc = subprocess.run([sys.executable, "-c", RSS_WRAPPER, "score", str(inp), "--media-root",
                                           str(media.parent), "--judge", "openai:standin", "-J", f"base_url={srv.url}",
                                           "--out", str(tmp / "run"), "--cache", str(tmp / "judge.sqlite"), "--quiet",
                                           "--json"], capture_output=True, text=True, env=env, cwd=str(ROOT))
                    wall = time.perf_counter() - t0
                    if proc.returncode not in (0, 1):
                        raise RuntimeError(proc.stderr[-3000:])
                    rss, child_rss, code = proc.stdout.strip().splitlines()[-1].split()
                    rec = json.loads((tmp / "run" / "results.jsonl").read_text().splitlines()[-1])
                    runs.append({"process_s": wall, "rss_mb": float(rss), "children_rss_mb": float(child_rss),
                                 "exit_code": int(code), "judge_calls": rec["judge_calls"],
                                 "evidence_notes": rec.get("evidence_notes", {})})
            times = sorted(r["process_s"] for r in runs)
            rows[label] = {"process_s": round(times[len(times) // 2], 3), "process_s_all": [round(t, 3) for t in times],
                           "rss_mb": round(max(r["rss_mb"] for r in runs), 1),
                           "children_rss_mb": round(max(r["children_rss_mb"] for r in runs), 1),
                           "judge_calls": runs[-1]["judge_calls"], "evidence_notes": runs[-1]["evidence_notes"],
                           "exit_code": runs[-1]["exit_code"]}
    finally:
        srv.stop()
    bound = 1.5 * rows["13 s"]["process_s"] + 1.0
    rows["must_hold"] = {"long_process_s": rows["60 min"]["process_s"], "clip_process_s": rows["13 s"]["process_s"],
                         "bound_s (1.5 x clip + 1 s)": round(bound, 3), "within": rows["60 min"]["process_s"] <= bound,
                         "long_peak_rss_mb": rows["60 min"]["rss_mb"], "rss_under_300_mb": rows["60 min"]["rss_mb"] < 300}
    print("score, one pair (command path):", json.dumps(rows), flush=True)
    return rows


# ----- the offline judge at the end of an hour of speech -----

EMBEDDED_CHILD = r"""
import asyncio, json, resource, sys, time
args = json.loads(sys.argv[1])
t0 = time.perf_counter()
from murgat.media.asr import ChunkedTranscript, transcript_source
from murgat.media.errors import ToolMissing
from murgat.media.evidence import EvidenceConfig, build_evidence
from murgat.media.sounds import sound_source
from murgat.core.citations import parse_citations, strip_citations
from murgat.judges import make_judge
from murgat.judges.evidence import evidence_parts
from murgat.judges.parsing import parse_verdict
from murgat.judges.types import JudgeRequest, TextPart
judge = make_judge("embedded", {})
media = args["media"]
tr = transcript_source(media)
try:
    tags = sound_source(media)
except ToolMissing:
    tags = None
rows = []
for fact in args["claims"]:
    t = time.perf_counter()
    cites = [c for c in parse_citations(fact) if c.valid]
    ev = build_evidence(media, cites, EvidenceConfig(text=True), transcript=tr, sounds=tags)
    claim = strip_citations(fact)
    req = JudgeRequest(parts=[TextPart(claim), *evidence_parts(ev, True)], task="entail",
                       inputs={"fact": claim, "evidence": [s.label for s in ev.segments]})
    out = asyncio.run(judge.generate(req))
    rows.append({"claim": fact, "verdict": str(parse_verdict(out.text)[0]), "s": round(time.perf_counter() - t, 2),
                 "heard": [s.transcript for s in ev.segments]})
lazy = isinstance(tr, ChunkedTranscript)
print(json.dumps({"claims": rows, "wall_s": time.perf_counter() - t0, "windowed": lazy,
                  "asr_chunks": tr.chunks_transcribed if lazy else None,
                  "asr_seconds_heard": tr.seconds_heard if lazy else None,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def embedded_run(path: Path, final_start: float, final_s: float) -> dict[str, Any]:
    a, z = final_start, final_start + final_s
    claims = [f"The speaker says the code word is pineapple (audio, {_ts(a + 2)}-{_ts(a + 8)}).",
              f"The speaker says the code word is banana (audio, {_ts(a + 2)}-{_ts(a + 8)}).",
              f"The night train leaves from platform nine (audio, {_ts(z - 5)}-{_ts(z)})."]
    with tempfile.TemporaryDirectory() as td:
        env = {**os.environ, "MURGAT_CACHE_DIR": str(Path(td) / "cache")}
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", EMBEDDED_CHILD, json.dumps({"media": str(path), "claims": claims})],
                              capture_output=True, text=True, env=env, cwd=str(ROOT))
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row["process_s"] = round(wall, 2)
    row["wall_s"] = round(row["wall_s"], 2)
    row["rss_mb"] = round(row["rss_mb"], 1)
    if row.get("asr_seconds_heard"):
        row["file_s"] = 3600
        row["share_of_file_heard"] = round(row["asr_seconds_heard"] / 3600, 4)
    print("embedded:", json.dumps(row, ensure_ascii=False), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts", default="1,10,100")
    ap.add_argument("--before", default="c23eead", help="git ref of the code to compare with, or 'none'")
    ap.add_argument("--skip-score", action="store_true")
    ap.add_argument("--skip-evidence", action="store_true", help="skip the library-level evidence table")
    ap.add_argument("--skip-embedded", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="cold/warm repetitions of the one-pair case (median)")
    args = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    long = video("long60.mp4", 3600)
    clip = video("clip13.mp4", 13)
    print(f"media ready in {time.time() - t0:.0f} s: {long} ({long.stat().st_size / 1e6:.0f} MB)", flush=True)
    before = before_tree(args.before)
    out: dict[str, Any] = {"media": {"long60.mp4_mb": round(long.stat().st_size / 1e6, 1),
                                     "clip13.mp4_mb": round(clip.stat().st_size / 1e6, 2)}}
    try:
        if not args.skip_evidence:
            out["evidence"] = evidence_table(long, clip, [int(x) for x in args.counts.split(",")], before, args.repeat)
            print(json.dumps(out["evidence"]["must_hold_one_pair"]), flush=True)
    finally:
        if before is not None:
            shutil.rmtree(before, ignore_errors=True)
    if not args.skip_evidence:
        out["thirty_minute_citations"] = long_citations(long)
    out["score_one_pair"] = command_one_pair(long, clip, args.repeat)
    if not args.skip_score:
        videos = [video(f"score{k}.mp4", 3600, shift=7 * (k + 1), rate=16000, channels=1, kbps=24) for k in range(5)]
        out["score"] = score_run(videos)
    if not args.skip_embedded:
        sp, final_start, final_s = speech()
        out["embedded"] = embedded_run(sp, final_start, final_s)
    out["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                      "max_rss_children_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)}
    (HERE / "results").mkdir(exist_ok=True)
    path = HERE / "results" / "long_video.json"
    # a partial rerun (--skip-…) updates its own sections and keeps the others' last figures
    doc = json.loads(path.read_text()) if path.exists() else {}
    for k, v in out.items():  # one level down too: a rerun of some counts keeps the others' rows
        doc[k] = {**doc[k], **v} if isinstance(v, dict) and isinstance(doc.get(k), dict) else v
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
