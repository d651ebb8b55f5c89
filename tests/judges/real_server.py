"""A real OpenAI-compatible server for tests, and a proxy in front of it that logs and breaks.

:class:`TransformersServe` runs ``transformers serve`` (transformers' own FastAPI/uvicorn server)
as a subprocess on 127.0.0.1, offline, loading checkpoints by path. :class:`Proxy` sits between
murgat and it: it forwards each request unchanged, keeps what was sent and what came back
(:attr:`Proxy.log`), and plays the faults a client meets in the wild when told to
(:meth:`Proxy.fault`): ``429`` with ``Retry-After``, ``503``, a dropped connection, a body that
trickles slower than the client's timeout. ``script`` may replace the answer text of a forwarded
request (the server still did the work: its status, usage and timing are kept).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.standin import send_json, serving_thread


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_available() -> str | None:
    """Why ``transformers serve`` cannot run here, or ``None``."""
    try:
        from transformers.utils.import_utils import is_serve_available
    except ImportError as exc:
        return f"transformers is not installed ({exc})"
    if not is_serve_available():
        return "transformers serve needs fastapi, uvicorn (pip install -e '.[dev]')"
    return None


class TransformersServe:
    """``transformers serve`` on 127.0.0.1 (offline; models are loaded by path on first use)."""

    def __init__(self, log_path: Path, startup_s: float = 90.0) -> None:
        self.port = free_port()
        self.log_path = log_path
        self.startup_s = startup_s
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> TransformersServe:
        """Start the server (it comes up while the caller does other work; :meth:`wait` for it)."""
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
               "OMP_NUM_THREADS": "1"}
        code = "from transformers.cli.transformers import main; main()"
        self._log = open(self.log_path, "wb")  # closed in __exit__
        self.proc = subprocess.Popen([sys.executable, "-c", code, "serve", "--host", "127.0.0.1", "--port", str(self.port),
                                      "--device", "cpu", "--log-level", "warning"],
                                     stdout=self._log, stderr=subprocess.STDOUT, env=env)
        self._up = False
        return self

    def wait(self) -> TransformersServe:
        """Block until ``/health`` answers (bounded by ``startup_s``)."""
        if self._up:
            return self
        assert self.proc is not None
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:  # bounded wait for /health
            if self.proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited {self.proc.returncode}: {self.log_path.read_text()[-2000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    self._up = True
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"transformers serve did not answer /health within {self.startup_s:g} s")

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()


@dataclass
class Exchange:
    """One request through the proxy: what murgat sent and what it got."""

    path: str
    body: dict[str, Any]
    status: int | None = None
    answer: dict[str, Any] | None = None
    fault: str | None = None


@dataclass
class Proxy:
    upstream_port: int
    log: list[Exchange] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    script: Callable[[dict[str, Any]], str | None] | None = None
    slow_s: float = 3.0

    def fault(self, *kinds: str) -> Proxy:
        """Faults for the next requests, one each: ``429``, ``503``, ``drop``, ``slow``."""
        self.faults.extend(kinds)
        return self

    def __post_init__(self) -> None:
        outer = self
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                ex = Exchange(self.path, body)
                with lock:
                    outer.log.append(ex)
                    ex.fault = outer.faults.pop(0) if outer.faults else None
                if ex.fault == "429":
                    return self._send(429, b'{"error": {"message": "slow down", "type": "rate_limit"}}', {"retry-after": "0"})
                if ex.fault == "503":
                    return self._send(503, b'{"detail": "model is loading"}')
                if ex.fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return None
                up = http.client.HTTPConnection("127.0.0.1", outer.upstream_port, timeout=120)
                up.request("POST", self.path, raw, {"content-type": "application/json",
                                                    "authorization": self.headers.get("authorization", "")})
                resp = up.getresponse()
                data = resp.read()
                up.close()
                ex.status = resp.status
                try:
                    ex.answer = json.loads(data)
                except ValueError:
                    ex.answer = None
                text = outer.script(body) if outer.script is not None and resp.status == 200 else None
                if text is not None and ex.answer is not None:
                    ex.answer["choices"][0]["message"]["content"] = text
                    ex.answer["choices"][0]["finish_reason"] = "stop"
                    data = json.dumps(ex.answer).encode()
                if ex.fault == "slow":
                    return self._trickle(resp.status, data)
                return self._send(resp.status, data)

            def _send(self, code: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                send_json(self, code, data, headers)

            def _trickle(self, code: int, data: bytes) -> None:
                """Headers at once, then the body a byte at a time over ``slow_s`` seconds."""
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                step = outer.slow_s / max(1, min(len(data), 30))
                try:
                    for i in range(0, len(data), max(1, len(data) // 30)):
                        self.wfile.write(data[i:i + max(1, len(data) // 30)])
                        self.wfile.flush()
                        time.sleep(step)
                except OSError:
                    pass  # the client gave up, as it should
                self.close_connection = True

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 64

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = serving_thread(self.server)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Proxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def prompt_text(body: dict[str, Any]) -> str:
    return " ".join(p.get("text", "") for m in body.get("messages", [])
                    for p in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}]))


def part_types(body: dict[str, Any]) -> list[str]:
    return [p["type"] for m in body.get("messages", []) if isinstance(m["content"], list) for p in m["content"]]
