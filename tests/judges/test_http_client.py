"""The lean HTTP/1.1 client (``murgat.judges.http``) against misbehaving servers on 127.0.0.1.

Each server is a real asyncio socket server writing scripted bytes, so the client's real
connection handling is what is tested: one response per request, interim replies, reused
keep-alive connections with stray bytes on them, bodies that never end, connection failures.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest

from murgat.judges.http import BODY_BUDGET, BodyBudget, HttpConnectError, HttpError, HttpPool

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def reply(body: bytes, status: str = "200 OK", extra: str = "") -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
            ).encode() + body


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    """One request (head + Content-Length body), or ``None`` when the client closed."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    n = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    return await reader.readexactly(n)


class Server:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> Server:
        async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                await self.handler(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        self.server = await asyncio.start_server(on_conn, "127.0.0.1", 0)
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1/chat/completions"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


def answer(i: int) -> bytes:
    return json.dumps({"answer": i}).encode()


async def test_a_stray_response_after_an_answer_is_never_read_as_the_next_answer() -> None:
    """A server that sends an extra response after each answer: before, the client reused the
    connection and read the stray reply as the next request's answer (foreign answers cached)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (body := await read_request(reader)) is not None:
            i = json.loads(body)["i"]
            writer.write(reply(answer(i)) + reply(json.dumps({"answer": "stray"}).encode()))
            await writer.drain()

    pool = HttpPool()
    async with Server(handler) as srv:
        for i in range(6):
            resp = await pool.post(srv.url, json.dumps({"i": i}).encode(), {})
            assert json.loads(resp.content) == {"answer": i}
        assert pool.stray_closed >= 1 and srv.connections == 6  # after the first stray: no reuse at all
    await pool.aclose()


async def test_clean_keep_alive_connections_are_reused() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (body := await read_request(reader)) is not None:
            writer.write(reply(answer(json.loads(body)["i"])))
            await writer.drain()

    pool = HttpPool()
    async with Server(handler) as srv:
        for i in range(5):
            assert json.loads((await pool.post(srv.url, json.dumps({"i": i}).encode(), {})).content) == {"answer": i}
        assert srv.connections == 1 and pool.stray_closed == 0
    await pool.aclose()


async def test_interim_100_continue_is_skipped() -> None:
    """Before, ``100 Continue`` was read as the answer (no body), and the real answer left on the
    connection: every request timed out or got its predecessor's answer."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (body := await read_request(reader)) is not None:
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n")
            writer.write(reply(answer(json.loads(body)["i"])))
            await writer.drain()

    pool = HttpPool()
    async with Server(handler) as srv:
        for i in range(3):
            resp = await pool.post(srv.url, json.dumps({"i": i}).encode(), {})
            assert resp.status_code == 200 and json.loads(resp.content) == {"answer": i}
    await pool.aclose()


async def test_a_body_that_never_ends_fails_at_the_cap() -> None:
    """No Content-Length, no chunking, and bytes that keep coming: the read stops at the body cap
    with a clear reason (before, memory grew until --timeout: 1.9-2.8 GB)."""
    sent = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
        chunk = b" " * 65536
        for _ in range(2000):  # bounded: 128 MiB at most, far past the cap below
            writer.write(chunk)
            sent += len(chunk)
            await writer.drain()

    pool = HttpPool(max_body=1 << 20)
    async with Server(handler) as srv:
        with pytest.raises(HttpError, match="cap"):
            await asyncio.wait_for(pool.post(srv.url, b"{}", {}), 30)
    assert sent < 64 << 20  # the client stopped reading long before the server's loop ended
    await pool.aclose()


@pytest.mark.parametrize("head", [b"Content-Length: 999999999999\r\n", b"Transfer-Encoding: chunked\r\n"])
async def test_declared_sizes_over_the_cap_fail_before_reading(head: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        body = b"7fffffff\r\n" if b"chunked" in head else b""
        writer.write(b"HTTP/1.1 200 OK\r\n" + head + b"\r\n" + body)
        await writer.drain()
        await asyncio.sleep(5)

    pool = HttpPool(max_body=1 << 20)
    async with Server(handler) as srv:
        with pytest.raises(HttpError, match="cap"):
            await asyncio.wait_for(pool.post(srv.url, b"{}", {}), 4)
    await pool.aclose()


async def test_chunked_body_and_bad_framing() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n")
        await writer.drain()
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
        await writer.drain()

    pool = HttpPool()
    async with Server(handler) as srv:
        assert json.loads((await pool.post(srv.url, b"{}", {})).content) == {"a": 1}
        with pytest.raises(HttpError, match="chunk size"):
            await pool.post(srv.url, b"{}", {})
    await pool.aclose()


async def test_a_refused_connection_is_a_connect_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(HttpConnectError, match="connection refused"):
        await HttpPool().post(f"http://127.0.0.1:{port}/v1/chat/completions", b"{}", {})


async def test_dns_and_tls_failures_are_connect_errors(monkeypatch) -> None:
    """The resolver's and the TLS handshake's errors are named as such (no lookup is made: the
    opening is replaced by one raising what asyncio raises for each)."""
    import socket
    import ssl

    pool = HttpPool()
    for exc, words in ((socket.gaierror(-2, "Name or service not known"), "cannot resolve host"),
                       (ssl.SSLCertVerificationError(1, "certificate verify failed"), "TLS handshake")):
        async def boom(key, exc=exc):
            raise exc

        monkeypatch.setattr(pool, "_open", boom)
        with pytest.raises(HttpConnectError, match=words):
            await pool.post("https://judge.example/v1/chat/completions", b"{}", {})


def _one_reply(raw: bytes) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader) is not None:
            writer.write(raw)
            await writer.drain()
    return handler


@pytest.mark.parametrize(("raw", "words"), [
    # Python's int(x, 16) takes all three; RFC 9112 chunk sizes are hex digits only
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n", "chunk size"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+2\r\n{}\r\n0\r\n\r\n", "chunk size"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0_2\r\n{}\r\n0\r\n\r\n", "chunk size"),
    # a chunk line past the head limit: before, asyncio's LimitOverrunError escaped (not an HttpError)
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;" + b"x" * (2 << 20) + b"\r\n{}\r\n0\r\n\r\n",
     "longer than"),
    # '²' is a digit to str.isdigit but not to int(): before, a ValueError escaped
    (b"HTTP/1.1 2\xb20 OK\r\nContent-Length: 2\r\n\r\n{}", "not an HTTP response"),
    # two lengths: before, the last one won and the answer was cut to '{"'
    (b'HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Length: 2\r\n\r\n{"answer": 1}', "disagree"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}", "Content-Length"),
])
async def test_hostile_framing_is_an_http_error(raw: bytes, words: str) -> None:
    pool = HttpPool()
    async with Server(_one_reply(raw)) as srv:
        with pytest.raises(HttpError, match=words):
            await asyncio.wait_for(pool.post(srv.url, b"{}", {}), 10)
    await pool.aclose()


