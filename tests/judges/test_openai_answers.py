"""How the ``openai`` provider reads answers and failures, with every client.

Recorded exchanges in the Chat Completions wire format: ``chat.completion`` objects as vLLM,
``transformers serve`` and the OpenAI API send them (content parts, ``finish_reason``, empty
``choices``), and error replies as they come (the OpenAI error object, FastAPI's ``{"detail": …}``
from ``transformers serve``). The ``httpx`` and ``sdk`` clients are driven through an httpx
transport that replays them; the ``lean`` client through a real socket server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from murgat.judges.base import JudgeUnreachable
from murgat.judges.openai_compat import OpenAIJudge, is_reasoning_model
from murgat.judges.parsing import read_verdict
from murgat.judges.types import GenerateConfig, JudgeRequest, TextPart
from tests.judges.test_openai_wire import completion
from tests.judges.wire import Wire, ok
from tests.standin import StandIn, send_json, serving_thread

CLIENTS = ["httpx", "sdk"]


def judge(wire: Wire, client: str, model: str = "Qwen/Qwen2.5-Omni-7B", **opts: str) -> OpenAIJudge:
    j = OpenAIJudge(model, {"base_url": "http://vllm.test/v1", "client": client, "api_key": "k", **opts},
                    http_client=wire.client())

    async def no_sleep(s: float) -> None:
        return None

    j._sleep = no_sleep  # type: ignore[method-assign]
    return j


def ask(retries: int = 1, **cfg: float) -> JudgeRequest:
    return JudgeRequest(parts=[TextPart("Is a bell heard? yes or no")], expects="verdict",
                        config=GenerateConfig(retries=retries, **cfg))


@pytest.mark.parametrize("client", CLIENTS)
async def test_http_200_with_no_choices_is_a_judge_error_not_an_abstention(client: str) -> None:
    """Before: recorded as a blocked answer ("the judge abstained"), n_judge_errors 0, and
    ``--retry-errors`` sent nothing after the server recovered."""
    empty = {**completion("x"), "choices": []}
    wire = Wire().queue(ok(empty), ok(empty))
    j = judge(wire, client)
    out = await j.generate(ask(retries=1))
    assert out.error is not None and "no choices" in out.error and not out.blocked
    assert len(wire.requests) == 2 and j.stats.errors == 1 and j.stats.blocked == 0


@pytest.mark.parametrize("client", CLIENTS)
async def test_http_200_with_null_content_is_a_judge_error_not_an_abstention(client: str) -> None:
    """Before: read as an answer with no text (an abstention), n_judge_errors 0, and
    ``--retry-errors`` resent nothing once the judge answered again."""
    null = completion("x")
    null["choices"][0]["message"]["content"] = None
    wire = Wire().queue(ok(null), ok(null))
    j = judge(wire, client)
    out = await j.generate(ask(retries=1))
    assert out.error is not None and "content null" in out.error and not out.blocked and out.text is None
    assert len(wire.requests) == 2 and j.stats.errors == 1 and j.stats.blocked == 0


@pytest.mark.parametrize("client", CLIENTS)
async def test_content_given_as_parts_is_read(client: str) -> None:
    """Before: ``internal_error: ValidationError`` (a list where text was expected)."""
    body = completion("x")
    body["choices"][0]["message"]["content"] = [{"type": "text", "text": "Label: "}, {"type": "text", "text": "yes"}]
    out = await judge(Wire().queue(ok(body)), client).generate(ask())
    assert out.error is None and out.text == "Label: yes" and read_verdict(out)[0] == "yes"


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_cut_off_answer_is_truncated_and_never_a_verdict(client: str, tmp_path) -> None:
    """vLLM cut ``{"label":\\t\\n"no`` at the token cap; it was read as ``no``."""
    from murgat.judges.cache import ResponseCache

    wire = Wire().queue(ok(completion('{"label":\t\n"no', finish="length")))
    j = judge(wire, client)
    j.cache = ResponseCache(tmp_path / "c.sqlite")
    out = await j.generate(ask())
    assert out.truncated and read_verdict(out)[0] == "unparseable"
    assert len(j.cache) == 0, "a cut-off verdict is not cached: a rerun asks again"


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(("body", "words"), [
    ({"detail": "Unexpected fields in the request: {'bogus'}"}, "Unexpected fields in the request"),
    ({"detail": [{"loc": ["body", "messages"], "msg": "field required", "type": "missing"}]}, "field required"),
    ({"error": {"message": "model not found", "type": "invalid_request_error"}}, "model not found"),
    ({"error": "CB worker died"}, "CB worker died"),
])
async def test_error_bodies_are_kept_with_every_client(client: str, body: dict, words: str) -> None:
    """Before: ``-J client=sdk`` turned FastAPI's ``{"detail": …}`` into "Error code: 422"."""
    wire = Wire().queue(lambda req: httpx.Response(422, json=body))
    out = await judge(wire, client).generate(ask())
    assert out.error is not None and words in out.error and "422" in out.error


@pytest.mark.parametrize("client", CLIENTS)
async def test_a_timeout_names_the_url_and_the_limit(client: str) -> None:
    """Before: "timed out after 1 attempt(s)", with neither the server nor the limit."""

    async def slow(req: httpx.Request) -> httpx.Response:
        await asyncio.sleep(10)
        return httpx.Response(200, json=completion("yes"))

    wire = Wire().queue(slow)
    out = await judge(wire, client).generate(ask(retries=0, timeout_s=0.2))
    assert out.error is not None and "http://vllm.test/v1" in out.error and "--timeout 0.2 s" in out.error


@pytest.mark.parametrize(("model", "reasoning"), [
    ("gpt-5", True), ("gpt-5-mini", True), ("gpt-5.1", True), ("gpt-5-nano-2025-08-07", True), ("o1", True),
    ("o3-mini", True), ("o4-mini", True), ("openai/o3", True),
    ("gpt-5-chat-latest", False), ("gpt-4o", False), ("gpt-4.1-mini", False), ("Qwen/Qwen2.5-Omni-7B", False),
    ("omni-model", False), ("gpt-50", False), ("o-series-like", False),
])
def test_reasoning_models_are_told_by_name(model: str, reasoning: bool) -> None:
    assert is_reasoning_model(model) is reasoning


async def test_reasoning_models_get_max_completion_tokens_and_no_temperature() -> None:
    """OpenAI's o-series and GPT-5 reasoning models refuse ``max_tokens`` and ``temperature: 0``."""
    wire = Wire().queue(*[ok(completion("yes"))] * 4)
    for model, opts in (("gpt-5-mini", {}), ("o3-mini", {"reasoning_tokens": "100"}), ("gpt-4o", {}),
                        ("Qwen/Qwen2.5-Omni-7B", {})):
        await judge(wire, "httpx", model=model, **opts).generate(
            JudgeRequest(parts=[TextPart("q")], config=GenerateConfig(max_tokens=64, reasoning_effort="low")))
    b5, bo3, b4o, bq = wire.bodies()
    assert b5["max_completion_tokens"] == 64 + 4096 and "max_tokens" not in b5 and "temperature" not in b5
    assert bo3["max_completion_tokens"] == 164 and "temperature" not in bo3
    assert b5["reasoning_effort"] == "low" and b5["seed"] == 0
    for b in (b4o, bq):
        assert b["max_tokens"] == 64 and b["temperature"] == 0.0 and "max_completion_tokens" not in b


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("client", ["lean", "httpx", "sdk"])
async def test_an_endpoint_that_never_answered_stops_the_run(client: str) -> None:
    """Connection refused before any answer raises :class:`JudgeUnreachable` (the item loop stops
    the run with it) after a few quick attempts, not 125 retries over a minute."""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    j = OpenAIJudge("m", {"base_url": url, "client": client, "api_key": "k"})
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    j._sleep = sleep  # type: ignore[method-assign]
    with pytest.raises(JudgeUnreachable, match=r"connection refused|connection attempts failed") as info:
        await j.generate(ask(retries=5))
    assert url in str(info.value) and sum(slept) <= 3.0
    await j.aclose()


async def test_concurrent_requests_to_an_unreachable_endpoint_each_get_the_whole_window() -> None:
    """The unreachable window is wall time since the first failure (or one request's own waits),
    never the waits of concurrent requests added up: eight requests at once each retry as one
    alone does (before, their summed backoff ended the window after the first round of waits)."""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    alone = OpenAIJudge("m", {"base_url": url, "client": "httpx", "api_key": "k"})
    crowd = OpenAIJudge("m", {"base_url": url, "client": "httpx", "api_key": "k"})
    waits: dict[str, list[float]] = {"alone": [], "crowd": []}
    for name, j in (("alone", alone), ("crowd", crowd)):
        async def sleep(s: float, name: str = name) -> None:
            waits[name].append(s)
        j._sleep = sleep  # type: ignore[method-assign]
    with pytest.raises(JudgeUnreachable):
        await alone.generate(ask(retries=10))
    outs = await asyncio.gather(*(crowd.generate(ask(retries=10)) for _ in range(8)), return_exceptions=True)
    assert all(isinstance(o, JudgeUnreachable) for o in outs)
    assert len(waits["alone"]) >= 3 and len(waits["crowd"]) == 8 * len(waits["alone"])
    await alone.aclose()
    await crowd.aclose()


async def test_after_an_answer_a_refused_connection_is_retried_as_before() -> None:
    """A server that answered and then went away (a restart mid-run) is an outage: the request
    ends in an error after its retries, other items keep their records."""
    with StandIn() as server:
        j = OpenAIJudge("m", {"base_url": server.base_url, "api_key": "k"})
        assert (await j.generate(ask())).text == "yes"
    j._sleep = lambda s: asyncio.sleep(0)  # type: ignore[method-assign]
    out = await j.generate(JudgeRequest(parts=[TextPart("another")], config=GenerateConfig(retries=2)))
    assert out.error is not None and "connection refused" in out.error.lower() and out.retries == 2
    await j.aclose()


async def test_timeouts_and_5xx_before_any_answer_keep_their_retries() -> None:
    wire = Wire().queue(lambda r: httpx.Response(503, json={"error": {"message": "loading"}}), ok(completion("yes")))
    out = await judge(wire, "httpx").generate(ask(retries=2))
    assert out.text == "yes" and out.retries == 1


async def test_a_redirect_fails_at_once_naming_where_it_points() -> None:
    """Before: a 307 was read as an answer that "is not JSON" and retried; the body of a POST is not
    re-sent to another address, so the request fails and says which address to configure."""
    wire = Wire().queue(lambda req: httpx.Response(307, headers={"location": "https://judge.example/v1/chat/completions"}))
    out = await judge(wire, "httpx").generate(ask(retries=3))
    assert out.error is not None and "redirects to https://judge.example" in out.error and "base_url" in out.error
    assert len(wire.requests) == 1



class _KeepAlive:
    """A Chat Completions server on 127.0.0.1 that keeps connections open (HTTP/1.1), as vLLM and
    ``transformers serve`` do: a client reusing a connection made on a closed event loop fails on it."""

    def __init__(self) -> None:
        import json
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.requests += 1
                send_json(self, 200, json.dumps(completion("yes")).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> _KeepAlive:
        serving_thread(self.server).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("client", ["lean", "httpx", "sdk"])
def test_a_judge_closed_on_one_event_loop_answers_on_the_next(client: str) -> None:
    """A run asks its judge probes on one event loop and its items on another, closing the judge's
    clients in between (:mod:`murgat.engine.judge_probes`). Before, the ``sdk`` client made on the first
    loop was kept, and every request on the second failed with "Event loop is closed"."""
    with _KeepAlive() as server:
        j = OpenAIJudge("m", {"base_url": server.base_url, "client": client, "api_key": "k"})

        async def once(text: str) -> tuple[str | None, str | None]:
            try:
                out = await j.generate(JudgeRequest(parts=[TextPart(text)], config=GenerateConfig(retries=0)))
                return out.text, out.error
            finally:
                await j.aclose()

        first = asyncio.run(once("probe: is a bell heard?"))
        second = asyncio.run(once("item: is a bell heard?"))
    assert first == ("yes", None)
    assert second == ("yes", None)
    assert server.requests == 2
