"""Program values as text, and traces as JSON, built piece by piece under a size budget.

Why this exists: a program value inside every interpreter budget (at most 20,000 parts) can
still be enormous as text, since one part may be a 99-character string whose ``repr`` is ten
times longer (``"\\U000e0000"`` escapes): ``str()`` of such a list is ~20 MB, built in one C
call that no step or time budget can interrupt. Sent as an operation's argument it became a
20 MB prompt, and serialising the trace that held it several times over needed 2 GiB: the
process aborted inside the serializer (exit 134), where no ``except`` can catch it, and every
other item of the run lost its record. So nothing a program made becomes text except through
:func:`text_of`, which stops at a character limit *while* building (never after), and a trace
is written only through :func:`writable`, whose output is bounded whatever it is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: an integer's decimal digits per bit (log10 2), to size ``str(n)`` before building it
_DIGITS_PER_BIT = 0.30103


def _parts(value: list[Any] | tuple[Any, ...] | dict[Any, Any]) -> Iterator[str | tuple[Any]]:
    """What ``repr`` of a container writes, in order: literal pieces (``str``) and the values
    to write in between (1-tuples). Mirrors CPython's list, tuple and dict ``repr``."""
    if isinstance(value, dict):
        yield "{"
        for i, (k, v) in enumerate(value.items()):
            if i:
                yield ", "
            yield (k,)
            yield ": "
            yield (v,)
        yield "}"
        return
    opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
    yield opening
    for i, x in enumerate(value):
        if i:
            yield ", "
        yield (x,)
    if isinstance(value, tuple) and len(value) == 1:
        yield ","
    yield closing


def _scalar(value: Any, quote: bool, room: int) -> tuple[str, bool]:
    """``repr(value)`` (``quote``) or ``str(value)`` of a non-container, and whether it fits in
    ``room`` characters. A piece that cannot fit is not built whole: only enough of it for a
    preview (so a 50,000-character string costs at most ``room`` characters of work)."""
    if isinstance(value, str):
        if len(value) + (2 if quote else 0) > room:
            head = value[: max(room, 0)]
            return (repr(head) if quote else head), False
        return (repr(value) if quote else value), True
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() * _DIGITS_PER_BIT > room + 1:
            return "", False  # too long to write: never converted
    text = repr(value) if quote else str(value)
    return text, len(text) <= room


def text_of(value: Any, limit: int, *, quote: bool = False) -> tuple[str, bool]:
    """``str(value)`` (``repr`` with ``quote``) and whether it is complete: exactly what
    Python writes when it is at most ``limit`` characters, else its first ``limit``
    characters (and ``False``). The work done is proportional to what is written, never to
    the value's full text; containers are walked with an explicit stack (no recursion)."""
    if value.__class__ is str and not quote:  # the common case (an argument that is text), without a walk
        return (value, True) if len(value) <= limit else (value[:limit], False)
    out: list[str] = []
    size = 0

    def emit(piece: str, fits: bool = True) -> bool:
        nonlocal size
        room = limit - size
        if not fits or len(piece) > room:
            out.append(piece[: max(room, 0)])
            size = limit
            return False
        out.append(piece)
        size += len(piece)
        return True

    if not isinstance(value, list | tuple | dict):
        piece, fits = _scalar(value, quote, limit)
        ok = emit(piece, fits)
        return "".join(out), ok
    stack: list[Iterator[str | tuple[Any]]] = [_parts(value)]
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            continue
        if isinstance(nxt, str):
            if not emit(nxt):
                return "".join(out), False
            continue
        (x,) = nxt
        if isinstance(x, list | tuple | dict):
            stack.append(_parts(x))
            continue
        piece, fits = _scalar(x, True, limit - size)
        if not emit(piece, fits):
            return "".join(out), False
    return "".join(out), True


def preview(value: Any, limit: int = 80) -> str:
    """A short ``repr`` of ``value`` for a message (cut with an ellipsis; never built whole)."""
    text, complete = text_of(value, limit, quote=True)
    return text if complete else text + "…"


