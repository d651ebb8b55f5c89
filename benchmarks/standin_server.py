"""A stand-in OpenAI-compatible server for benchmarks: answers ``POST /v1/chat/completions``
after a fixed latency, in the real Chat Completions wire format, on 127.0.0.1 only.

It is deliberately cheap (asyncio streams, HTTP/1.1 keep-alive, no JSON parsing of the
request) so that the client's cost is what a benchmark measures. A murgat decomposition
prompt gets ``{"facts": [...]}``; anything else gets ``yes``. ``--capacity N`` serves at most N
requests at once (the rest queue), like a model server whose batch is full.

Run: ``python benchmarks/standin_server.py --latency 0.05 [--capacity 16] [--port 0]``; it prints
``PORT <n>`` on its first line and serves until killed. It stops by itself after ``--max-seconds``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time

DECOMPOSE = json.dumps({"facts": ["The woman speaks on the phone."]})


def body_for(text: str, n: int) -> bytes:
    return json.dumps({
        "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1, "model": "standin",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102},
    }).encode()


class Server:
    def __init__(self, latency: float, capacity: int | None) -> None:
        self.latency = latency
        self.sem = asyncio.Semaphore(capacity) if capacity else None
        self.served = 0
        self.in_flight = 0
        self.peak = 0
        self.first_file: str | None = None
        self.first = 0.0
        self.last = 0.0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:].strip())
                body = await reader.readexactly(length) if length else b""
                if not self.first:
                    self.first = time.time()
                if self.served == 0 and self.in_flight == 0 and self.first_file:
                    with open(self.first_file, "a") as f:
                        f.write(f"{time.time()}\n")
                    self.first_file = None
                text = DECOMPOSE if b"atomic facts" in body else "yes"
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
                try:
                    if self.sem is not None:
                        async with self.sem:
                            await asyncio.sleep(self.latency)
                    else:
                        await asyncio.sleep(self.latency)
                finally:
                    self.in_flight -= 1
                self.served += 1
                self.last = time.time()
                out = body_for(text, self.served)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                             + str(len(out)).encode() + b"\r\n\r\n" + out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--capacity", type=int, default=None)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=900.0)
    ap.add_argument("--first-file", default=None, help="write the wall-clock time of the first request here")
    a = ap.parse_args()
    srv = Server(a.latency, a.capacity)
    srv.first_file = a.first_file
    server = await asyncio.start_server(srv.handle, "127.0.0.1", a.port, limit=1 << 24)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    t0 = time.monotonic()
    stop = asyncio.Event()
    import signal

    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        while time.monotonic() - t0 < a.max_seconds and not stop.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
    print(json.dumps({"served": srv.served, "peak_in_flight": srv.peak, "first": srv.first, "last": srv.last}),
          file=sys.stderr, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
