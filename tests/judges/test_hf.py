"""The in-process ``hf`` judge with a tiny randomly initialised Qwen2-VL built in the test.

The model (2 text layers, 1 vision block, hidden size 32) and a byte-level BPE tokenizer
trained on the fly are saved to a folder exactly like a real checkpoint (config, weights,
tokenizer, ``preprocessor_config.json``, ``chat_template.json``); the judge loads it from
that path and runs a real ``generate`` on an image and a video clip. The answers are
random tokens — the test checks the plumbing (patches, token counts, batching), not
judgement quality.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from murgat.judges.hf import HFJudge, patchify_clip, smart_size
from murgat.judges.types import AudioPart, GenerateConfig, ImagePart, JudgeRequest, TextPart, VideoPart
from murgat.media.frame import Frame

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
            "<|video_pad|>"]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}"
    "{% if c['type'] == 'text' %}{{ c['text'] }}{% elif c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>{% endif %}{% endfor %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2VLConfig, Qwen2VLForConditionalGeneration

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["yes no the evidence shows the claim about a video frame and audio"] * 20, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    ids = {t: fast.convert_tokens_to_ids(t) for t in SPECIALS}
    cfg = Qwen2VLConfig(
        text_config={"vocab_size": len(fast), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024,
                     "rope_scaling": {"type": "mrope", "mrope_section": [1, 1, 2]}, "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "bos_token_id": None},
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2, "patch_size": 14,
                       "spatial_merge_size": 2, "temporal_patch_size": 2, "in_chans": 3},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(0)
    model = Qwen2VLForConditionalGeneration(cfg)
    out = tmp_path_factory.mktemp("tiny-qwen2-vl")
    model.save_pretrained(out)
    fast.save_pretrained(out)
    (out / "preprocessor_config.json").write_text(json.dumps({
        "image_processor_type": "Qwen2VLImageProcessor", "patch_size": 14, "merge_size": 2, "temporal_patch_size": 2,
        "min_pixels": 56 * 56, "max_pixels": 112 * 112, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}))
    (out / "chat_template.json").write_text(json.dumps({"chat_template": TEMPLATE}))
    return out


def test_smart_size_and_patch_order() -> None:
    assert smart_size(64, 80, 28, 56 * 56, 112 * 112) == (56, 84)
    assert smart_size(480, 640, 28, 56 * 56, 112 * 112) == (84, 112)  # scaled down under max_pixels
    frames = np.arange(3 * 3 * 56 * 56, dtype=np.float32).reshape(3, 3, 56, 56)
    patches, grid = patchify_clip(frames, patch=14, temporal=2, merge=2)
    assert grid == (2, 4, 4) and patches.shape == (32, 3 * 2 * 14 * 14)
    # the last frame was repeated to fill the second temporal patch
    assert np.array_equal(patches[16:].reshape(-1), patchify_clip(np.stack([frames[2], frames[2]]), 14, 2, 2)[0].reshape(-1))


def _frames(n: int) -> list[Frame]:
    rng = np.random.default_rng(0)
    return [Frame(i, i * 0.5, rng.integers(0, 255, (64, 80, 3), dtype=np.uint8)) for i in range(n)]


def test_generate_with_image_and_video_batched(tiny_qwen: Path, friday: Path) -> None:
    judge = HFJudge(str(tiny_qwen), {"batch_size": "2", "max_pixels": str(112 * 112)})
    cfg = GenerateConfig(max_tokens=6)
    with_media = JudgeRequest(parts=[TextPart("Claim: a man waves."), ImagePart(image=np.zeros((60, 60, 3), np.uint8)),
                                     VideoPart(source=str(friday), start=0, end=1.5, frames=_frames(3)), TextPart("yes or no?")],
                              config=cfg)
    text_only = JudgeRequest(parts=[TextPart("Is this short?")], config=cfg)

    async def go():
        return await asyncio.gather(judge.generate(with_media), judge.generate(text_only))

    a, b = asyncio.run(go())
    assert a.error is None and b.error is None, (a.error, b.error)
    assert isinstance(a.text, str) and isinstance(b.text, str)
    assert a.usage.input_tokens > b.usage.input_tokens + 8  # image and video tokens were expanded into the prompt
    assert 1 <= a.usage.output_tokens <= 6
    assert judge.stats.calls == 2


def test_audio_is_refused_not_guessed(tiny_qwen: Path) -> None:
    judge = HFJudge(str(tiny_qwen), {})
    out = asyncio.run(judge.generate(JudgeRequest(parts=[TextPart("x"), AudioPart(samples=np.zeros(1600, np.float32))])))
    assert out.error and "audio" in out.error and out.retries == 0
