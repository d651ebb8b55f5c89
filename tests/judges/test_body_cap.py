"""The response-body cap of the httpx and SDK clients (:mod:`murgat.judges.bodycap`), against a lying
server on 127.0.0.1.

The server is a real threading HTTP server: for a request whose path names a lie it sends a
``Content-Length`` of 1 GB, a chunked body that never ends, or a small gzip body that inflates to
8 MiB; anything else gets a valid answer. Each client murgat can use — ``httpx``, the openai SDK (on
``httpx2``) and google-genai — must fail the request at the cap with the reason, hold nothing of the
shared budget afterwards, and answer the next request. Before, each read the body whole into memory.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from murgat.cli import main
from murgat.engine.folder import RunFolder
from murgat.judges import http
from murgat.judges.bodycap import client_hooks
from murgat.judges.gemini import GeminiJudge
from murgat.judges.openai_compat import OpenAIJudge
from tests.judges.test_gemini_wire import answer as gemini_answer
from tests.judges.test_gemini_wire import req
from tests.standin import StandIn, send_json, serving_thread

CAP = 1 << 20
LIES = {"declared": "it declares 1,073,741,824 bytes", "endless": "as it arrived",
        "bomb": "once its content coding was undone"}
CHAT = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "yes"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


class Liar:
    """Answers a POST whose path names one of :data:`LIES` with that lie, any other with a valid
    answer (a Gemini one where the path asks ``generateContent``)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                lie = next((k for k in LIES if k in self.path), None)
                if lie is None:
                    doc = gemini_answer("yes") if "generateContent" in self.path else CHAT
                    send_json(self, 200, json.dumps(doc).encode())
                elif lie == "bomb":
                    body = gzip.compress(b" " * (8 << 20))
                    send_json(self, 200, body, {"content-encoding": "gzip"})
                else:
                    self._lie(lie)
                self.close_connection = lie is not None

            def _lie(self, lie: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header(*(("content-length", str(1 << 30)) if lie == "declared"
                                   else ("transfer-encoding", "chunked")))
                self.end_headers()
                piece = b" " * (1 << 16)
                try:
                    while not outer.stop.is_set():  # until the client hangs up
                        self.wfile.write(piece if lie == "declared" else b"%x\r\n%s\r\n" % (len(piece), piece))
                except OSError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        serving_thread(self.server).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def liar(monkeypatch) -> Iterator[Liar]:
    monkeypatch.setattr(http, "MAX_BODY_BYTES", CAP)
    server = Liar()
    yield server
    server.close()


@pytest.mark.parametrize("client", ["httpx", "sdk"])
@pytest.mark.parametrize("lie", sorted(LIES))
async def test_an_openai_client_fails_a_lying_body_at_the_cap_and_answers_the_next(liar, client, lie) -> None:
    budget_before = http.BODY_BUDGET.in_use
    bad = OpenAIJudge("m", {"api_key": "k", "base_url": f"{liar.base}/{lie}/v1", "client": client})
    out = await bad.generate(req(video=False, retries=0))
    await bad.aclose()
    assert out.text is None and out.error is not None
    assert f"over the {CAP:,}-byte cap" in out.error and LIES[lie] in out.error, out.error
    assert http.BODY_BUDGET.in_use == budget_before, "the failed body's bytes are back in the budget"
    good = OpenAIJudge("m", {"api_key": "k", "base_url": f"{liar.base}/v1", "client": client})
    ok = await good.generate(req(video=False, retries=0))
    await good.aclose()
    assert ok.error is None and ok.text == "yes"


@pytest.mark.parametrize("lie", sorted(LIES))
async def test_the_gemini_sdk_fails_a_lying_body_at_the_cap_and_answers_the_next(liar, monkeypatch, lie) -> None:
    for var in ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_API_VERSION", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", liar.base)
    bad = GeminiJudge(f"gemini-{lie}", {"api_key": "k", "visual": "frames"})
    out = await bad.generate(req(video=False, retries=0))
    good = GeminiJudge("gemini-2.5-flash", {"api_key": "k", "visual": "frames"})
    ok = await good.generate(req(video=False, retries=0))
    await bad.aclose()
    await good.aclose()
    assert out.error is not None and f"over the {CAP:,}-byte cap" in out.error and LIES[lie] in out.error, out.error
    assert ok.error is None and ok.text == "yes", ok.error


async def test_bodies_read_by_httpx_count_against_the_budget_the_lean_client_shares(liar) -> None:
    """A body that fits the cap but not what is left of the shared budget fails on the budget."""
    import httpx

    budget = http.BodyBudget(CAP // 2)
    async with httpx.AsyncClient(event_hooks=client_hooks(budget=budget)) as c:
        with pytest.raises(http.HttpError, match="budget they share"):
            await c.post(f"{liar.base}/endless")
        assert (await c.post(f"{liar.base}/v1")).json() == CHAT
    assert budget.in_use == 0 and 0 < budget.peak <= budget.limit


def _items(tmp: Path) -> Path:
    lines = [{"id": f"i{k}", "media": "friday.mp4", "response": f"The woman says word{k} (audio, 0:01-0:03)."}
             for k in range(3)]
    p = tmp / "in.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


@pytest.mark.parametrize("client", ["httpx", "sdk"])
def test_an_endless_body_is_that_items_error_and_the_others_keep_their_records(tmp_path, example_media,
                                                                                 monkeypatch, client) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setattr(http, "MAX_BODY_BYTES", CAP)
    out = tmp_path / "run"
    with StandIn() as server:
        server.wire = lambda prompt, body: "flood" if "word1" in prompt else None
        code = main(["score", str(_items(tmp_path)), "--media-root", str(example_media), "--judge", "openai:m",
                     "--out", str(out), "--quiet", "--json", "--retries", "0", "-J", f"base_url={server.base_url}",
                     "-J", f"client={client}", "--probes", "off"])
    assert code == 0  # one item of three undetermined: under the default --max-undetermined
    recs = {r.id: r for r in RunFolder(out).latest_results()}
    assert sorted(recs) == ["i0", "i1", "i2"]
    bad = recs["i1"]
    assert bad.case == "undetermined" and bad.n_judge_errors >= 1
    assert bad.judge_failure is not None and f"over the {CAP:,}-byte cap as it arrived" in bad.judge_failure
    assert all(recs[i].case == "scored" and recs[i].judge_failure is None for i in ("i0", "i2"))