async def test_a_flood_of_interim_replies_or_trailers_is_bounded() -> None:
    """1xx replies and trailer fields are skipped, but not without end: they count against the head cap."""
    flood = b"HTTP/1.1 100 Continue\r\n\r\n" * 60_000 + reply(b"{}")
    trailers = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n" + b"X: y\r\n" * 250_000 + b"\r\n"
    for raw in (flood, trailers):
        pool = HttpPool()
        async with Server(_one_reply(raw)) as srv:
            with pytest.raises(HttpError, match="longer than"):
                await asyncio.wait_for(pool.post(srv.url, b"{}", {}), 20)
        await pool.aclose()


async def test_a_reused_connection_cut_mid_answer_is_not_sent_again() -> None:
    """The server read the request and began answering, then reset the connection. Before, a reused
    connection that failed in any way was retried on a fresh one: the server answered (and billed)
    the same request twice without a word. Only a connection closed before any byte of the answer
    (an idle connection the server had closed) is retried."""
    seen: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (body := await read_request(reader)) is not None:
            i = json.loads(body)["i"]
            seen.append(i)
            if i == 1:
                writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"ans')
                await writer.drain()
                writer.transport.abort()
                return
            writer.write(reply(answer(i)))
            await writer.drain()

    pool = HttpPool()
    async with Server(handler) as srv:
        assert json.loads((await pool.post(srv.url, b'{"i": 0}', {})).content) == {"answer": 0}
        with pytest.raises(HttpError, match="middle of the response"):
            await pool.post(srv.url, b'{"i": 1}', {})
        assert json.loads((await pool.post(srv.url, b'{"i": 2}', {})).content) == {"answer": 2}
    assert seen == [0, 1, 2]
    await pool.aclose()


async def test_an_idle_connection_closed_by_the_server_is_still_retried_once() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = await read_request(reader)
        if body is not None:
            writer.write(reply(answer(json.loads(body)["i"])))
            await writer.drain()
        # then close the kept-alive connection without a word, as servers do when idle

    pool = HttpPool()
    async with Server(handler) as srv:
        for i in range(3):
            assert json.loads((await pool.post(srv.url, json.dumps({"i": i}).encode(), {})).content) == {"answer": i}
    await pool.aclose()