#: how deeply a trace or record value may nest when written (pydantic refuses ~255 levels)
TRACE_MAX_DEPTH = 24
#: the most characters of strings one trace (or record) keeps in all
TRACE_MAX_CHARS = 4_000_000
#: the most characters one string of a trace keeps (a planner's answer, a judge's reply)
TRACE_MAX_STRING = 1_000_000
#: the most items one list (or entries one dict) of a trace keeps
TRACE_MAX_ITEMS = 10_000


#: the part of a trace's budget kept for its small pieces (keys, short strings, numbers): a long
#: value may not spend it, so one 9.7 MB output or four 1.1 MB replans never cost the trace the
#: keys after them (its ``ops``, ``error``, step counts)
TRACE_RESERVE = 256_000
#: a string this short is a small piece (an operation's name, a status, a short error)
SMALL_STRING = 200


@dataclass
class Budget:
    """What one :func:`writable` call may still write; ``cut`` counts what it left out.

    Strings longer than :data:`SMALL_STRING` may only spend ``chars`` above ``reserve``; keys,
    short strings and numbers may spend all of it, so the shape of a value (every key, then each
    value, cut with a note when it is long) survives a value that would fill the budget alone."""

    chars: int = TRACE_MAX_CHARS
    max_string: int = TRACE_MAX_STRING
    max_items: int = TRACE_MAX_ITEMS
    cut: int = 0
    #: ``-1``: :data:`TRACE_RESERVE`, or a sixteenth of ``chars`` when that is less
    reserve: int = -1

    def __post_init__(self) -> None:
        if self.reserve < 0:
            self.reserve = min(TRACE_RESERVE, self.chars // 16)


def _text(value: str, budget: Budget) -> str:
    room = budget.chars if len(value) <= SMALL_STRING else budget.chars - budget.reserve
    keep = min(len(value), budget.max_string, max(room, 0))
    budget.chars -= keep + 1
    head = value if keep == len(value) else value[:keep]
    try:
        head.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates become their escape text
        head = head.encode("utf-8", "backslashreplace").decode("utf-8")
    if keep < len(value):
        budget.cut += 1
        return f"{head}…[{len(value) - keep} more characters not kept]"
    return head


def writable(value: Any, budget: Budget | None = None, depth: int = 0) -> Any:
    """``value`` as plain JSON that can always be written, and of bounded size: lone
    surrogates (a program's ``"\\ud800"``, a model's broken text) become their ``\\udXXX``
    escape text; values nested deeper than :data:`TRACE_MAX_DEPTH` are cut to a marker;
    strings, lists and the whole value are cut (with a marker saying how much) at the
    :class:`Budget`'s limits; anything else becomes its ``str``. Why: one unwritable trace
    (``model_dump_json`` raising) used to end the whole run, and one enormous trace aborted
    the process in the serializer."""
    budget = budget if budget is not None else Budget()
    if isinstance(value, str):
        return _text(value, budget)
    if value is None or isinstance(value, bool | int | float):
        budget.chars -= 1
        return value
    if depth >= TRACE_MAX_DEPTH:
        budget.cut += 1
        return f"<{type(value).__name__} nested deeper than {TRACE_MAX_DEPTH} levels, not kept>"
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= budget.max_items or budget.chars <= 0:
                budget.cut += 1
                out["…"] = f"[{len(value) - i} more entries not kept]"
                break
            key = k if isinstance(k, str) else text_of(k, 200)[0]
            out[_text(key, budget)] = writable(v, budget, depth + 1)
        return out
    if isinstance(value, list | tuple):
        items: list[Any] = []
        for i, v in enumerate(value):
            if i >= budget.max_items or budget.chars <= 0:
                budget.cut += 1
                items.append(f"…[{len(value) - i} more items not kept]")
                break
            items.append(writable(v, budget, depth + 1))
        return items
    return _text(text_of(value, budget.max_string)[0], budget)


__all__ = ["SMALL_STRING", "TRACE_MAX_CHARS", "TRACE_MAX_DEPTH", "TRACE_MAX_ITEMS", "TRACE_MAX_STRING",
           "TRACE_RESERVE", "Budget", "preview", "text_of", "writable"]
