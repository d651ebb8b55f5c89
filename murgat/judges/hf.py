"""``hf``: a vision(-audio) language model run in-process with transformers (extra ``local``).

``hf:PATH`` loads from a local folder (or a hub id already in the local HF cache; nothing
is downloaded unless ``-J allow_download=true``). Media reach the model as arrays — frames
as uint8 RGB, audio as 16 kHz float32 — never re-encoded to files.

For the Qwen2-VL family (Qwen2-VL, Qwen2.5-VL, the Qwen2.5-Omni thinker) murgat builds
the model inputs itself from the tokenizer, the chat template and the pixel settings in
``preprocessor_config.json``: images are resized and normalised as one-frame clips, a video range
as a clip of frames cut into the model's spatio-temporal patches (``temporal_patch_size``
frames per patch, ``merge_size``² patches per token). This needs no torchvision, which
transformers' own video processors require and which cannot be installed beside the CPU
torch build used here. Other models go through their processor's chat template with
frames as images. Requests are batched (``-J batch_size=4``) and thinking text is removed
from answers. Effort maps to the chat template's ``enable_thinking``.

Options: ``device`` (cpu|cuda|auto), ``dtype`` (float32|bfloat16|float16), ``batch_size``,
``max_pixels`` (per frame), ``allow_download``.
"""

from __future__ import annotations

import asyncio
import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from murgat.core.text import strip_thinking
from murgat.judges.base import Judge, JudgeError, RawAnswer
from murgat.judges.effort import HF_THINKING, check
from murgat.judges.types import AudioPart, EvidenceTextPart, ImagePart, JudgeRequest, MediaPart, TextPart, Usage, VideoPart

QWEN_VL_TYPES = ("qwen2_vl", "qwen2_5_vl", "qwen2_5_omni", "qwen2_5_omni_thinker", "qwen3_vl")