async def test_a_late_stray_reply_costs_at_most_one_answer() -> None:
    """A stray reply sent 20 ms after each answer arrives after the reuse check: it is read as the
    next request's answer. Before, that happened on every reuse (half the answers foreign); now a host
    caught sending stray bytes once gets fresh connections only."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (body := await read_request(reader)) is not None:
            writer.write(reply(answer(json.loads(body)["i"])))
            await writer.drain()
            await asyncio.sleep(0.02)
            writer.write(reply(json.dumps({"answer": "stray"}).encode()))
            await writer.drain()

    pool = HttpPool()
    async with Server(handler) as srv:
        got = [json.loads((await pool.post(srv.url, json.dumps({"i": i}).encode(), {})).content)["answer"]
               for i in range(8)]
    await pool.aclose()
    assert sum(g != i for i, g in enumerate(got)) <= 1, got


async def test_a_header_with_a_line_break_is_refused_before_anything_is_sent() -> None:
    """An API key read with its newline (or a hostile value) would end the header and start another."""
    pool = HttpPool()
    async with Server(_one_reply(reply(b"{}"))) as srv:
        with pytest.raises(ValueError, match="line break"):
            await pool.post(srv.url, b"{}", {"authorization": "Bearer k\r\nX-Injected: 1"})
        assert srv.connections == 0
    await pool.aclose()


async def test_the_host_header_of_an_ipv6_url_keeps_its_brackets() -> None:
    """Before: ``Host: ::1:PORT`` (hostname and port joined), which is no host: RFC 9110 spells it ``[::1]:PORT``."""
    import socket

    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    hosts: list[bytes] = []

    async def on(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        hosts.extend(line for line in head.split(b"\r\n") if line.lower().startswith(b"host:"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        await writer.drain()
        writer.close()

    try:
        srv = await asyncio.start_server(on, "::1", 0)
    except OSError as exc:
        pytest.skip(f"cannot listen on ::1 ({exc})")
    port = srv.sockets[0].getsockname()[1]
    pool = HttpPool()
    assert (await pool.post(f"http://user:secret@[::1]:{port}/v1/chat/completions", b"{}", {})).status_code == 200
    srv.close()
    await srv.wait_closed()
    await pool.aclose()
    assert hosts == [f"Host: [::1]:{port}".encode()]


def _chunks(data: bytes, size: int = 7) -> bytes:
    """``data`` in the chunked framing, ``size`` bytes a chunk."""
    parts = [b"%x\r\n%s\r\n" % (len(data[i:i + size]), data[i:i + size]) for i in range(0, len(data), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, mtime=0)


def _deflate(data: bytes, raw: bool = False) -> bytes:
    import zlib

    c = zlib.compressobj(wbits=-15 if raw else 15)
    return c.compress(data) + c.flush()


ANSWER = b'{"answer": "the same answer, coded"}'
#: one body in two gzip members, one after the other (RFC 1952: a gzip file may have several)
TWO_MEMBERS = _gzip(ANSWER[:10]) + _gzip(ANSWER[10:])
#: a gzip body without its last bytes
CUT = _gzip(ANSWER)[:-12]


@pytest.mark.parametrize(("head", "body"), [
    (b"Transfer-Encoding: gzip, chunked\r\n", _chunks(_gzip(ANSWER))),
    (b"Transfer-Encoding: GZIP , Chunked\r\n", _chunks(_gzip(ANSWER))),
    # one list over two fields (RFC 9110 5.3): before, the last field alone was read
    (b"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", _chunks(_gzip(ANSWER))),
    (b"Transfer-Encoding: deflate, identity, chunked\r\n", _chunks(_deflate(ANSWER))),
    (b"Content-Encoding: gzip\r\nContent-Length: %d\r\n" % len(_gzip(ANSWER)), _gzip(ANSWER)),
    (b"Content-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n", _chunks(_deflate(ANSWER, raw=True))),
    # content coded, then transfer coded: both undone, in reverse
    (b"Content-Encoding: gzip\r\nTransfer-Encoding: gzip, chunked\r\n", _chunks(_gzip(_gzip(ANSWER)))),
    (b"Content-Encoding: gzip\r\nContent-Length: %d\r\n" % len(TWO_MEMBERS), TWO_MEMBERS),
])
async def test_coded_bodies_are_decoded_and_the_connection_stays_in_step(head: bytes, body: bytes) -> None:
    """Each reply is a real coded body on a kept-alive connection, answered twice: the answer comes
    out decoded both times, on one connection (before, ``gzip, chunked`` was not read as chunked: the
    client waited for the server to close, then returned the framing and gzip bytes as the answer)."""
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + head + b"\r\n" + body
    pool = HttpPool()
    async with Server(_one_reply(raw)) as srv:
        for _ in range(2):
            resp = await asyncio.wait_for(pool.post(srv.url, b"{}", {}), 10)
            assert resp.content == ANSWER
        assert srv.connections == 1
    await pool.aclose()


async def test_a_transfer_coding_without_chunked_last_is_read_until_the_close() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n" + _gzip(ANSWER))
        await writer.drain()  # the handler returns: the server closes, which ends the body

    pool = HttpPool()
    async with Server(handler) as srv:
        assert (await asyncio.wait_for(pool.post(srv.url, b"{}", {}), 10)).content == ANSWER
    await pool.aclose()


@pytest.mark.parametrize(("head", "body", "words"), [
    (b"Transfer-Encoding: br, chunked\r\n", b"", "coding 'br'"),
    (b"Content-Encoding: compress\r\nContent-Length: 2\r\n", b"{}", "coding 'compress'"),
    (b"Transfer-Encoding: chunked, gzip\r\n", b"", "chunked other than once and last"),
    (b"Transfer-Encoding: chunked, chunked\r\n", b"", "chunked other than once and last"),
    (b"Content-Encoding: gzip\r\nContent-Length: 2\r\n", b"{}", "cannot be decoded"),
    (b"Content-Encoding: gzip\r\nContent-Length: %d\r\n" % len(CUT), CUT, "cut short"),
])
async def test_a_coding_that_cannot_be_undone_is_a_clear_error(head: bytes, body: bytes, words: str) -> None:
    """Before, each of these was returned as the answer (undecoded bytes), or waited for a close."""
    pool = HttpPool()
    async with Server(_one_reply(b"HTTP/1.1 200 OK\r\n" + head + b"\r\n" + body)) as srv:
        with pytest.raises(HttpError, match=words):
            await asyncio.wait_for(pool.post(srv.url, b"{}", {}), 10)
    await pool.aclose()


async def test_a_small_gzip_body_that_inflates_past_the_cap_fails_at_the_cap() -> None:
    bomb = _gzip(b"\0" * (8 << 20))  # 8 KiB on the wire, 8 MiB decoded
    raw = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb) + bomb
    pool = HttpPool(max_body=1 << 20)
    async with Server(_one_reply(raw)) as srv:
        with pytest.raises(HttpError, match="cap once its gzip coding is undone"):
            await asyncio.wait_for(pool.post(srv.url, b"{}", {}), 10)
    await pool.aclose()


async def test_bodies_read_at_once_share_one_budget() -> None:
    """Twelve requests at once, each answered by a body that never ends (half chunked, half until the
    close): each sends 2 MiB, then stalls until the test lets it go on. The budget (6 MiB) holds at most
    three such bodies, so at least nine requests fail on it while the rest wait; let go, those fail at the
    per-body cap. The client counts what it holds: never more than the budget (before, every body could
    grow to its own cap: 12 x 4 MiB here, 0.5-1 GB with the real cap), and all of it back afterwards."""
    release = asyncio.Event()
    opened = 0
    piece = b" " * (256 << 10)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal opened
        await read_request(reader)
        chunked = opened % 2 == 0
        opened += 1
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     + (b"Transfer-Encoding: chunked\r\n" if chunked else b"") + b"\r\n")

        async def send(n: int) -> None:
            for _ in range(n):
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                await writer.drain()

        await send(8)  # 2 MiB
        await release.wait()
        await send(256)  # 64 MiB more at most: far past the cap

    budget = BodyBudget(6 << 20)
    pool = HttpPool(max_body=4 << 20, budget=budget)
    async with Server(handler) as srv:
        tasks = [asyncio.ensure_future(pool.post(srv.url, b"{}", {})) for _ in range(12)]

        async def nine_failed() -> None:
            while sum(t.done() for t in tasks) < 9:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(nine_failed(), 60)
        release.set()
        results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
    assert all(isinstance(r, HttpError) for r in results), results
    assert sum("budget they share" in str(r) for r in results) >= 9
    assert all("budget they share" in str(r) or "cap" in str(r) for r in results)
    assert 0 < budget.peak <= budget.limit and budget.in_use == 0
    async with Server(_one_reply(reply(answer(7)))) as srv:  # what was held is back: an answer goes through
        assert json.loads((await pool.post(srv.url, b"{}", {})).content) == {"answer": 7}
    assert budget.in_use == 0
    await pool.aclose()


async def test_every_pool_shares_the_process_budget_unless_given_one() -> None:
    """Each judge has its own pool; the bodies of all of them count against one budget."""
    assert HttpPool().budget is HttpPool(max_body=1 << 20).budget is BODY_BUDGET
    body = json.dumps({"answer": "x" * (3 << 20)}).encode()  # 3 MiB in pieces, joined: counted twice, then given back
    budget = BodyBudget(16 << 20)
    pool = HttpPool(budget=budget)
    async with Server(_one_reply(reply(body))) as srv:
        assert (await pool.post(srv.url, b"{}", {})).content == body
    assert 2 * len(body) <= budget.peak <= 2 * len(body) + (1 << 20) and budget.in_use == 0
    await pool.aclose()
