"""Gemini provider against a replay of the Gemini API wire format.

Every test drives the real ``google-genai`` SDK; an httpx transport captures what it sends
(``generateContent`` JSON, the resumable Files API upload, file polling and deletion) and
answers with bodies shaped like the real API's (``candidates``/``usageMetadata``,
``promptFeedback`` blocks, error objects with HTTP status codes).
"""

from __future__ import annotations

import base64
import json
import re

import httpx
import numpy as np
import pytest

from murgat.judges.gemini import GeminiJudge
from murgat.judges.types import AudioPart, GenerateConfig, ImagePart, JudgeRequest, TextPart, VideoPart
from tests.conftest import real_media
from tests.judges.wire import Wire, ok, status, timeout


def answer(text: str, finish: str = "STOP", thoughts: int = 0) -> dict:
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": finish, "index": 0}],
        "usageMetadata": {"promptTokenCount": 300, "candidatesTokenCount": 2, "thoughtsTokenCount": thoughts,
                          "totalTokenCount": 302 + thoughts},
        "modelVersion": "gemini-2.5-flash",
    }


FILE = {"name": "files/abc123", "uri": "https://generativelanguage.googleapis.com/v1beta/files/abc123",
        "mimeType": "video/mp4", "sizeBytes": "1000"}


def upload_routes(wire: Wire, states: list[str]) -> Wire:
    """The resumable upload protocol: start → upload URL header; upload+finalize → file; GET polls."""
    polls = list(states)

    def start(req: httpx.Request) -> httpx.Response:
        if req.headers.get("x-goog-upload-command") == "start":
            return httpx.Response(200, headers={"x-goog-upload-url": "https://upload.test/session/1"})
        raise AssertionError("unexpected upload call")

    def finalize(req: httpx.Request) -> httpx.Response:
        assert "finalize" in req.headers["x-goog-upload-command"]
        return httpx.Response(200, json={"file": {**FILE, "state": polls.pop(0) if polls else "ACTIVE"}},
                              headers={"x-goog-upload-status": "final"})

    def get(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={**FILE, "state": polls.pop(0) if polls else "ACTIVE"})

    return (wire.route("POST", "googleapis.com/upload/", start).route("POST", "upload.test/session", finalize)
            .route("GET", "/files/abc123", get).route("DELETE", "/files/abc123", lambda r: httpx.Response(200, json={})))


def make(wire: Wire, model: str = "gemini-2.5-flash", **opts: str) -> GeminiJudge:
    j = GeminiJudge(model, {"api_key": "test-key", "poll_s": "0", **opts}, http_client=wire.client())
    j.slept = []

    async def sleep(s: float) -> None:
        j.slept.append(s)

    j._sleep = sleep  # type: ignore[method-assign]
    return j


def frames(ts):
    from murgat.media.frames import open_video

    return open_video(real_media("friday.mp4")).frames_at(ts)


def req(schema=None, effort=None, retries=3, video=True) -> JudgeRequest:
    parts = [TextPart("Claim: she asks a question."), TextPart("[audio 0:01-0:02]"),
             AudioPart(samples=np.zeros(16000, np.float32), start=1, end=2),
             TextPart("[visual 0:03]"), ImagePart(image=np.zeros((4, 4, 3), np.uint8), time=3.0)]
    if video:
        parts += [TextPart("[visual 0:04-0:06]"),
                  VideoPart(source=str(real_media("friday.mp4")), start=4.0, end=6.0, fps=1.0, frames=frames([4, 5, 6]))]
    return JudgeRequest(parts=parts, schema=schema, config=GenerateConfig(reasoning_effort=effort, retries=retries),
                        task="entail")


def mime(part: dict) -> str:
    """The SDK writes inlineData's mime type in snake case; accept either spelling."""
    d = part["inlineData"]
    return d.get("mimeType") or d["mime_type"]


def camel(x):
    """Normalise keys to the API's camelCase (this SDK version writes some nested keys in snake case,
    which the API also accepts)."""
    if isinstance(x, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): camel(v) for k, v in x.items()}
    if isinstance(x, list):
        return [camel(v) for v in x]
    return x


def gen_bodies(wire: Wire) -> list[dict]:
    return [camel(json.loads(r.content)) for r in wire.requests if ":generateContent" in str(r.url)]


