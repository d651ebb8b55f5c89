"""Tiny randomly initialised multimodal checkpoints, saved as real model folders, for the
real-server tests (``transformers serve`` loads them by path like any downloaded model).

- :func:`build_llava`: LLaVA (a one-layer CLIP vision tower, a one-layer Llama), an
  image-text-to-text model: it takes ``image_url`` parts.
- :func:`build_qwen2_audio`: Qwen2-Audio (a one-layer Whisper-style encoder, a one-layer Qwen2),
  an audio-text-to-text model: it takes ``input_audio`` parts.

Each has a byte-level BPE tokenizer trained on the fly, a processor (``processor_config.json``)
and a chat template, as a downloaded checkpoint has. Answers are random tokens: the tests check
the plumbing (what is sent, accepted, counted and recorded), never judgement quality.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_CHAT = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}{% else %}"
         "{% for c in m['content'] %}{% if c['type'] == 'text' %}{{ c['text'] }}{% elif c['type'] == '@KIND@' %}@TOKENS@"
         "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
         "{% endif %}")


def _tokenizer(specials: list[str]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["yes no label the evidence shows the claim about a video frame and audio facts"] * 20, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")


def _text_config(kind: str, fast: Any, head_dim: int | None) -> dict[str, Any]:
    extra = {} if head_dim is None else {"head_dim": head_dim}  # vLLM's CPU attention takes head sizes from 32 up
    return {**extra, "model_type": kind, "vocab_size": len(fast), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 4096,
            "eos_token_id": fast.convert_tokens_to_ids("<|im_end|>"),
            "pad_token_id": fast.convert_tokens_to_ids("<|endoftext|>"), "bos_token_id": None}


def build_llava(out: Path, head_dim: int | None = None) -> Path:
    import torch
    from transformers import CLIPImageProcessor, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    fast = _tokenizer(["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>"])
    cfg = LlavaConfig(
        vision_config={"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                       "num_attention_heads": 2, "image_size": 28, "patch_size": 14, "projection_dim": 32},
        text_config=_text_config("llama", fast, head_dim), image_token_index=fast.convert_tokens_to_ids("<image>"),
        vision_feature_layer=-1, vision_feature_select_strategy="full")
    torch.manual_seed(0)
    LlavaForConditionalGeneration(cfg).save_pretrained(out)
    images = CLIPImageProcessor(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    LlavaProcessor(image_processor=images, tokenizer=fast, chat_template=_CHAT.replace("@KIND@", "image").replace(
        "@TOKENS@", "<image>"), patch_size=14, vision_feature_select_strategy="full", num_additional_image_tokens=1,
        image_token="<image>").save_pretrained(out)
    return out


def build_qwen2_audio(out: Path, head_dim: int | None = None) -> Path:
    import torch
    from transformers import Qwen2AudioConfig, Qwen2AudioForConditionalGeneration, Qwen2AudioProcessor, WhisperFeatureExtractor

    fast = _tokenizer(["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"])
    cfg = Qwen2AudioConfig(
        audio_config={"model_type": "qwen2_audio_encoder", "d_model": 32, "encoder_layers": 1, "encoder_attention_heads": 2,
                      "encoder_ffn_dim": 64, "num_mel_bins": 128, "max_source_positions": 1500},
        text_config=_text_config("qwen2", fast, head_dim), audio_token_index=fast.convert_tokens_to_ids("<|AUDIO|>"))
    torch.manual_seed(0)
    Qwen2AudioForConditionalGeneration(cfg).save_pretrained(out)
    Qwen2AudioProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=fast,
                        chat_template=_CHAT.replace("@KIND@", "audio").replace(
                            "@TOKENS@", "<|audio_bos|><|AUDIO|><|audio_eos|>")).save_pretrained(out)
    return out
