"""The account of what each request carried, the per-modality token check, and the judge's identity.

Gemini: the real ``google-genai`` SDK against the Gemini API's wire format (``usageMetadata`` with
``promptTokensDetails`` per modality, ``modelVersion``), captured by an httpx transport. OpenAI-
compatible: chat.completion objects as servers send them (``usage.prompt_tokens_details.audio_tokens``,
``system_fingerprint``); the byte count of the lean client is checked against the wire in
``tests/judging/probes/test_probes_standin.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from murgat.judges.account import (
    Account,
    JudgeIdentity,
    Sent,
    SentTotals,
    floating_alias,
    identity_warnings,
    media_warnings,
    sent_totals,
)
from murgat.judges.openai_compat import OpenAIJudge, modality_tokens
from murgat.judges.types import AudioPart, GenerateConfig, ImagePart, JudgeRequest, TextPart, VideoPart
from tests.judges.test_gemini_wire import answer, frames, make, real_media
from tests.judges.wire import Wire, ok


def _req(video: bool = True) -> JudgeRequest:
    parts = [TextPart("Claim: she asks a question."), TextPart("[audio 0:01-0:02]"),
             AudioPart(samples=np.zeros(16000, np.float32), start=1, end=2),
             TextPart("[visual 0:03]"), ImagePart(image=np.zeros((4, 6, 3), np.uint8), time=3.0)]
    if video:
        parts += [TextPart("[visual 0:04-0:06]"),
                  VideoPart(source=str(real_media("friday.mp4")), start=4.0, end=6.0, fps=1.0, frames=frames([4, 5, 6]))]
    return JudgeRequest(parts=parts, config=GenerateConfig(retries=0), task="entail")


def _with_details(details: list[dict], model: str = "gemini-2.5-flash-001") -> dict:
    doc = answer("yes")
    doc["usageMetadata"]["promptTokensDetails"] = details
    doc["modelVersion"] = model
    return doc


async def test_gemini_frames_are_counted_with_their_time_labels_and_tokens_checked(
        capsys: pytest.CaptureFixture[str]) -> None:
    wire = Wire().queue(ok(_with_details([{"modality": "TEXT", "tokenCount": 40}, {"modality": "IMAGE",
                                                                                   "tokenCount": 1032}])))
    j = make(wire, visual="frames")
    out = await j.generate(_req())
    s = out.sent
    assert s is not None and s.images == 4 and s.audio_parts == 1 and s.audio_s == pytest.approx(1.0)
    assert s.image_sizes[0] == (6, 4) and s.frame_labels == ["[visual 0:03]", "(frame at 4.00 s)",
                                                              "(frame at 5.00 s)", "(frame at 6.00 s)"]
    assert s.request_bytes and not s.bytes_exact
    # Gemini listed no AUDIO tokens for a request that carried audio: the server may have dropped it
    assert out.modality_tokens == {"text": 40, "image": 1032, "audio": 0, "video": 0}
    assert out.warnings and "dropped the audio" in out.warnings[0]
    assert "dropped the audio" in capsys.readouterr().err
    assert j.stats.media_warnings == 1 and j.stats.sent_images == 4 and j.sent_totals.images == 4
    ident = j.identity()
    assert ident.reported == {"gemini-2.5-flash-001": 1}
    assert any("alias" in w for w in ident.warnings)


async def test_gemini_offsets_count_a_clip_and_a_full_count_warns_nothing() -> None:
    from tests.judges.test_gemini_wire import upload_routes

    wire = upload_routes(Wire(), ["ACTIVE"]).queue(ok(_with_details(
        [{"modality": "TEXT", "tokenCount": 40}, {"modality": "AUDIO", "tokenCount": 32},
         {"modality": "IMAGE", "tokenCount": 258}, {"modality": "VIDEO", "tokenCount": 600}], "gemini-2.5-flash")))
    j = make(wire)
    out = await j.generate(_req())
    assert out.sent.video_clips == 1 and out.sent.video_s == pytest.approx(2.0) and out.sent.images == 1
    assert out.warnings == [] and not j.identity().warnings
    await j.aclose()


async def test_gemini_without_details_is_not_checked() -> None:
    wire = Wire().queue(ok(answer("yes")))
    out = await make(wire, visual="frames").generate(_req(video=False))
    assert out.modality_tokens is None and out.warnings == [] and out.sent.images == 1


def test_openai_usage_details_are_read_only_where_given() -> None:
    assert modality_tokens({"prompt_tokens": 5}) is None
    assert modality_tokens({"prompt_tokens_details": {"cached_tokens": 0}}) is None  # vLLM: no audio count
    assert modality_tokens({"prompt_tokens_details": {"audio_tokens": 0, "cached_tokens": 3}}) == {"audio": 0}
    j = OpenAIJudge("m", {"base_url": "http://127.0.0.1:9/v1"})
    ans = j._answer({"model": "m-2024", "system_fingerprint": "fp_1", "usage": {
        "prompt_tokens": 9, "completion_tokens": 1, "prompt_tokens_details": {"audio_tokens": 12}},
        "choices": [{"message": {"content": "yes"}, "finish_reason": "stop"}]}, "u")
    assert ans.modality_tokens == {"audio": 12} and ans.system_fingerprint == "fp_1" and ans.model == "m-2024"


async def test_openai_messages_carry_the_account_of_frames_audio_and_images() -> None:
    j = OpenAIJudge("m", {"base_url": "http://127.0.0.1:9/v1"})
    acct = Account()
    await j.build_messages(_req(), acct)
    s = acct.done(123, exact=True)
    assert (s.images, s.audio_parts, s.video_clips) == (4, 1, 0)
    assert s.frame_labels == ["[visual 0:03]", "(frame at 4.00 s)", "(frame at 5.00 s)", "(frame at 6.00 s)"]
    assert s.text_chars > 0 and s.request_bytes == 123 and s.bytes_exact
    assert "4 images" in s.brief() and "1.0 s audio" in s.brief()


def test_media_warnings_need_a_count_of_that_modality() -> None:
    sent = Sent(images=2, image_sizes=[(4, 4), (4, 4)], frame_labels=[None, None], audio_parts=1, audio_s=2.0)
    assert media_warnings(sent, None, "x") == {}
    assert media_warnings(sent, {"audio": 10}, "x") == {}
    assert set(media_warnings(sent, {"audio": 0}, "x")) == {"audio"}  # images are not counted by this provider
    assert set(media_warnings(sent, {"audio": 0, "image": 0, "video": 0, "text": 9}, "x")) == {"audio", "pictures"}
    assert media_warnings(Sent(), {"audio": 0, "image": 0}, "x") == {}  # nothing sent, nothing missing


def test_totals_sum_requests_and_judges() -> None:
    a = Sent(images=1, image_sizes=[(320, 180)], frame_labels=[None], audio_parts=1, audio_s=2.0, request_bytes=10,
             bytes_exact=True)
    b = Sent(video_clips=1, video_s=3.5, request_bytes=7)

    class J:
        def __init__(self, *sent: Sent) -> None:
            self.sent_totals = SentTotals()
            for x in sent:
                self.sent_totals.add(x)

    class Wrapper:  # a dry run's or a recorder's wrapper: its inner judge holds the account
        def __init__(self, inner: J) -> None:
            self.inner = inner

    one = J(a, Sent())
    total = sent_totals([one, Wrapper(one), J(b), object()])  # the same judge twice is counted once
    assert (total.requests, total.images, total.pixels, total.unlabelled_images) == (3, 1, 320 * 180, 1)
    assert (total.audio_s, total.video_s, total.request_bytes, total.bytes_estimated) == (2.0, 3.5, 17, 2)


def test_floating_aliases_and_changing_models_are_called_out() -> None:
    assert floating_alias("gemini-flash-latest") and floating_alias("chatgpt-4o-latest")
    assert floating_alias("gemini-2.5-flash") is None and floating_alias("Qwen/Qwen2.5-Omni-7B") is None
    same = JudgeIdentity(name="openai:gpt-4o", provider="openai", requested="gpt-4o", reported={"gpt-4o": 3})
    assert identity_warnings(same) == []
    moved = JudgeIdentity(name="openai:gpt-4o", provider="openai", requested="gpt-4o",
                          reported={"gpt-4o-2024-08-06": 2, "gpt-4o-2024-11-20": 1},
                          system_fingerprints={"fp_a": 2, "fp_b": 1})
    text = " ".join(identity_warnings(moved))
    assert "alias" in text and "changed during the run" in text and "system_fingerprint changed" in text
    served = JudgeIdentity(name="gemini:gemini-2.5-flash", provider="gemini", requested="gemini-2.5-flash",
                           reported={"models/gemini-2.5-flash": 1})
    assert identity_warnings(served) == []


def test_stats_stay_flat_numbers_that_add_up() -> None:
    """Commands and the Ray driver sum JudgeStats field by field with ``+``: the account's part of
    them is flat numbers."""
    from murgat.judges.base import Judge, JudgeStats

    class J(Judge):
        provider = "x"

        async def _call(self, req: JudgeRequest) -> Any:
            raise NotImplementedError

    j = J("m")
    j._count_sent(Sent(images=2, image_sizes=[(8, 8), (8, 8)], frame_labels=["a", None], audio_parts=1, audio_s=1.5,
                       request_bytes=100))
    acc = JudgeStats()
    for _ in range(2):
        for k, v in j.stats.model_dump().items():
            setattr(acc, k, getattr(acc, k) + v)
    assert (acc.sent_images, acc.sent_pixels, acc.sent_unlabelled_images, acc.sent_audio_s, acc.sent_bytes) == \
        (4, 256, 2, 3.0, 200)
    assert j.sent_totals.image_sizes == {"8x8": 2}
