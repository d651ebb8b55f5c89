"""A stand-in OpenAI-compatible server on 127.0.0.1 for command-line tests.

It speaks the Chat Completions wire format (``POST /v1/chat/completions`` →
``chat.completion`` objects; errors as JSON bodies with HTTP status codes), so the real
``openai`` SDK and murgat's real HTTP path are exercised end to end. Answers follow the
murgat prompt in the request: a decomposition prompt gets ``{"facts": [...]}``, any other
question gets ``yes``. ``mode = "fail"`` answers 503 to everything. ``script``, when set, is a
scripted model: it gets the request's prompt text and body and returns the answer text.
``slow_down = (retry_after_s, quiet_s, rounds)`` plays a provider's rate limiter in a storm that
lasts a number of waits, not of seconds, so that what a client sends is countable: from request
number ``slow_down_from`` on it answers ``429 Retry-After: retry_after_s`` at once to every
request, until ``rounds`` *probes* (requests that arrive at least ``quiet_s`` after the last
refused one: the client waited as asked) have been refused; the next probe is let in and the
storm is over. A request sent while the client was told to wait is refused and restarts the
wait, as limiters that count refused requests do. ``refused`` counts the 429s, ``late`` those
after the first probe that were not probes (sent while the client had been told to wait).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StandIn:
    def __init__(self, die_after: int | None = None, latency: float = 0.0) -> None:
        self.mode = "ok"
        self.script: Callable[[str, dict[str, Any]], str] | None = None
        self.text: str | None = None  # when set, every question is answered with this text ("" for empty answers)
        self.requests: list[dict[str, Any]] = []
        self.latency = latency  # seconds before each answer
        self.received: list[tuple[str, float]] = []  # (SHA-256 of the body, arrival time)
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self.die_after = die_after
        self.dead = False
        self.slow_down: tuple[float, float, int] | None = None  # (Retry-After s, quiet s of a probe, probes refused)
        self.slow_down_from = 1  # the storm starts at this request (1: the first)
        self.refused = 0
        self.late = 0
        self._storm = "before"  # before → on → over
        self._last_refusal = 0.0
        self._probes = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}"
                body = json.loads(raw)
                if outer.dead:
                    self.close_connection = True
                    return
                outer.requests.append(body)
                with outer._lock:
                    outer.received.append((hashlib.sha256(raw).hexdigest(), time.time()))
                    refuse = outer._throttled()
                if refuse:
                    self._send(429, {"error": {"message": "Rate limit reached; slow down", "type": "requests",
                                               "code": "rate_limit_exceeded"}},
                               {"retry-after": f"{outer.slow_down[0]:g}"} if outer.slow_down else None)
                    return
                with outer._lock:
                    outer.in_flight += 1
                    outer.peak_in_flight = max(outer.peak_in_flight, outer.in_flight)
                try:
                    if outer.latency:
                        time.sleep(outer.latency)
                    self._answer(body)
                finally:
                    with outer._lock:
                        outer.in_flight -= 1

            def _answer(self, body: dict[str, Any]) -> None:
                if outer.die_after is not None and len(outer.requests) > outer.die_after:
                    # the server goes away mid-run: this request gets no answer, later ones no connection
                    outer.dead = True
                    threading.Thread(target=outer.kill, daemon=True).start()
                    self.close_connection = True
                    return
                if outer.mode == "fail":
                    self._send(503, {"error": {"message": "overloaded", "type": "server_error", "code": 503}})
                    return
                if outer.text is not None:
                    self._send(200, {
                        "id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": body.get("model", "m"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": outer.text},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
                    return
                text = "yes"
                prompt = " ".join(p.get("text", "") for m in body.get("messages", []) for p in
                                  (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}]))
                if "atomic facts" in prompt:
                    text = json.dumps({"facts": ["The woman speaks on the phone."]})
                if outer.script is not None:
                    text = outer.script(prompt, body)
                self._send(200, {
                    "id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": body.get("model", "m"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
                })

            def _send(self, code: int, doc: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(doc).encode()
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            # socketserver's listen backlog of 5 drops the SYN of a 6th simultaneous connection, which
            # the client's kernel resends a second later: a request sent at once would arrive 1 s late
            request_queue_size = 128

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _throttled(self) -> bool:
        """Whether the request just received (under the lock) meets the rate limiter's 429."""
        if self.slow_down is None or self._storm == "over":
            return False
        now = time.monotonic()
        if self._storm == "before":
            if len(self.received) < self.slow_down_from:
                return False
            self._storm = "on"
        elif now - self._last_refusal >= self.slow_down[1]:
            self._probes += 1  # the client waited as asked: a probe
            if self._probes > self.slow_down[2]:
                self._storm = "over"
                return False
        elif self._probes:
            self.late += 1
        self._last_refusal = now
        self.refused += 1
        return True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def kill(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __exit__(self, *exc: Any) -> None:
        if not self.dead:
            self.kill()
