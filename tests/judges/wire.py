"""A scripted HTTP peer for provider tests: records every request the real SDK sends and
answers with queued responses in the provider's own wire format."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

Responder = Callable[[httpx.Request], httpx.Response]


@dataclass
class Wire:
    responders: list[Responder] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)
    routes: list[tuple[str, str, Responder]] = field(default_factory=list)

    def queue(self, *rs: Responder) -> Wire:
        self.responders.extend(rs)
        return self

    def route(self, method: str, path_part: str, r: Responder) -> Wire:
        self.routes.append((method, path_part, r))
        return self

    def handler(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        for method, part, r in self.routes:
            if request.method == method and part in str(request.url):
                return r(request)
        if not self.responders:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        return self.responders.pop(0)(request)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handler))

    def bodies(self, path_part: str = "") -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests if path_part in str(r.url) and r.content[:1] == b"{"]


def ok(body: dict[str, Any], headers: dict[str, str] | None = None) -> Responder:
    return lambda req: httpx.Response(200, json=body, headers=headers)


def status(code: int, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> Responder:
    return lambda req: httpx.Response(code, json=body or {"error": {"code": code, "message": "scripted", "status": "X"}},
                                      headers=headers)


def timeout() -> Responder:
    def r(req: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("scripted timeout", request=req)

    return r
