"""The response-body cap and shared budget of :mod:`murgat.judges.http`, for the httpx and SDK clients.

Why: the lean client refuses a body over :data:`~murgat.judges.http.MAX_BODY_BYTES` and counts every
body being read against the process's :data:`~murgat.judges.http.BODY_BUDGET`; ``-J client=httpx``,
``-J client=sdk`` (the openai SDK, on ``httpx2``) and google-genai read whatever a server sends into
memory. A lying server (a ``Content-Length`` of 1 GB, a chunked body that never ends, a small gzip
body that inflates a thousandfold) grew the process until it was killed, and every item of the run
was lost with it.

One mechanism serves them all: :func:`client_hooks` is a pair of httpx event hooks (``httpx`` and
``httpx2`` call them the same way, so one hook serves both libraries and every SDK built on them).
The request hook asks only for the codings that can be undone with a cap (``gzip``, ``deflate``); the
response hook runs before the body is read and

* refuses a declared ``Content-Length`` over the cap, and a coding it cannot undo, before a byte of the
  body is read;
* puts :class:`CappedBody` in place of the response's stream: it counts the bytes as they arrive, undoes
  the content codings itself a piece at a time (and removes ``Content-Encoding``, so the library does
  not undo them again), fails at the cap, and holds what it gives the library in the shared budget until
  the response is closed.

Each failure is :class:`~murgat.judges.http.HttpError` with the reason, raised from the library's
``send``: the judge reports it as that item's error (retried with backoff, as the lean client's), and
the run goes on. Hooks rather than a transport: a client given its own transport stops honouring the
proxy settings, which is what ``-J client=httpx`` is for.
"""

from __future__ import annotations

import functools
import importlib
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from murgat.judges import http
from murgat.judges.http import BodyBudget, HttpError

#: what the request hook asks for: the codings :class:`CappedBody` undoes with its output capped
ACCEPTED = "gzip, deflate"

Hook = Callable[[Any], Awaitable[None]]


class _Layer:
    """One ``gzip``/``deflate`` coding undone as its bytes arrive, a :data:`~murgat.judges.http.PIECE`
    of output at a time (never a whole body inflated first). Several gzip members follow each other; a
    ``deflate`` body without its zlib header (as some servers send it) is read as raw deflate."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self.wbits = http.DECODERS[coding] or 0
        self._d = zlib.decompressobj(self.wbits)
        self._fed = False

    def undo(self, data: bytes) -> Iterator[bytes]:
        rest = data
        while rest:
            if self._d.eof:
                rest = self._next_member(rest)
            try:
                piece = self._d.decompress(rest, http.PIECE)
            except zlib.error as exc:
                if self.coding == "deflate" and self.wbits > 0 and not self._fed:
                    self.wbits = -zlib.MAX_WBITS
                    self._d = zlib.decompressobj(self.wbits)
                    continue
                raise HttpError(f"the response's {self.coding} body cannot be decoded ({exc})") from None
            self._fed = True
            if piece:
                yield piece
            rest = self._d.unused_data if self._d.eof else self._d.unconsumed_tail

    def _next_member(self, rest: bytes) -> bytes:
        if self.wbits != http.DECODERS["gzip"]:
            raise HttpError(f"the response's {self.coding} body has {len(rest)} byte(s) after its end")
        self._d = zlib.decompressobj(self.wbits)
        return rest

    def end(self) -> None:
        if self._fed and not self._d.eof:
            raise HttpError(f"the response's {self.coding} body is cut short")


class CappedBody:
    """A response's byte stream, read through the cap and the budget (see the module docstring).

    ``raw`` is the library's stream (an async iterable of the bytes on the wire, with ``aclose``);
    ``codings`` the content codings in the order they were applied."""

    def __init__(self, raw: Any, codings: list[str], max_body: int, budget: BodyBudget) -> None:
        self._raw = raw
        self._layers = [_Layer(c) for c in reversed(codings) if http.DECODERS[c] is not None]
        self.max_body = max_body
        self.budget = budget
        self.held = 0
        self._wire = 0
        self._body = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._raw:
                self._wire += len(chunk)
                if self._wire > self.max_body:
                    raise HttpError(_over(self.max_body, "as it arrived"))
                for piece in self._through(chunk, 0):
                    yield self._counted(piece)
            for layer in self._layers:
                layer.end()
        except BaseException:
            self._give_back()
            raise

    def _through(self, data: bytes, i: int) -> Iterator[bytes]:
        """``data`` undone by the layers from ``i`` on."""
        if i == len(self._layers):
            yield data
            return
        for piece in self._layers[i].undo(data):
            yield from self._through(piece, i + 1)

    def _counted(self, piece: bytes) -> bytes:
        """A piece of the body as the library keeps it: counted against the cap and held in the budget."""
        self._body += len(piece)
        if self._body > self.max_body:
            raise HttpError(_over(self.max_body, "once its content coding was undone" if self._layers else "as it arrived"))
        self.budget.take(len(piece), self.held)
        self.held += len(piece)
        return piece

    def _give_back(self) -> None:
        held, self.held = self.held, 0
        self.budget.give(held)

    async def aclose(self) -> None:
        """The response is closed (read whole, or abandoned): its bytes go back to the budget."""
        self._give_back()
        await self._raw.aclose()


@functools.cache
def _stream_class(library: str) -> type[CappedBody]:
    """:class:`CappedBody` as a stream of ``library`` (``httpx`` or ``httpx2``): its responses read only
    their own ``AsyncByteStream`` subclasses."""
    base = importlib.import_module(library).AsyncByteStream
    return type("CappedBody", (CappedBody, base), {})


def _over(cap: int, when: str) -> str:
    return (f"response body over the {cap:,}-byte cap {when} (the request failed; a judge's answer is never "
            "that large)")


def client_hooks(max_body: int | None = None, budget: BodyBudget | None = None) -> dict[str, list[Hook]]:
    """``event_hooks`` for an ``httpx``/``httpx2`` ``AsyncClient`` that caps its response bodies: at
    ``max_body`` each (default :data:`~murgat.judges.http.MAX_BODY_BYTES` as it is now), all of them
    together at ``budget`` (default the process's, shared with the lean client)."""
    cap = http.MAX_BODY_BYTES if max_body is None else max_body
    shared = budget or http.BODY_BUDGET

    async def ask(request: Any) -> None:
        request.headers["accept-encoding"] = ACCEPTED

    async def capped(response: Any) -> None:
        codings = http.codings_of(", ".join(response.headers.get_list("content-encoding")))
        http.check_codings(codings)
        length = response.headers.get("content-length")
        if length is not None and length.strip().isdigit() and int(length) > cap:
            raise HttpError(_over(cap, f"(it declares {int(length):,} bytes)"))
        if codings:
            del response.headers["content-encoding"]
            response.headers.pop("content-length", None)  # the length of the coded bytes, not of the body
        response.stream = _stream_class(type(response).__module__.split(".")[0])(response.stream, codings, cap, shared)

    return {"request": [ask], "response": [capped]}