def smart_size(h: int, w: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """Height and width rounded to ``factor`` with the pixel count kept within bounds."""
    hb = max(factor, round(h / factor) * factor)
    wb = max(factor, round(w / factor) * factor)
    if hb * wb > max_pixels:
        beta = math.sqrt(h * w / max_pixels)
        hb = max(factor, math.floor(h / beta / factor) * factor)
        wb = max(factor, math.floor(w / beta / factor) * factor)
    elif hb * wb < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        hb = math.ceil(h * beta / factor) * factor
        wb = math.ceil(w * beta / factor) * factor
    return hb, wb


def patchify_clip(frames: np.ndarray, patch: int, temporal: int, merge: int) -> tuple[np.ndarray, tuple[int, int, int]]:
    """Cut normalised frames ``(T, C, H, W)`` into flattened spatio-temporal patches.

    T is padded to a multiple of ``temporal`` by repeating the last frame. Patches are
    ordered so that each ``merge × merge`` block of neighbours is contiguous, which is
    the order the Qwen2-VL vision tower merges them in. Returns ``(patches, (t, h, w))``.
    """
    t, c, h, w = frames.shape
    if t % temporal:
        frames = np.concatenate([frames, np.repeat(frames[-1:], temporal - t % temporal, axis=0)])
        t = frames.shape[0]
    gt, gh, gw = t // temporal, h // patch, w // patch
    x = frames.reshape(gt, temporal, c, gh // merge, merge, patch, gw // merge, merge, patch)
    x = x.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return x.reshape(gt * gh * gw, c * temporal * patch * patch), (gt, gh, gw)


@dataclass
class QwenInputs:
    """What murgat needs to feed a Qwen2-VL-family model: its tokenizer, chat template and
    the pixel settings of ``preprocessor_config.json`` (patch, merge and temporal sizes,
    normalisation, pixel bounds). Loaded without transformers' processor classes, whose
    video half needs torchvision."""

    tokenizer: Any
    chat_template: str | None
    patch_size: int
    merge_size: int
    temporal_patch_size: int
    image_mean: list[float]
    image_std: list[float]
    min_pixels: int
    max_pixels: int
    image_token: str = "<|image_pad|>"
    video_token: str = "<|video_pad|>"

    @classmethod
    def load(cls, path: str, local_only: bool = True) -> QwenInputs:
        import json
        from pathlib import Path

        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(path, local_files_only=local_only)
        folder = Path(path)
        pre: dict[str, Any] = {}
        for name in ("preprocessor_config.json", "processor_config.json"):
            f = folder / name
            if f.exists():
                data = json.loads(f.read_text())
                pre.update(data.get("image_processor", data))
        template = None
        if (folder / "chat_template.jinja").exists():
            template = (folder / "chat_template.jinja").read_text()
        elif (folder / "chat_template.json").exists():
            template = json.loads((folder / "chat_template.json").read_text()).get("chat_template")
        size = pre.get("size") or {}
        return cls(
            tokenizer=tok, chat_template=template or tok.chat_template,
            patch_size=int(pre.get("patch_size", 14)), merge_size=int(pre.get("merge_size", 2)),
            temporal_patch_size=int(pre.get("temporal_patch_size", 2)),
            image_mean=list(pre.get("image_mean", [0.48145466, 0.4578275, 0.40821073])),
            image_std=list(pre.get("image_std", [0.26862954, 0.26130258, 0.27577711])),
            min_pixels=int(pre.get("min_pixels") or size.get("shortest_edge") or 56 * 56),
            max_pixels=int(pre.get("max_pixels") or size.get("longest_edge") or 28 * 28 * 1280),
        )

    def apply_chat_template(self, msgs: list[dict[str, Any]], **kw: Any) -> str:
        text: str = self.tokenizer.apply_chat_template(msgs, chat_template=self.chat_template, **kw)
        return text


@dataclass
class _Job:
    req: JudgeRequest
    future: asyncio.Future[RawAnswer]


class HFJudge(Judge):
    provider = "hf"
    answer_options = ("max_pixels", "dtype")
    #: a hub id is resolved against this mirror (a local path ignores it)
    endpoint_env = ("HF_ENDPOINT",)

    def __init__(self, model: str, options: dict[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(model, options, **kw)
        if not model:
            raise ValueError("hf: give a local model folder, e.g. hf:/models/Qwen2.5-VL-3B-Instruct")
        self.batch_size = int(self.options.get("batch_size", 4))
        self.max_pixels = int(self.options.get("max_pixels", 256 * 28 * 28))
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None
        self._queue: list[_Job] = []
        self._worker: asyncio.Task[None] | None = None

    # ----- loading -----
    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                try:
                    import torch
                    from transformers import AutoModelForImageTextToText, AutoProcessor
                except ImportError as exc:
                    raise JudgeError("hf: pip install 'murgat[local]' (torch + transformers)", retryable=False) from exc
                local_only = str(self.options.get("allow_download", "false")).lower() not in ("1", "true", "yes")
                dtype = getattr(torch, str(self.options.get("dtype", "float32")))
                device = str(self.options.get("device", "cpu"))
                if device == "auto":
                    device = "cuda" if torch.cuda.is_available() else "cpu"
                model: Any = AutoModelForImageTextToText.from_pretrained(self.model, local_files_only=local_only, dtype=dtype)
                model.to(device).eval()
                if getattr(model.config, "model_type", "") in QWEN_VL_TYPES:
                    processor: Any = QwenInputs.load(self.model, local_only)
                else:
                    processor = AutoProcessor.from_pretrained(self.model, local_files_only=local_only)
                self._loaded = (processor, model)
            return self._loaded

    # ----- batching -----
    async def _call(self, req: JudgeRequest) -> RawAnswer:
        fut: asyncio.Future[RawAnswer] = asyncio.get_running_loop().create_future()
        self._queue.append(_Job(req, fut))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await fut

    async def _drain(self) -> None:
        await asyncio.sleep(0.005)  # let concurrent requests join the batch
        while self._queue:
            batch, self._queue = self._queue[: self.batch_size], self._queue[self.batch_size :]
            try:
                answers = await asyncio.to_thread(self._run_batch, [j.req for j in batch])
            except Exception as exc:
                for j in batch:
                    if not j.future.done():
                        j.future.set_exception(exc)
                continue
            for j, a in zip(batch, answers, strict=True):
                if not j.future.done():
                    j.future.set_result(a)

    # ----- inputs -----
    def _is_qwen_vl(self, model: Any) -> bool:
        return getattr(model.config, "model_type", "") in QWEN_VL_TYPES

    def _messages(self, req: JudgeRequest) -> tuple[list[dict[str, Any]], list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
        content: list[dict[str, Any]] = []
        images: list[np.ndarray] = []
        videos: list[np.ndarray] = []
        audios: list[np.ndarray] = []
        for p in req.parts:
            if isinstance(p, TextPart):
                content.append({"type": "text", "text": p.text})
            elif isinstance(p, EvidenceTextPart):
                content.append({"type": "text", "text": p.as_text()})
            elif isinstance(p, ImagePart):
                if p.image is None:
                    from io import BytesIO

                    from PIL import Image

                    p.image = np.asarray(Image.open(BytesIO(p.encoded())).convert("RGB"))
                content.append({"type": "image"})
                images.append(p.image)
            elif isinstance(p, VideoPart):
                content.append({"type": "video"})
                videos.append(np.stack([f.image for f in p.frames]))
            elif isinstance(p, MediaPart):
                # the whole file: its frames as one clip; image-text models cannot hear its sound
                frames = p.frames()
                if frames:
                    content.append({"type": "video"})
                    videos.append(np.stack([f.image for f in frames]))
            elif isinstance(p, AudioPart):
                content.append({"type": "audio"})
                audios.append(p.samples)
        msgs: list[dict[str, Any]] = []
        if req.system:
            msgs.append({"role": "system", "content": [{"type": "text", "text": req.system}]})
        msgs.append({"role": "user", "content": content})
        return msgs, images, videos, audios

    def _norm(self, ip: QwenInputs, frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        from PIL import Image

        img = Image.fromarray(frame).resize((size[1], size[0]), Image.Resampling.BICUBIC)
        x = np.asarray(img, dtype=np.float32) / 255.0
        mean = np.asarray(ip.image_mean, dtype=np.float32)
        std = np.asarray(ip.image_std, dtype=np.float32)
        return ((x - mean) / std).transpose(2, 0, 1)

    def _qwen_visual(self, ip: QwenInputs, frames: np.ndarray, is_video: bool) -> tuple[np.ndarray, tuple[int, int, int]]:
        patch, merge, temporal = ip.patch_size, ip.merge_size, ip.temporal_patch_size
        h, w = frames.shape[1:3]
        size = smart_size(h, w, patch * merge, ip.min_pixels, min(self.max_pixels, ip.max_pixels))
        norm = np.stack([self._norm(ip, f, size) for f in frames])
        if not is_video:
            norm = np.repeat(norm, temporal, axis=0)
        return patchify_clip(norm, patch, temporal, merge)

    def _inputs_qwen(self, processor: Any, model: Any, req: JudgeRequest) -> dict[str, Any]:
        import torch

        msgs, images, videos, audios = self._messages(req)
        if audios:
            raise JudgeError(f"hf: {self.model} takes no audio input through this path; audio evidence cannot be judged",
                             retryable=False)
        kwargs: dict[str, Any] = {}
        effort = check(req.config.reasoning_effort)
        if effort is not None:
            kwargs["enable_thinking"] = HF_THINKING[effort]
        text = processor.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False, **kwargs)
        merge2 = processor.merge_size**2
        image_tok, video_tok = processor.image_token, processor.video_token
        out: dict[str, Any] = {}
        parts_img = [self._qwen_visual(processor, img[None], False) for img in images]
        parts_vid = [self._qwen_visual(processor, v, True) for v in videos]
        for tok, parts in ((image_tok, parts_img), (video_tok, parts_vid)):
            pieces = text.split(tok)
            if len(pieces) - 1 != len(parts):
                raise JudgeError(f"hf: chat template produced {len(pieces) - 1} {tok} for {len(parts)} inputs", retryable=False)
            text = pieces[0] + "".join(tok * (math.prod(g) // merge2) + rest for (_, g), rest in zip(parts, pieces[1:], strict=True))
        if parts_img:
            out["pixel_values"] = torch.tensor(np.concatenate([p for p, _ in parts_img]), dtype=model.dtype)
            out["image_grid_thw"] = torch.tensor([g for _, g in parts_img], dtype=torch.long)
        if parts_vid:
            out["pixel_values_videos"] = torch.tensor(np.concatenate([p for p, _ in parts_vid]), dtype=model.dtype)
            out["video_grid_thw"] = torch.tensor([g for _, g in parts_vid], dtype=torch.long)
        out["input_ids"] = processor.tokenizer(text, add_special_tokens=False)["input_ids"]
        return out

    def _run_batch(self, reqs: list[JudgeRequest]) -> list[RawAnswer]:
        import torch

        processor, model = self._load()
        tok = processor.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
        if not self._is_qwen_vl(model):
            return [self._run_generic(processor, model, r) for r in reqs]
        built = [self._inputs_qwen(processor, model, r) for r in reqs]
        longest = max(len(b["input_ids"]) for b in built)
        ids = torch.full((len(built), longest), pad, dtype=torch.long)
        mask = torch.zeros((len(built), longest), dtype=torch.long)
        for i, b in enumerate(built):  # left padding keeps every prompt's end aligned for generation
            n = len(b["input_ids"])
            ids[i, longest - n :] = torch.tensor(b["input_ids"])
            mask[i, longest - n :] = 1
        batch: dict[str, Any] = {"input_ids": ids.to(model.device), "attention_mask": mask.to(model.device)}
        for key in ("pixel_values", "image_grid_thw", "pixel_values_videos", "video_grid_thw"):
            vals = [b[key] for b in built if key in b]
            if vals:
                batch[key] = torch.cat(vals).to(model.device)
        cfg = reqs[0].config
        gen = dict(max_new_tokens=cfg.max_tokens, do_sample=cfg.temperature > 0, pad_token_id=pad)
        if cfg.temperature > 0:
            gen["temperature"] = cfg.temperature
        if cfg.seed is not None:
            torch.manual_seed(cfg.seed)
        with torch.inference_mode():
            out = model.generate(**batch, **gen)
        new = out[:, longest:]
        answers = []
        for i, row in enumerate(new):
            text = tok.decode(row, skip_special_tokens=True)
            visible, _ = strip_thinking(text)
            answers.append(RawAnswer(text=visible, usage=Usage(input_tokens=len(built[i]["input_ids"]),
                                                               output_tokens=int((row != pad).sum())),
                                     model=self.model))
        return answers

    def _run_generic(self, processor: Any, model: Any, req: JudgeRequest) -> RawAnswer:
        """Any other image-text model: frames of a video go in as images."""
        import torch

        msgs, images, videos, audios = self._messages(req)
        if audios:
            raise JudgeError(f"hf: {self.model} takes no audio input; audio evidence cannot be judged", retryable=False)
        for m in msgs:
            m["content"] = [c for c in m["content"] if c["type"] != "video"] + [{"type": "image"} for v in videos for _ in v]
        frames = images + [f for v in videos for f in v]
        text = processor.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        inputs = processor(text=[text], images=frames or None, return_tensors="pt").to(model.device)
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=req.config.max_tokens, do_sample=False)
        row = out[0, inputs["input_ids"].shape[1] :]
        visible, _ = strip_thinking(processor.tokenizer.decode(row, skip_special_tokens=True))
        return RawAnswer(text=visible, usage=Usage(input_tokens=int(inputs["input_ids"].shape[1]), output_tokens=len(row)),
                         model=self.model)
