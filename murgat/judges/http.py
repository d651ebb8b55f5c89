"""A minimal async HTTP/1.1 client for posting JSON to model servers, with keep-alive.

Why not httpx here: measured at 0.05 s latency and 64 requests in flight, httpcore's pool
spent most of the client's CPU re-scanning every connection on every request event
(≈ 1.9 ms per call with image + audio parts). A judge call is one POST of a prebuilt body
and one JSON answer, so this client does exactly that: a per-host stack of idle
connections (asyncio streams, TLS for https), ``Content-Length`` or chunked bodies,
``Connection: close`` honoured. A connection taken from the idle stack that turns out to be
closed by the server is retried once on a fresh one (the server never saw the request).
Anything else fails loudly as :class:`HttpError`, which the judge retries with backoff.
No proxies: set ``-J client=httpx`` (httpx, honours proxy settings) or ``client=sdk``.

Exactly one response is read per request, and nothing else:

* interim ``1xx`` replies (``100 Continue``, ``103 Early Hints``) are skipped, never read as the
  answer;
* an idle connection is reused only when nothing arrived on it since its last response: bytes a
  server sent after an answer (a second response, garbage) would otherwise be read as the answer
  to the *next* request — another request's answer, cached under this one's key. Such a
  connection is closed and a fresh one opened;
* the head of a response is at most :data:`MAX_HEAD_BYTES`, its body at most ``max_body``
  bytes (:data:`MAX_BODY_BYTES`): a body with no ``Content-Length`` that never ends fails the
  request with that reason when the cap is reached instead of growing memory until the timeout.
  A chunk-size line, the trailer fields and the interim replies of one response count against
  :data:`MAX_HEAD_BYTES` too;
* framing is read strictly, because a lenient reading of a hostile or broken reply desynchronises
  the connection (the rest of one answer read as the next): a chunk size is hex digits only (not
  Python's ``int(x, 16)``, which takes ``0x10``, ``+5`` and ``1_0``), a status code three ASCII
  digits, two ``Content-Length`` fields that disagree are an error, and a reply with both
  ``Transfer-Encoding`` and ``Content-Length`` is read as chunked and its connection closed;
* all the bodies being read at once share one byte budget (:class:`BodyBudget`, by default the
  process's :data:`BODY_BUDGET` of :data:`MAX_BODIES_IN_FLIGHT`): the per-body cap alone let 12
  probe requests hold 0.5–1 GB and ``--concurrency 32`` against a body that never ends 2 GB. A body
  takes its bytes from the budget *before* reading them (a declared ``Content-Length`` or chunk
  size in pieces of :data:`PIECE`, a body read until the close 64 KiB at a time, a decoded body as it
  inflates, and the copy that joins the pieces), and gives them back when its request returns or
  fails. A body that would go over what is left **fails** at once with that reason, as a body over
  the cap does (the judge retries it with backoff, when the others have given their bytes back):
  waiting instead would deadlock when every body in flight waits for the others, and a judge's
  answer is kilobytes, so only a misbehaving server ever meets the budget. Outside it: each
  connection's stream buffer (at most twice :data:`MAX_HEAD_BYTES`) and the caller's parsing of a
  returned body;
* codings are read as RFC 9110/9112 list them: ``Transfer-Encoding`` and ``Content-Encoding`` are
  lists (repeated fields joined), applied in the order given. A transfer-coding list that ends in
  ``chunked`` is de-chunked, then the codings before it and the content codings are undone in reverse
  (``gzip``, ``x-gzip``, ``deflate``, ``identity``); one that does not end in ``chunked`` is read until
  the server closes. Any other coding (``br``, ``compress``, ``chunked`` twice) fails the request with
  its name before the body is read: a body read as if it were plain would be an unreadable answer, and a
  coding misread as framing desynchronises the connection. The decoded body counts against the cap too
  (a small gzip body can inflate a thousandfold);
* a host that once sent bytes after an answer gets no more reused connections (each request on a
  fresh one, ``Connection: close``): the reuse check sees only bytes that have already arrived, so
  a stray reply sent a few milliseconds after the answer would otherwise still be read as the next
  request's answer;
* a reused connection that fails is tried again on a fresh one only when no byte of the response
  had arrived (the server closed the idle connection): one that broke mid-answer was answered by
  the server, and sending the request again would pay for it twice.

A failure to connect (refused, no such host, TLS handshake) is :class:`HttpConnectError`: the
request never reached a server, which the judge treats as "unreachable" (see
:class:`murgat.judges.base.JudgeUnreachable`).
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import ssl
import threading
import zlib
from collections import defaultdict
from urllib.parse import urlsplit

#: most bytes of a response's status line and headers
MAX_HEAD_BYTES = 1 << 20
#: most bytes of a response body (a judge's answer is kilobytes; n samples or logprobs a few MB)
MAX_BODY_BYTES = 64 << 20
#: bytes of all the response bodies read at once, over every pool of the process (made without a budget of its
#: own): four bodies at the cap, or thousands of answers
MAX_BODIES_IN_FLIGHT = 256 << 20
#: the most bytes one read or one decoding step adds to a body (taken from the budget before it)
PIECE = 1 << 20
#: a chunk size as RFC 9112 spells it: hex digits (16 are already far past any cap)
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
#: the codings this client undoes, with zlib's window bits for each (``None``: nothing to undo)
DECODERS: dict[str, int | None] = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS,
                                    "deflate": zlib.MAX_WBITS, "identity": None}
#: fields that are lists: a repeated one is the list of all its values (RFC 9110 5.3), not its last
_LIST_FIELDS = ("transfer-encoding", "content-encoding")


class HttpError(OSError):
    """The connection failed or the answer was not valid HTTP."""


class HttpConnectError(HttpError):
    """No connection could be made (refused, no such host, TLS handshake failed): nothing was sent."""


class Response:
    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status: int, headers: dict[str, str], content: bytes) -> None:
        self.status_code = status
        self.headers = headers
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


_Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class BodyBudget:
    """Bytes that the response bodies being read may hold together (see the module docstring): taken
    before they are read, given back when the request ends; ``peak`` is the most ever held at once.
    Thread-safe (pools of several event loops may share one)."""

    def __init__(self, limit: int = MAX_BODIES_IN_FLIGHT) -> None:
        self.limit = limit
        self.in_use = 0
        self.peak = 0
        self._lock = threading.Lock()

    def take(self, n: int, held: int) -> None:
        """Hold ``n`` more bytes for a body that holds ``held`` already, or fail without holding them."""
        with self._lock:
            if self.in_use + n > self.limit:
                raise HttpError(f"response bodies being read reached the {self.limit:,}-byte budget they share "
                                f"({self.in_use:,} bytes held, this one's {held:,} among them, {n:,} more wanted): "
                                "the request failed and is tried again later (a judge's answer is kilobytes)")
            self.in_use += n
            self.peak = max(self.peak, self.in_use)

    def give(self, n: int) -> None:
        with self._lock:
            self.in_use -= n


#: the budget of every pool made without its own: one for the whole process
BODY_BUDGET = BodyBudget()


class _Progress:
    """Whether any byte of the response has arrived (decides if a failed reused connection may be retried),
    and what its body holds of the budget."""

    __slots__ = ("head_bytes", "held", "started")

    def __init__(self) -> None:
        self.started = False
        self.head_bytes = 0
        self.held = 0


class HttpPool:
    def __init__(self, max_idle_per_host: int = 512, max_body: int | None = None,
                 budget: BodyBudget | None = None) -> None:
        #: shared by all the bodies being read (the process's unless one is given)
        self.budget = budget or BODY_BUDGET
        self._idle: dict[tuple[str, str, int], list[_Conn]] = defaultdict(list)
        self._parsed: dict[str, tuple[tuple[str, str, int], str, str]] = {}
        self.max_idle = max_idle_per_host
        #: the per-body cap: :data:`MAX_BODY_BYTES` as it is when the pool is made (the httpx clients read it so too)
        self.max_body = MAX_BODY_BYTES if max_body is None else max_body
        self._ssl: ssl.SSLContext | None = None
        #: idle connections closed because bytes had arrived on them after their last response
        self.stray_closed = 0
        #: hosts that sent bytes after an answer: their connections are never reused again
        self._no_reuse: set[tuple[str, str, int]] = set()

    def _target(self, url: str) -> tuple[tuple[str, str, int], str, str]:
        hit = self._parsed.get(url)
        if hit is None:
            u = urlsplit(url)
            if u.scheme not in ("http", "https") or not u.hostname:
                raise HttpError(f"unsupported URL {url!r}")
            port = u.port or (443 if u.scheme == "https" else 80)
            # as the URL spells it, without user info: an IPv6 literal keeps its brackets ("[::1]:8000";
            # hostname + port gave "::1:8000", which is no host)
            host_header = u.netloc.rsplit("@", 1)[-1]
            path = (u.path or "/") + (f"?{u.query}" if u.query else "")
            hit = ((u.scheme, u.hostname, port), host_header, path)
            self._parsed[url] = hit
        return hit

    async def _open(self, key: tuple[str, str, int]) -> _Conn:
        scheme, host, port = key
        ctx = None
        if scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            ctx = self._ssl
        return await asyncio.open_connection(host, port, ssl=ctx, limit=MAX_HEAD_BYTES)

    async def _take_idle(self, key: tuple[str, str, int], idle: list[_Conn]) -> _Conn | None:
        """An idle connection that is still clean, or ``None``. One loop turn first, so bytes already
        at the socket are in the reader's buffer; a connection with anything buffered, at EOF or
        failed is closed: what is there belongs to no request of ours."""
        if not idle:
            return None
        await asyncio.sleep(0)
        while idle:
            reader, writer = idle.pop()
            if _buffered(reader) or reader.at_eof() or reader.exception() is not None or writer.is_closing():
                if _buffered(reader):
                    self.stray_closed += 1
                    self._no_reuse.add(key)  # a server that does this once may do it later than we can see
                writer.close()
                continue
            return reader, writer
        return None

    async def post(self, url: str, content: bytes, headers: dict[str, str]) -> Response:
        body = content
        key, host, path = self._target(url)
        for k, v in headers.items():
            if any(c in f"{k}{v}" for c in "\r\n\0"):
                # a line break would end the header there and start another one (header injection)
                raise ValueError(f"HTTP header {k!r} contains a line break or NUL; murgat does not send it")
        reuse = key not in self._no_reuse
        head = [f"POST {path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}",
                "Connection: keep-alive" if reuse else "Connection: close"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        idle = self._idle[key]
        for fresh in (False, True):
            conn = None if fresh or not reuse else await self._take_idle(key, idle)
            reused = conn is not None
            reader, writer = conn if conn is not None else await self._open_checked(key)
            keep = False
            progress = _Progress()
            try:
                writer.write(request)
                await writer.drain()
                resp, keep = await self._read(reader, progress)
            except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError) as exc:
                writer.close()
                if reused and not progress.started:
                    continue  # the server had closed the idle connection before answering: retry on a new one
                cut = " in the middle of the response" if progress.started else ""
                raise HttpError(f"connection to {host} failed{cut}: {type(exc).__name__}") from None
            except BaseException:
                writer.close()
                raise
            finally:  # the body is the caller's now, or lost: its bytes go back to the budget
                self._free(progress, progress.held)
            if keep and reuse and key not in self._no_reuse and len(idle) < self.max_idle:
                idle.append((reader, writer))
            else:
                writer.close()
            return resp
        raise HttpError(f"connection to {host} failed")  # pragma: no cover - the loop returns or raises

    async def _open_checked(self, key: tuple[str, str, int]) -> _Conn:
        try:
            return await self._open(key)
        except ssl.SSLError as exc:
            raise HttpConnectError(f"TLS handshake with {key[1]}:{key[2]} failed: {getattr(exc, 'reason', None) or exc}") from None
        except socket.gaierror as exc:
            raise HttpConnectError(f"cannot resolve host {key[1]!r}: {exc.strerror or exc}") from None
        except OSError as exc:
            # asyncio words a refused connection "Connect call failed (addr)": name the errno instead
            why = os.strerror(exc.errno).lower() if exc.errno else (exc.strerror or str(exc) or type(exc).__name__)
            raise HttpConnectError(f"cannot connect to {key[1]}:{key[2]}: {why}") from None

    async def _read(self, reader: asyncio.StreamReader, progress: _Progress) -> tuple[Response, bool]:
        """One final response: interim 1xx replies are read and skipped; ``progress`` holds what its body
        took from the budget (given back by the caller)."""
        while True:
            version, status, headers, lengths = await self._head(reader, progress)
            if 100 <= status < 200:
                if status == 101:
                    raise HttpError("the server switched protocols (101) on a JSON request")
                continue  # 100 Continue, 102, 103 Early Hints: the answer follows
            break
        transfer = codings_of(headers.get("transfer-encoding", ""))
        chunked = bool(transfer) and transfer[-1] == "chunked"
        # the order they were applied in: content codings first, then the transfer codings before chunked
        undo = codings_of(headers.get("content-encoding", "")) + (transfer[:-1] if chunked else transfer)
        check_codings(undo)
        if status in (204, 304):
            content, complete = b"", True
        elif chunked:
            content, complete = await self._chunked(reader, progress), True
        elif transfer:  # RFC 9112 6.3: a transfer coding without chunked last: the body runs until the close
            content, complete = await self._until_close(reader, progress), False
        elif lengths:
            if len(set(lengths)) > 1:
                raise HttpError(f"the response has {len(lengths)} Content-Length fields that disagree "
                                f"({', '.join(sorted(set(lengths)))[:60]}): its end cannot be told")
            value = lengths[0]
            if not (value.isascii() and value.isdigit()):
                raise HttpError(f"bad Content-Length {value[:40]!r}")
            n = int(value)
            self._check_size(n)
            parts: list[bytes] = []
            await self._exactly(reader, n, progress, parts)
            content, complete = self._joined(progress, parts), True
        else:  # the body runs until the server closes
            content, complete = await self._until_close(reader, progress), False
        # both framings at once is how a reply smuggles a second one: read it as chunked, never reuse it
        keep = (complete and version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                and not (transfer and lengths))
        return Response(status, headers, self._decoded(content, undo, progress)), keep

    async def _head(self, reader: asyncio.StreamReader,
                    progress: _Progress) -> tuple[str, int, dict[str, str], list[str]]:
        """Status line and fields of one reply (``Content-Length`` values apart: every one, to compare)."""
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise HttpError(f"response head longer than {MAX_HEAD_BYTES} bytes") from None
        except asyncio.IncompleteReadError as exc:
            progress.started = progress.started or bool(exc.partial)
            raise
        progress.started = True
        progress.head_bytes += len(raw)
        if progress.head_bytes > MAX_HEAD_BYTES:
            raise HttpError(f"response heads (interim replies included) longer than {MAX_HEAD_BYTES} bytes")
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        code = parts[1] if len(parts) > 1 else ""
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not (code.isascii() and code.isdigit()) or len(code) != 3:
            raise HttpError(f"not an HTTP response: {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        lengths: list[str] = []
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                name = k.strip().lower()
                if name == "content-length":
                    lengths += [x.strip() for x in v.split(",")]  # "5, 5" (a folded repeat) is one length
                if name in _LIST_FIELDS and headers.get(name):
                    headers[name] += ", " + v.strip()
                else:
                    headers[name] = v.strip()
        return parts[0], int(code), headers, lengths

    def _check_size(self, n: int) -> None:
        if n > self.max_body:
            raise HttpError(f"response body over the {self.max_body:,}-byte cap (the request failed; "
                            "a judge's answer is never that large)")

    async def _line(self, reader: asyncio.StreamReader, progress: _Progress, what: str) -> bytes:
        """One CRLF-ended line of the chunked framing, counted against :data:`MAX_HEAD_BYTES`."""
        try:
            line = await reader.readuntil(b"\r\n")
        except asyncio.LimitOverrunError:
            raise HttpError(f"{what} longer than {MAX_HEAD_BYTES} bytes") from None
        progress.head_bytes += len(line)
        if progress.head_bytes > MAX_HEAD_BYTES:
            raise HttpError(f"chunk framing and trailers longer than {MAX_HEAD_BYTES} bytes")
        return line

    async def _chunked(self, reader: asyncio.StreamReader, progress: _Progress) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            line = await self._line(reader, progress, "a chunk-size line")
            digits = line[:-2].split(b";", 1)[0].strip(b" \t")
            if not _CHUNK_SIZE.fullmatch(digits):
                raise HttpError(f"bad chunk size {line[:40]!r}")
            size = int(digits, 16)
            if size == 0:
                while await self._line(reader, progress, "a trailer field") != b"\r\n":
                    pass  # trailer fields, then the empty line
                return self._joined(progress, chunks)
            total += size
            self._check_size(total)
            await self._exactly(reader, size, progress, chunks)
            if await reader.readexactly(2) != b"\r\n":
                raise HttpError("chunk not followed by CRLF")

    async def _until_close(self, reader: asyncio.StreamReader, progress: _Progress) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            self._hold(progress, 1 << 16)
            data = await reader.read(1 << 16)
            self._free(progress, (1 << 16) - len(data))
            if not data:
                return self._joined(progress, chunks)
            total += len(data)
            self._check_size(total)
            chunks.append(data)

    def _hold(self, progress: _Progress, n: int) -> None:
        self.budget.take(n, progress.held)
        progress.held += n

    def _free(self, progress: _Progress, n: int) -> None:
        n = min(n, progress.held)
        progress.held -= n
        self.budget.give(n)

    async def _exactly(self, reader: asyncio.StreamReader, n: int, progress: _Progress, parts: list[bytes]) -> None:
        """``n`` bytes of the body onto ``parts``, a :data:`PIECE` at a time, each held before it is read."""
        while n > 0:
            k = min(n, PIECE)
            self._hold(progress, k)
            parts.append(await reader.readexactly(k))
            n -= k

    def _joined(self, progress: _Progress, parts: list[bytes]) -> bytes:
        """The pieces as one body; for a moment both exist, and the budget holds both."""
        if len(parts) <= 1:
            return parts[0] if parts else b""
        total = sum(map(len, parts))
        self._hold(progress, total)
        body = b"".join(parts)
        parts.clear()
        self._free(progress, total)
        return body

    def _decoded(self, body: bytes, codings: list[str], progress: _Progress) -> bytes:
        """``body`` with ``codings`` (in the order applied, each known: :func:`check_codings`) undone."""
        for coding in reversed(codings):
            wbits = DECODERS[coding]
            if wbits is not None and body:
                body = self._inflate(body, coding, wbits, progress)
        return body

    def _inflate(self, data: bytes, coding: str, wbits: int, progress: _Progress) -> bytes:
        """One gzip or deflate layer undone, its output capped at ``max_body`` as it grows (never
        inflated whole first). Several gzip members follow each other; ``deflate`` that is raw (no
        zlib header, as some servers send it) is read as such."""
        out: list[bytes] = []
        total = 0
        d = zlib.decompressobj(wbits)
        rest = data
        while True:
            step = min(PIECE, self.max_body + 1 - total)
            self._hold(progress, step)
            try:
                piece = d.decompress(rest, step)
            except zlib.error as exc:
                self._free(progress, step)
                if coding == "deflate" and wbits > 0 and total == 0:
                    return self._inflate(data, coding, -zlib.MAX_WBITS, progress)
                raise HttpError(f"the response's {coding} body cannot be decoded ({exc})") from None
            self._free(progress, step - len(piece))
            total += len(piece)
            if total > self.max_body:
                raise HttpError(f"response body over the {self.max_body:,}-byte cap once its {coding} coding is "
                                "undone (the request failed; a judge's answer is never that large)")
            out.append(piece)
            if d.unconsumed_tail:
                rest = d.unconsumed_tail
            elif not d.eof:
                raise HttpError(f"the response's {coding} body is cut short")
            elif d.unused_data and wbits == DECODERS["gzip"]:
                rest, d = d.unused_data, zlib.decompressobj(wbits)  # the next gzip member
            elif d.unused_data:
                raise HttpError(f"the response's {coding} body has {len(d.unused_data)} byte(s) after its end")
            else:
                return self._joined(progress, out)

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for _, w in conns:
                w.close()
        self._idle.clear()


def codings_of(field: str) -> list[str]:
    """A ``Transfer-Encoding`` or ``Content-Encoding`` value as its list of codings, lower case, in order
    (parameters after ``;`` are kept: a coding with parameters is no coding this client knows)."""
    return [c.strip().lower() for c in field.split(",") if c.strip()]


def check_codings(codings: list[str]) -> None:
    """Refuse, before the body is read, a coding this client cannot undo (``chunked`` among them: it
    is a framing, valid only once and last in ``Transfer-Encoding``)."""
    if "chunked" in codings:
        raise HttpError("the response's Transfer-Encoding has chunked other than once and last: its end cannot be told")
    unknown = [c for c in codings if c not in DECODERS]
    if unknown:
        raise HttpError(f"the response uses the coding {unknown[0][:40]!r}, which murgat's HTTP clients cannot "
                        "undo with its output capped as it grows (they read chunked, gzip, deflate and identity; "
                        "the httpx and SDK clients ask for no other)")


def _buffered(reader: asyncio.StreamReader) -> int:
    """Bytes waiting in ``reader`` (asyncio has no public peek; ``_buffer`` is the stream's bytearray)."""
    return len(getattr(reader, "_buffer", b""))
