"""The real google-genai SDK, with its own HTTP transport, against a local recorder on 127.0.0.1.

The SDK is pointed at the recorder with ``GOOGLE_GEMINI_BASE_URL`` (what a user behind a proxy
does). The recorder answers in the Gemini API's wire format (``candidates``/``usageMetadata``,
the resumable Files API upload protocol, file polling and deletion) and keeps every request, so
the test checks what murgat's requests really are on the wire: the API version in the path
(murgat pins ``v1beta``; google-genai 3.x would send ``v1``), only fields the API defines, one
upload per video, ``fileData`` + ``videoMetadata`` offsets, ``responseJsonSchema``, ``thinkingConfig``.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from murgat.judges.gemini import API_VERSION, GeminiJudge
from tests.judges.test_gemini_wire import answer, camel, req
from tests.standin import send_json, serving_thread


class Recorder:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.reply: dict[str, Any] | None = None  # when set, every generateContent gets this answer
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _body(self) -> bytes:
                n = int(self.headers.get("content-length") or 0)
                return self.rfile.read(n) if n else b""

            def _send(self, code: int, doc: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                send_json(self, code, json.dumps(doc).encode(), headers)

            def _file(self) -> dict[str, Any]:
                return {"name": "files/abc123", "uri": f"{outer.base}/{API_VERSION}/files/abc123", "mimeType": "video/mp4",
                        "sizeBytes": "1000", "state": "ACTIVE"}

            def do_POST(self) -> None:
                body = self._body()
                outer.requests.append(("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                command = self.headers.get("x-goog-upload-command", "")
                if command == "start":
                    self._send(200, {}, {"x-goog-upload-url": f"{outer.base}/resumable/session-1"})
                elif self.path.startswith("/resumable/"):
                    self._send(200, {"file": self._file()}, {"x-goog-upload-status": "final"})
                elif ":generateContent" in self.path:
                    wants_json = b"responseJsonSchema" in body or b"response_json_schema" in body
                    self._send(200, outer.reply or answer('{"label": "yes"}' if wants_json else "no"))
                else:
                    self._send(404, {"error": {"code": 404, "message": f"no route {self.path}", "status": "NOT_FOUND"}})

            def do_GET(self) -> None:
                outer.requests.append(("GET", self.path, {k.lower(): v for k, v in self.headers.items()}, b""))
                self._send(200, self._file())

            def do_DELETE(self) -> None:
                outer.requests.append(("DELETE", self.path, {k.lower(): v for k, v in self.headers.items()}, b""))
                self._send(200, {})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = serving_thread(self.server)

    def __enter__(self) -> Recorder:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def generate_bodies(self) -> list[dict[str, Any]]:
        return [camel(json.loads(b)) for m, p, _, b in self.requests if ":generateContent" in p]


#: the fields of a generateContent request the Gemini API defines (v1beta GenerateContentRequest)
REQUEST_FIELDS = {"contents", "generationConfig", "systemInstruction", "safetySettings", "tools", "toolConfig",
                  "cachedContent"}
GENERATION_FIELDS = {"temperature", "maxOutputTokens", "candidateCount", "seed", "responseMimeType", "responseJsonSchema",
                     "thinkingConfig", "topP", "topK", "stopSequences", "responseSchema"}
PART_FIELDS = {"text", "inlineData", "fileData", "videoMetadata", "thought"}


@pytest.fixture
def recorder(monkeypatch):
    for var in ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_API_VERSION", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(var, raising=False)
    with Recorder() as rec:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", rec.base)
        yield rec


async def test_real_sdk_sends_v1beta_and_only_api_fields(recorder: Recorder) -> None:
    j = GeminiJudge("gemini-2.5-flash", {"api_key": "test-key", "poll_s": "0"})
    schema = {"type": "object", "properties": {"label": {"type": "string"}}}
    a = await j.generate(req(schema=schema, effort="high"))
    b = await j.generate(req(schema=None, effort="none"))
    await j.aclose()
    assert a.error is None and a.parsed == {"label": "yes"} and b.text == "no", (a.error, b.error)
    gen = [p for m, p, _, _ in recorder.requests if ":generateContent" in p]
    assert gen and all(p == f"/{API_VERSION}/models/gemini-2.5-flash:generateContent" for p in gen)
    for body in recorder.generate_bodies():
        assert set(body) <= REQUEST_FIELDS, set(body) - REQUEST_FIELDS
        assert set(body["generationConfig"]) <= GENERATION_FIELDS, set(body["generationConfig"]) - GENERATION_FIELDS
        for part in body["contents"][0]["parts"]:
            assert set(part) <= PART_FIELDS, set(part) - PART_FIELDS
    b0, b1 = recorder.generate_bodies()
    video = b0["contents"][0]["parts"][6]
    assert video["fileData"]["fileUri"].endswith("/files/abc123")
    assert video["videoMetadata"] == {"startOffset": "4.000s", "endOffset": "6.000s", "fps": 1.0}
    assert b0["generationConfig"]["responseJsonSchema"] == schema
    assert b0["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 24576}
    assert b1["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}
    starts = [h for m, p, h, _ in recorder.requests if h.get("x-goog-upload-command") == "start"]
    assert len(starts) == 1, "one upload for both requests"
    assert any(p == f"/upload/{API_VERSION}/files" for m, p, _, _ in recorder.requests)
    assert any(m == "DELETE" for m, _, _, _ in recorder.requests)
    assert all(h.get("x-goog-api-key") == "test-key" for m, p, h, _ in recorder.requests if ":generateContent" in p)


async def test_api_version_can_be_chosen(recorder: Recorder, monkeypatch) -> None:
    j = GeminiJudge("gemini-2.5-flash", {"api_key": "k", "api_version": "v1"})
    await j.generate(req(video=False))
    monkeypatch.setenv("GOOGLE_GENAI_API_VERSION", "v1alpha")
    j2 = GeminiJudge("gemini-2.5-flash", {"api_key": "k"})
    await j2.generate(req(video=False))
    paths = [p for m, p, _, _ in recorder.requests if ":generateContent" in p]
    assert paths == ["/v1/models/gemini-2.5-flash:generateContent", "/v1alpha/models/gemini-2.5-flash:generateContent"]


def test_vertex_needs_no_key_and_refuses_offsets(monkeypatch) -> None:
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    with pytest.raises(ValueError, match="visual=frames"):
        GeminiJudge("gemini-2.5-flash", {})
    j = GeminiJudge("gemini-2.5-flash", {"visual": "frames"})
    assert j.vertex and j.api_version() is None


async def test_max_tokens_finish_is_truncated(recorder: Recorder) -> None:
    """``finishReason: MAX_TOKENS`` marks the answer truncated: a cut ``{"label": "n`` is unparseable."""
    from murgat.judges.parsing import read_verdict

    recorder.reply = answer('{"label": "n', finish="MAX_TOKENS")
    out = await GeminiJudge("gemini-2.5-flash", {"api_key": "k"}).generate(req(video=False))
    assert out.error is None and out.truncated and read_verdict(out)[0] == "unparseable"
