"""OpenAI-compatible provider against a replay of the Chat Completions wire format.

Every test drives the real ``openai`` SDK; an httpx transport captures the JSON it sends
and answers with bodies shaped like the real API's (``chat.completion`` objects, error
objects with HTTP status codes and ``retry-after`` headers).
"""

from __future__ import annotations

import base64
import io
import wave

import httpx
import numpy as np
import pytest

from murgat.judges.openai_compat import OpenAIJudge
from murgat.judges.types import AudioPart, GenerateConfig, ImagePart, JudgeRequest, TextPart, VideoPart
from tests.conftest import real_media
from tests.judges.wire import Wire, ok, status, timeout


def completion(text: str | None, finish: str = "stop", reasoning: int = 0) -> dict:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "qwen2.5-omni-7b",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 7 + reasoning, "total_tokens": 127 + reasoning,
                  "completion_tokens_details": {"reasoning_tokens": reasoning}},
    }


def judge(wire: Wire, **opts: str) -> OpenAIJudge:
    j = OpenAIJudge("Qwen/Qwen2.5-Omni-7B", {"base_url": "http://vllm.test/v1", **opts}, http_client=wire.client())
    j._sleep = _no_sleep(j)  # type: ignore[method-assign]
    return j


def _no_sleep(j):
    j.slept = []

    async def sleep(s: float) -> None:
        j.slept.append(s)

    return sleep


def frame(t: float):
    from murgat.media.frame import Frame

    return Frame(index=int(t * 30), time=t, image=np.full((8, 8, 3), 128, np.uint8))


def request(schema: dict | None = None, effort: str | None = None, retries: int = 3) -> JudgeRequest:
    return JudgeRequest(
        parts=[TextPart("Claim: a bell rings."), TextPart("[audio 0:01-0:02]"),
               AudioPart(samples=np.zeros(16000, np.float32), start=1.0, end=2.0),
               TextPart("[visual 0:03]"), ImagePart(image=np.zeros((4, 4, 3), np.uint8), time=3.0),
               TextPart("[visual 0:04-0:06]"), VideoPart(source=str(real_media("friday.mp4")), start=4, end=6, frames=[frame(4), frame(5)]),
               TextPart("yes or no?")],
        schema=schema, config=GenerateConfig(reasoning_effort=effort, retries=retries, backoff_base_s=0.5), task="entail",
    )


async def test_request_wire_format() -> None:
    wire = Wire().queue(ok(completion("yes")))
    j = judge(wire, extra_body='{"top_k": 20, "chat_template_kwargs": {"add_vision_id": true}}')
    out = await j.generate(request(schema={"type": "object"}, effort="high"))
    assert out.text == "yes" and out.error is None and out.usage.input_tokens == 120
    (body,) = wire.bodies("/chat/completions")
    assert str(wire.requests[0].url) == "http://vllm.test/v1/chat/completions"
    content = body["messages"][0]["content"]
    kinds = [c["type"] for c in content]
    assert kinds == ["text", "text", "input_audio", "text", "image_url", "text", "text", "image_url", "text", "image_url", "text"]
    audio = content[2]["input_audio"]
    assert audio["format"] == "wav"
    with wave.open(io.BytesIO(base64.b64decode(audio["data"]))) as w:
        assert (w.getframerate(), w.getnframes(), w.getnchannels()) == (16000, 16000, 1)
    assert content[4]["image_url"]["url"].startswith("data:image/jpeg;base64,/9j/")
    assert content[6]["text"] == "(frame at 4.00 s)"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}
    assert body["reasoning_effort"] == "high" and body["temperature"] == 0.0 and body["seed"] == 0
    assert body["top_k"] == 20 and body["chat_template_kwargs"] == {"add_vision_id": True}


async def test_thinking_switch_maps_effort_to_chat_template_kwargs() -> None:
    wire = Wire().queue(ok(completion("no")), ok(completion("no")))
    j = judge(wire, thinking_switch="true")
    await j.generate(request(effort="none"))
    await j.generate(request(effort="medium"))
    b0, b1 = wire.bodies()
    assert b0["chat_template_kwargs"] == {"enable_thinking": False} and "reasoning_effort" not in b0
    assert b1["chat_template_kwargs"] == {"enable_thinking": True}


async def test_429_then_success_honours_retry_after() -> None:
    wire = Wire().queue(status(429, headers={"retry-after": "7"}), ok(completion("yes")))
    j = judge(wire)
    out = await j.generate(request())
    assert out.text == "yes" and out.retries == 1 and j.stats.retries == 1
    assert j.slept and j.slept[0] >= 7.0


async def test_500_storm_exhausts_retries() -> None:
    wire = Wire().queue(*[status(500)] * 4)
    j = judge(wire)
    out = await j.generate(request(retries=3))
    assert out.error is not None and "500" in out.error and out.retries == 3
    assert len(wire.requests) == 4 and j.stats.errors == 1
    assert all(d <= 0.5 * 2**k for k, d in enumerate(j.slept))  # full jitter under the exponential cap


async def test_400_fails_fast() -> None:
    wire = Wire().queue(status(400))
    j = judge(wire)
    out = await j.generate(request())
    assert out.error and out.retries == 0 and len(wire.requests) == 1


async def test_timeout_is_retried() -> None:
    wire = Wire().queue(timeout(), ok(completion("yes")))
    j = judge(wire)
    out = await j.generate(request())
    assert out.text == "yes" and out.retries == 1


async def test_malformed_json_is_a_parse_error_not_a_no() -> None:
    wire = Wire().queue(ok(completion('{"label": "yes", oops')))
    out = await judge(wire).generate(request(schema={"type": "object"}))
    assert out.error is None and out.parsed is None and out.parse_error


async def test_content_filter_is_recorded_as_blocked() -> None:
    wire = Wire().queue(ok(completion(None, finish="content_filter")))
    j = judge(wire)
    out = await j.generate(request())
    assert out.blocked and out.error and "content_filter" in out.error and j.stats.blocked == 1


async def test_reasoning_tokens_are_accounted() -> None:
    wire = Wire().queue(ok(completion("yes", reasoning=50)))
    j = OpenAIJudge("gpt-5-mini", {"api_key": "k"}, http_client=wire.client())
    out = await j.generate(request())
    assert out.usage.thinking_tokens == 50 and out.usage.output_tokens == 7
    assert out.cost_usd == pytest.approx((120 * 0.25 + 57 * 2.0) / 1e6)


def test_missing_key_for_openai_api(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        OpenAIJudge("gpt-4o", {})


async def test_video_clip_mode_sends_video_url(friday) -> None:
    wire = Wire().queue(ok(completion("yes")))
    j = judge(wire, video="clip")
    req = JudgeRequest(parts=[VideoPart(source=str(friday), start=1.0, end=3.0, frames=[frame(1), frame(2)])])
    await j.generate(req)
    (body,) = wire.bodies()
    part = body["messages"][0]["content"][0]
    assert part["type"] == "video_url" and part["video_url"]["url"].startswith("data:video/mp4;base64,")


def test_httpx_is_real() -> None:
    assert issubclass(httpx.MockTransport, httpx.AsyncBaseTransport)