async def test_wire_format_with_upload_offsets_thinking_and_schema() -> None:
    wire = upload_routes(Wire(), ["PROCESSING", "ACTIVE"]).queue(ok(answer('{"label": "yes"}')), ok(answer("no")))
    j = make(wire)
    out = await j.generate(req(schema={"type": "object", "properties": {"label": {"type": "string"}}}, effort="high"))
    assert out.text == '{"label": "yes"}' and out.parsed == {"label": "yes"}
    await j.generate(req(schema=None, effort="none"))
    b0, b1 = gen_bodies(wire)
    url = next(str(r.url) for r in wire.requests if ":generateContent" in str(r.url))
    assert url.endswith("/models/gemini-2.5-flash:generateContent") and url.startswith("https://generativelanguage")
    parts = b0["contents"][0]["parts"]
    assert mime(parts[2]) == "audio/wav"
    assert base64.urlsafe_b64decode(parts[2]["inlineData"]["data"])[:4] == b"RIFF"
    assert mime(parts[4]) == "image/jpeg"
    video = parts[6]
    assert video["fileData"] == {"fileUri": FILE["uri"], "mimeType": "video/mp4"}
    assert video["videoMetadata"] == {"startOffset": "4.000s", "endOffset": "6.000s", "fps": 1.0}
    gc = b0["generationConfig"]
    assert gc["responseMimeType"] == "application/json" and gc["responseJsonSchema"]["type"] == "object"
    assert gc["thinkingConfig"] == {"thinkingBudget": 24576} and gc["temperature"] == 0.0
    assert b1["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}
    # uploaded once for both requests, polled until ACTIVE, deleted at the end
    uploads = [r for r in wire.requests if "upload.test/session" in str(r.url)]
    assert len(uploads) == 1
    assert sum(1 for r in wire.requests if r.method == "GET") == 1
    await j.aclose()
    assert any(r.method == "DELETE" for r in wire.requests)


async def test_gemini3_uses_thinking_level() -> None:
    wire = Wire().queue(ok(answer("yes")))
    await make(wire, model="gemini-3-pro-preview").generate(req(effort="low", video=False))
    (b,) = gen_bodies(wire)
    ((key, level),) = b["generationConfig"]["thinkingConfig"].items()
    assert key in ("thinkingLevel", "thinking_level") and level.lower() == "low"


async def test_frames_mode_sends_images_not_files() -> None:
    wire = Wire().queue(ok(answer("yes")))
    await make(wire, visual="frames").generate(req())
    (b,) = gen_bodies(wire)
    mimes = [mime(p) for p in b["contents"][0]["parts"] if "inlineData" in p]
    assert mimes == ["audio/wav", "image/jpeg", "image/jpeg", "image/jpeg", "image/jpeg"]
    assert not any("upload" in str(r.url) for r in wire.requests)


async def test_429_then_success_and_usage() -> None:
    wire = Wire().queue(status(429, headers={"retry-after": "3"}), ok(answer("yes", thoughts=40)))
    j = make(wire)
    out = await j.generate(req(video=False))
    assert out.text == "yes" and out.retries == 1 and j.slept[0] >= 3
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.thinking_tokens) == (300, 2, 40)
    assert out.cost_usd == pytest.approx((300 * 0.30 + 42 * 2.50) / 1e6)


async def test_500_storm_exhausts_retries() -> None:
    wire = Wire().queue(*[status(503)] * 3)
    j = make(wire)
    out = await j.generate(req(video=False, retries=2))
    assert out.error and "503" in out.error and out.retries == 2 and len(gen_bodies(wire)) == 3


async def test_malformed_json() -> None:
    wire = Wire().queue(ok(answer("label: yes }")))
    out = await make(wire).generate(req(video=False, schema={"type": "object"}))
    assert out.parsed is None and out.parse_error and out.error is None


async def test_safety_block_is_recorded() -> None:
    wire = Wire().queue(ok({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 5}}),
                        ok(answer("", finish="SAFETY")))
    j = make(wire)
    a = await j.generate(req(video=False))
    b = await j.generate(JudgeRequest(parts=[TextPart("other")]))
    assert a.blocked and "SAFETY" in (a.error or "") and b.blocked and j.stats.blocked == 2


async def test_timeout_is_retried() -> None:
    wire = Wire().queue(timeout(), ok(answer("yes")))
    out = await make(wire).generate(req(video=False))
    assert out.text == "yes" and out.retries == 1


async def test_4xx_fails_fast() -> None:
    wire = Wire().queue(status(400))
    out = await make(wire).generate(req(video=False))
    assert out.error and out.retries == 0


def test_missing_key(monkeypatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ValueError, match="GEMINI_API_KEY"):
        GeminiJudge("gemini-2.5-flash", {})
