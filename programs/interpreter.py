"""A small interpreter that walks a checked program's AST; Python never runs the program.

The interpreter evaluates only the node kinds :mod:`murgat.programs.safety` allows. Its one way
to affect the world is the :class:`Api` it is given (find / describe / synthesize); every
other value is a plain str, int, float, bool, None, list, dict or :class:`TimeRange`.
Budgets are enforced as it goes: work, operation calls, wall time, and the size of every
string, list and integer it makes (so ``"a" * 10**9`` and growing a list in a loop stop at
the limit instead of eating memory). Work is counted in steps: one per node evaluated, plus
one per container part a step makes or walks and one per 100 characters of string it makes,
so a step that touches a thousand-item list costs a thousand steps, not one.

Why arguments are checked *before* a builtin runs: ``round``, ``format``, ``int`` and
``str`` do their work inside one C call, which no step or time budget can interrupt
(``round(1, -10**9)`` or a format width of 10^9 would hang or eat gigabytes first).

Values become text only through :func:`murgat.programs.bounded.text_of`, which stops at a
character limit while it writes: ``str()``, f-strings, and every argument handed to an
operation (each with its own limit, named in the stop: "describe's instruction is longer
than 10,000 characters as text"). A value inside the part budget can still be ~20 MB of
text (a part may be a string whose ``repr`` is ten times its length), and that text used to
become a prompt and a trace too big to write.

Why the interpreter yields to the event loop every ``yield_steps`` steps: its work is
CPU-bound, and an event loop that never gets control cannot fire ``--program-timeout`` or
serve the other items in flight. With the yield, a program is cancelled at its time limit
wherever it is, and other items go on while it runs.

Failure policy: :meth:`Interpreter.run` raises :class:`ProgramStopped` and nothing else
(an exception raised inside an allowed operation becomes a stop naming the line and
column of the node that raised it), so one program can only ever end its own item; the
one exception is what the :class:`Api` names a failure of the whole run (a replay miss).
"""

from __future__ import annotations

import ast
import asyncio
import operator
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from murgat.programs.bounded import preview, text_of
from murgat.programs.safety import BUILTINS, ENTRY, Checked, Limits


class ProgramStopped(RuntimeError):
    """The program broke a budget or a rule while running; the message says which."""

    def __init__(self, message: str, node: ast.AST | None = None) -> None:
        self.reason = message
        self.line: int | None = getattr(node, "lineno", None)
        self.col: int | None = getattr(node, "col_offset", None)
        where = f"line {self.line}, column {self.col}: " if self.line is not None else ""
        super().__init__(where + message)


@dataclass(frozen=True)
class TimeRange:
    """A span of the media found or named by a program (seconds)."""

    start: float
    end: float
    modality: str | None = None
    source: str = "planner"

    def __str__(self) -> str:
        from murgat.core.citations import format_time

        return f"{format_time(self.start)}-{format_time(self.end)}"


class Api:
    """What a program can do. Subclasses implement the three operations."""

    async def find(self, query: str, modality: str) -> list[TimeRange]:  # pragma: no cover - interface
        raise NotImplementedError

    async def describe(self, ranges: Any, modality: str, instruction: str) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    async def synthesize(self, instruction: str, options: list[str] | None = None) -> str:  # pragma: no cover
        raise NotImplementedError

    def is_run_failure(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by an operation, is the whole run's failure (a replay miss,
        a lost cluster) rather than this program's: such exceptions leave
        :meth:`Interpreter.run` unchanged, everything else becomes a :class:`ProgramStopped`."""
        return False


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_PLAIN = (str, int, float, bool, type(None), TimeRange)


#: the largest ``ndigits`` of ``round`` (``round(1, -10**9)`` computes 10**(10**9) in C)
_MAX_NDIGITS = 32
#: the largest width or precision in a format spec (a width of 10**9 builds a 1 GB string in C)
_MAX_FORMAT_FIELD = 1_000
#: the largest integer written as text (~3,900 digits, under Python's own 4,300-digit limit)
_MAX_TEXT_INT_BITS = 13_000
#: the longest text ``int()`` converts (C's text-to-int is quadratic; any longer is out of range anyway)
_MAX_INT_TEXT = 64


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Interpreter:
    """Runs one checked program against an :class:`Api`, within :class:`Limits`."""

    def __init__(self, api: Api, limits: Limits | None = None, options: list[str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.api = api
        self.lim = limits or Limits()
        self.options = list(options or [])
        self.steps = 0
        self.ops = 0
        self.clock = clock
        self.started = 0.0
        self.env: dict[str, Any] = {}
        # (value, weight, height) of containers already measured, by identity. Program values
        # are never mutated (no item assignment, no methods), so an entry stays true while its
        # value lives; the entry holds the value so its id cannot be reused. Bounded: at
        # ``max_memo`` entries it starts again (a miss only costs a walk, which is charged).
        self._memo: dict[int, tuple[Any, int, int]] = {}
        self._touched = 0
        self._next_yield = self.lim.yield_steps

    # ----- budgets -----
    def _tick(self, node: ast.AST) -> None:
        self._charge(1, node)

    def _charge(self, units: int, node: ast.AST) -> None:
        """Count ``units`` of work; stop past ``max_steps`` or ``max_seconds``."""
        before = self.steps
        self.steps += units
        if self.steps > self.lim.max_steps:
            raise ProgramStopped(f"more than {self.lim.max_steps} interpreter steps", node)
        if self.steps // 64 != before // 64 and self.clock() - self.started > self.lim.max_seconds:
            raise ProgramStopped(f"ran longer than {self.lim.max_seconds:g} s", node)

    def _measure(self, value: Any, node: ast.AST, level: int) -> tuple[int, int]:
        """(weight, height) of a value. Weight counts shared parts each time they appear (what
        str() or == would walk): ``a = [a, a]`` repeated doubles it, so nesting cannot hide
        exponential size. Height is the nesting depth, capped so that no later walk (str(),
        ==, writing the trace) can overflow a stack. Each container visited adds to
        ``_touched``, which the caller charges as work."""
        if isinstance(value, str):
            return 1 + len(value) // 100, 0
        if not isinstance(value, list | tuple | dict):
            return 1, 0
        self._touched += 1
        memo = self._memo.get(id(value))
        if memo is not None and memo[0] is value:
            weight, height = memo[1], memo[2]
        else:
            if level >= self.lim.max_value_depth:
                raise ProgramStopped(f"value nested deeper than {self.lim.max_value_depth} levels", node)
            weight, height = 1, 0
            for it in (value.items() if isinstance(value, dict) else value):
                for x in (it if isinstance(value, dict) else (it,)):
                    self._touched += 1
                    w, h = self._measure(x, node, level + 1)
                    weight, height = weight + w, max(height, h)
                if weight > self.lim.max_weight:
                    break
            height += 1
            if len(self._memo) >= self.lim.max_memo:
                self._memo.clear()
            self._memo[id(value)] = (value, weight, height)
        if level + height > self.lim.max_value_depth:
            raise ProgramStopped(f"value nested deeper than {self.lim.max_value_depth} levels", node)
        return weight, height

    def _cost(self, value: Any, node: ast.AST) -> int:
        """What walking ``value`` costs (a comparison or membership test walks it in C)."""
        if isinstance(value, str):
            return len(value) // 100
        if isinstance(value, list | tuple | dict):
            return self._measure(value, node, 0)[0]
        return 0

    def _sized(self, value: Any, node: ast.AST) -> Any:
        if isinstance(value, str):
            if len(value) > self.lim.max_str:
                raise ProgramStopped(f"string longer than {self.lim.max_str} characters", node)
            self._charge(len(value) // 100, node)
        if isinstance(value, list | tuple | dict):
            if len(value) > self.lim.max_list:
                raise ProgramStopped(f"list longer than {self.lim.max_list} items", node)
            before = self._touched
            weight, _ = self._measure(value, node, 0)
            if weight > self.lim.max_weight:
                raise ProgramStopped(f"nested value larger than {self.lim.max_weight} parts", node)
            self._charge(self._touched - before, node)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > self.lim.max_int:
            raise ProgramStopped(f"integer beyond {self.lim.max_int}", node)
        if isinstance(value, float) and (value != value or abs(value) == float("inf")):
            raise ProgramStopped("non-finite number", node)
        return value

    def _op(self, node: ast.AST) -> None:
        self.ops += 1
        if self.ops > self.lim.max_ops:
            raise ProgramStopped(f"more than {self.lim.max_ops} operation calls", node)

    def _text(self, value: Any, limit: int, what: str, node: ast.AST) -> str:
        """``str(value)``, refused past ``limit`` characters before it is built whole, and
        charged as work (one step per 100 characters written)."""
        if value.__class__ is str and len(value) <= limit:  # the common case, without a walk
            if len(value) >= 100:
                self._charge(len(value) // 100, node)
            return value
        if not isinstance(value, _TEXTABLE):
            raise ProgramStopped(f"{what}: this value cannot be written as text", node)
        if value.__class__ is int:
            self._check_int(value, node)
        text, complete = text_of(value, limit)
        self._charge(len(text) // 100, node)
        if not complete:
            raise ProgramStopped(f"{what} is longer than {limit:,} characters as text", node)
        return text

    async def _pace(self) -> None:
        """Give the event loop its turn (every ``yield_steps`` steps; see the module docstring)."""
        self._next_yield = self.steps + self.lim.yield_steps
        await asyncio.sleep(0)

    # ----- entry points -----
    async def run(self, checked: Checked) -> Any:
        """Run a logic program's ``execute_command`` or a narrative program's statements.

        Raises :class:`ProgramStopped` and no other exception (cancellation aside)."""
        try:
            return await self._run(checked)
        except ProgramStopped:
            raise
        except (RecursionError, MemoryError) as exc:
            raise ProgramStopped(f"values nested or grown past the interpreter's limits ({type(exc).__name__})") from None
        except Exception as exc:  # whatever an operation raised ends this program, not the run
            if self.api.is_run_failure(exc):
                raise
            raise ProgramStopped(_exc_text(exc)) from None

    async def _run(self, checked: Checked) -> Any:
        self.started = self.clock()
        if checked.kind == "logic":
            assert checked.entry is not None
            params = [a.arg for a in checked.entry.args.args]
            values = ["video", self.options][: len(params)]
            self.env = dict(zip(params, values, strict=True))
            if len(params) >= 1:
                self.env[params[0]] = _VIDEO
            try:
                await self._block(checked.entry.body)
            except _Return as r:
                return r.value
            return None
        self.env = {"video": _VIDEO, "options": self.options}
        last = None
        for stmt in checked.tree.body:
            try:
                await self._stmt(stmt)
            except _Return as r:
                return r.value
            if isinstance(stmt, ast.Expr):
                last = self.env.get("_")
        return last

    # ----- statements -----
    async def _block(self, body: list[ast.stmt]) -> None:
        for s in body:
            await self._stmt(s)

    async def _stmt(self, s: ast.stmt) -> None:
        if self.steps >= self._next_yield:  # checked here, so that the common case makes no coroutine
            await self._pace()
        try:
            await self._stmt_node(s)
        except Exception as exc:  # an operation's own error, at this statement's line
            if self._passes_through(exc):
                raise
            raise ProgramStopped(_exc_text(exc), s) from None

    def _passes_through(self, exc: Exception) -> bool:
        """Whether an error leaves the program as it is rather than as a :class:`ProgramStopped` at the
        node where it was raised: the program's own control flow, a stop already placed, the
        interpreter's own limits (recursion, memory) and a failure of the whole run (the API says which)."""
        return isinstance(exc, _PASS_THROUGH) or self.api.is_run_failure(exc)

    async def _stmt_node(self, s: ast.stmt) -> None:
        self._tick(s)
        if isinstance(s, ast.Expr):
            self.env["_"] = await self._eval(s.value)
        elif isinstance(s, ast.Assign):
            value = await self._eval(s.value)
            for t in s.targets:
                self._assign(t, value)
        elif isinstance(s, ast.AugAssign):
            cur = self._name(s.target.id, s) if isinstance(s.target, ast.Name) else None
            value = await self._eval(s.value)
            self._assign(s.target, self._binop(type(s.op), cur, value, s))
        elif isinstance(s, ast.If):
            if await self._eval(s.test):
                await self._block(s.body)
            else:
                await self._block(s.orelse)
        elif isinstance(s, ast.For):
            it = await self._eval(s.iter)
            if not isinstance(it, list | tuple | str | dict):
                raise ProgramStopped(f"cannot loop over {type(it).__name__}", s)
            for v in list(it):
                self._tick(s)
                self._assign(s.target, v)
                try:
                    await self._block(s.body)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(s, ast.Return):
            raise _Return(await self._eval(s.value) if s.value is not None else None)
        elif isinstance(s, ast.Break):
            raise _Break
        elif isinstance(s, ast.Continue):
            raise _Continue
        elif isinstance(s, ast.Pass):
            return
        else:  # pragma: no cover - the checker refuses everything else
            raise ProgramStopped(f"{type(s).__name__} cannot run", s)

    def _assign(self, target: ast.AST, value: Any) -> None:
        if isinstance(target, ast.Name):
            if target.id in ("video",) or target.id in BUILTINS:
                raise ProgramStopped(f"cannot rebind {target.id!r}", target)
            self.env[target.id] = value
            return
        if isinstance(target, ast.Tuple | ast.List):
            if not isinstance(value, list | tuple) or len(value) != len(target.elts):
                raise ProgramStopped("cannot unpack", target)
            for t, v in zip(target.elts, value, strict=True):
                self._assign(t, v)
            return
        raise ProgramStopped("bad assignment target", target)  # pragma: no cover

    def _name(self, name: str, node: ast.AST) -> Any:
        if name in self.env:
            return self.env[name]
        raise ProgramStopped(f"name {name!r} is not defined", node)

    # ----- expressions -----
    async def _eval(self, e: ast.expr) -> Any:
        try:
            return await self._eval_node(e)
        except Exception as exc:  # the innermost node that raised names the line and column
            if self._passes_through(exc):
                raise
            raise ProgramStopped(_exc_text(exc), e) from None

    async def _eval_node(self, e: ast.expr) -> Any:
        self._tick(e)
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            return self._name(e.id, e)
        if isinstance(e, ast.List | ast.Tuple):
            return self._sized([await self._eval(x) for x in e.elts], e)
        if isinstance(e, ast.Dict):
            return await self._eval_dict(e)
        if isinstance(e, ast.JoinedStr):
            return await self._eval_fstring(e)
        if isinstance(e, ast.BinOp):
            return self._binop(type(e.op), await self._eval(e.left), await self._eval(e.right), e)
        if isinstance(e, ast.UnaryOp):
            return await self._eval_unary(e)
        if isinstance(e, ast.BoolOp):
            return await self._eval_boolop(e)
        if isinstance(e, ast.Compare):
            return await self._eval_compare(e)
        if isinstance(e, ast.IfExp):
            return await self._eval(e.body) if await self._eval(e.test) else await self._eval(e.orelse)
        if isinstance(e, ast.Subscript):
            return await self._eval_subscript(e)
        if isinstance(e, ast.Call):
            return await self._call(e)
        if isinstance(e, ast.Attribute):
            raise ProgramStopped("attributes can only be called", e)
        raise ProgramStopped(f"{type(e).__name__} cannot be evaluated", e)  # pragma: no cover

    async def _eval_dict(self, e: ast.Dict) -> Any:
        """A dict display: plain keys only, no ``**``, its size checked."""
        out = {}
        for k, v in zip(e.keys, e.values, strict=True):
            if k is None:
                raise ProgramStopped("no ** in dict displays", e)
            key = await self._eval(k)
            if not isinstance(key, str | int | float | bool | type(None)):
                raise ProgramStopped("dict keys must be plain values", e)
            out[key] = await self._eval(v)
        return self._sized(out, e)

    async def _eval_fstring(self, e: ast.JoinedStr) -> Any:
        """An f-string, stopped as soon as it grows past ``max_str``."""
        parts, total = [], 0
        for v in e.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                assert isinstance(v, ast.FormattedValue)
                got = await self._eval(v.value)
                parts.append(self._format(got, v, self.lim.max_str - total))
            total += len(parts[-1])
            if total > self.lim.max_str:
                raise ProgramStopped(f"string longer than {self.lim.max_str} characters", e)
        return self._sized("".join(parts), e)

    async def _eval_unary(self, e: ast.UnaryOp) -> Any:
        """``not`` on anything, unary minus/plus on numbers only."""
        v = await self._eval(e.operand)
        if isinstance(e.op, ast.Not):
            return not v
        if not isinstance(v, int | float) or isinstance(v, bool):
            raise ProgramStopped("unary minus/plus on a non-number", e)
        return -v if isinstance(e.op, ast.USub) else +v

    async def _eval_boolop(self, e: ast.BoolOp) -> Any:
        """``and``/``or``, short-circuiting as Python does (the deciding value is the result)."""
        val: Any = None
        for x in e.values:
            val = await self._eval(x)
            if isinstance(e.op, ast.And) and not val:
                return val
            if isinstance(e.op, ast.Or) and val:
                return val
        return val

    async def _eval_compare(self, e: ast.Compare) -> Any:
        """A comparison chain, each comparison charged by its operands' size."""
        left = await self._eval(e.left)
        for op, comp in zip(e.ops, e.comparators, strict=True):
            right = await self._eval(comp)
            try:
                self._charge(self._cost(left, e) + self._cost(right, e), e)
                ok = _CMPOPS[type(op)](left, right)
            except TypeError as exc:
                raise ProgramStopped(f"cannot compare: {exc}", e) from None
            if not ok:
                return False
            left = right
        return True

    async def _eval_subscript(self, e: ast.Subscript) -> Any:
        """An index or a slice (whole-number bounds, a non-zero step), a bad index named."""
        base = await self._eval(e.value)
        if isinstance(e.slice, ast.Slice):
            lo = await self._eval(e.slice.lower) if e.slice.lower else None
            hi = await self._eval(e.slice.upper) if e.slice.upper else None
            st = await self._eval(e.slice.step) if e.slice.step else None
            if not isinstance(base, list | tuple | str):
                raise ProgramStopped("slicing needs a list or a string", e)
            if any(x is not None and not isinstance(x, int) for x in (lo, hi, st)):
                raise ProgramStopped("slice bounds and step must be whole numbers", e)
            if st == 0:
                raise ProgramStopped("slice step cannot be zero", e)
            return self._sized(base[slice(lo, hi, st)], e)
        key = await self._eval(e.slice)
        try:
            return base[key]
        except (KeyError, IndexError, TypeError) as exc:
            raise ProgramStopped(f"bad index {preview(key)}: {type(exc).__name__}", e) from None

    def _format(self, val: Any, v: ast.FormattedValue, room: int) -> str:
        """One ``{...}`` of an f-string (``!r`` first, then the spec, as Python does), written in
        at most ``room`` characters (what is left of ``max_str``); the f-string charges its
        whole result."""
        if not isinstance(val, (*_PLAIN, list, dict, tuple)):
            raise ProgramStopped("only plain values can be formatted", v)
        self._check_int(val, v)
        too_long = f"string longer than {self.lim.max_str} characters"
        if v.conversion == ord("r"):
            val, complete = text_of(val, max(room, 0), quote=True)
            if not complete:
                raise ProgramStopped(too_long, v)
        spec = ""
        if v.format_spec is not None:
            assert isinstance(v.format_spec, ast.JoinedStr)
            spec = "".join(str(c.value) for c in v.format_spec.values if isinstance(c, ast.Constant))
            if len(spec) > 10 or not all(ch in "0123456789.<>^+-fdegs%," for ch in spec):
                raise ProgramStopped("format spec not allowed", v)
            if any(int(n) > _MAX_FORMAT_FIELD for n in re.findall(r"[0-9]+", spec)):
                raise ProgramStopped(f"format width or precision beyond {_MAX_FORMAT_FIELD}", v)
        if spec:
            if isinstance(val, list | tuple | dict):  # refused before any text is made
                raise ProgramStopped(f"bad format spec: {type(val).__name__} takes no format spec", v)
            try:  # a scalar or a string within max_str, padded to at most _MAX_FORMAT_FIELD
                return format(val, spec)
            except (ValueError, TypeError) as exc:
                raise ProgramStopped(f"bad format spec: {exc}", v) from None
        if val.__class__ in _SCALARS or val.__class__ is str:  # no walk: short, or already text
            text = str(val)
            complete = len(text) <= room
        else:
            text, complete = text_of(val, max(room, 0))
        if not complete:
            raise ProgramStopped(too_long, v)
        return text

    def _check_int(self, val: Any, node: ast.AST) -> None:
        """Refuse, before any conversion to text, an integer the program could not have made
        (Python's own int→str digit limit would raise, and without it the conversion is
        quadratic in one C call)."""
        if isinstance(val, int) and not isinstance(val, bool) and (
                abs(val) > self.lim.max_int or val.bit_length() > _MAX_TEXT_INT_BITS):
            raise ProgramStopped(f"integer beyond {self.lim.max_int} or too long to write as text", node)

    def _binop(self, op: type, a: Any, b: Any, node: ast.AST) -> Any:
        if op is ast.Mult and (isinstance(a, str | list | tuple) or isinstance(b, str | list | tuple)):
            n = b if isinstance(a, str | list | tuple) else a
            seq = a if isinstance(a, str | list | tuple) else b
            if not isinstance(n, int) or len(seq) * max(0, n) > self.lim.max_str:
                raise ProgramStopped("repetition beyond the size limit", node)
        if op is ast.Mod and isinstance(a, str):
            raise ProgramStopped("%-formatting of strings is not allowed (use f-strings)", node)
        for v in (a, b):
            if not isinstance(v, str | int | float | list | tuple | type(None)):
                raise ProgramStopped(f"no arithmetic on {type(v).__name__}", node)
        try:
            return self._sized(_BINOPS[op](a, b), node)
        except (TypeError, ZeroDivisionError, OverflowError) as exc:
            raise ProgramStopped(f"{type(exc).__name__}: {exc}", node) from None

    async def _call(self, e: ast.Call) -> Any:
        args = [await self._eval(a) for a in e.args]
        kwargs = {k.arg: await self._eval(k.value) for k in e.keywords if k.arg is not None}
        f = e.func
        if isinstance(f, ast.Attribute):
            if self._name(f.value.id, f) is not _VIDEO:  # type: ignore[attr-defined]
                raise ProgramStopped("methods exist only on video", e)
            name = {"query": "describe"}.get(f.attr, f.attr)
            if f.attr == "query":  # video.query(time, question, modality) → describe(ranges, modality, instruction)
                args, kwargs = _query_args(args, kwargs)
        else:
            assert isinstance(f, ast.Name)  # safety allows only names and video methods as callees
            name = f.id
        if name in ("find", "describe", "synthesize", "answer_question"):
            self._op(e)
            try:
                result = await self._api(name, args, kwargs, e)
            except TypeError as exc:
                raise ProgramStopped(f"{name}: {exc}", e) from None
            if isinstance(result, list) and len(result) <= self.lim.max_list and _SCALARS.issuperset(map(type, result)):
                return result  # find's ranges: flat, within the count (measured later if nested)
            return self._sized(result, e)
        return self._builtin(name, args, kwargs, e)

    async def _api(self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        """Call an operation with its arguments as bounded text (the ranges of ``describe`` stay
        structured, within ``max_range_items`` items and ``max_arg_chars`` characters as text).

        The text is exactly ``str()`` of what the program passed (so a request, and its cache
        key, is what it always was); only its size is new."""
        lim = self.lim
        if name == "find":
            query, modality = _bind(("query", "modality"), args, kwargs)
            return await self.api.find(self._text(query, lim.max_query_chars, "find's query", node),
                                       self._text(modality, lim.max_query_chars, "find's modality", node))
        if name == "describe":
            ranges, modality, instruction = _bind(("ranges", "modality", "instruction"), args, kwargs)
            if isinstance(ranges, list | tuple) and len(ranges) > lim.max_range_items:
                raise ProgramStopped(f"describe's ranges has {len(ranges)} items; at most {lim.max_range_items}", node)
            self._text(ranges, lim.max_arg_chars, "describe's ranges", node)
            return await self.api.describe(ranges, self._text(modality, lim.max_query_chars, "describe's modality", node),
                                           self._text(instruction, lim.max_arg_chars, "describe's instruction", node))
        if name == "answer_question":  # answer_question(question, evidence, options) → synthesize
            q = kwargs.get("question", args[0] if args else "")
            opts = kwargs.get("options", args[2] if len(args) > 2 else None)
            return await self.api.synthesize(self._text(q, lim.max_arg_chars, "answer_question's question", node),
                                             self._options(opts, "answer_question's options", node) or self.options)
        opts = kwargs.get("options", args[1] if len(args) > 1 else None)
        instruction = kwargs.get("instruction", args[0] if args else "")
        return await self.api.synthesize(self._text(instruction, lim.max_arg_chars, "synthesize's instruction", node),
                                         self._options(opts, "synthesize's options", node) or self.options)

    def _options(self, v: Any, what: str, node: ast.AST) -> list[str] | None:
        """A program's options as text: at most ``max_options`` of them (A–Z), all of them
        together at most ``max_arg_chars`` characters; ``None`` when it passed no list."""
        if not isinstance(v, list | tuple):
            return None
        if len(v) > self.lim.max_options:
            raise ProgramStopped(f"{what} has {len(v)} items; at most {self.lim.max_options}", node)
        out: list[str] = []
        room = self.lim.max_arg_chars
        for x in v:
            text, complete = text_of(x, room)
            self._charge(len(text) // 100, node)
            if not complete:
                raise ProgramStopped(f"{what} are longer than {self.lim.max_arg_chars:,} characters as text", node)
            out.append(text)
            room -= len(text)
        return out

    def _builtin(self, name: str, args: list[Any], kwargs: dict[str, Any], e: ast.AST) -> Any:
        if kwargs and name not in ("sorted", "round"):
            raise ProgramStopped(f"{name} takes no keyword arguments here", e)
        try:
            if name == "range":
                if not all(isinstance(a, int) for a in args):
                    raise ProgramStopped("range() takes whole numbers", e)
                r = range(*args)
                if len(r) > self.lim.max_range:
                    raise ProgramStopped(f"range longer than {self.lim.max_range}", e)
                return self._sized(list(r), e)
            if name in ("enumerate", "sorted", "list", "sum", "min", "max") and args:
                # these walk (and most copy) their argument in C: size it, and charge it, first
                self._charge(self._cost(args[0], e), e)
                if name in ("enumerate", "sorted", "list") and isinstance(args[0], str | dict) and \
                        len(args[0]) > self.lim.max_list:
                    raise ProgramStopped(f"{name}() would make a list longer than {self.lim.max_list} items", e)
            if name == "enumerate":
                if len(args) != 1 or not isinstance(args[0], list | tuple | str | dict):
                    raise ProgramStopped("enumerate() takes one list", e)
                return self._sized([[i, v] for i, v in enumerate(args[0])], e)
            if name == "sorted":
                if set(kwargs) - {"reverse"}:
                    raise ProgramStopped("sorted takes only reverse=", e)
                return self._sized(sorted(args[0], reverse=bool(kwargs.get("reverse", False))), e)
            if name == "list":
                return self._sized(list(args[0]) if args else [], e)
            if name == "sum" and not (1 <= len(args) <= 2 and isinstance(args[0], list | tuple)
                                      and all(_is_number(x) for x in [*args[0], *args[1:]])):
                raise ProgramStopped("sum() adds a list of numbers", e)
            if name == "round":
                nd = kwargs.get("ndigits", args[1] if len(args) > 1 else None)
                if set(kwargs) - {"ndigits"} or len(args) + len(kwargs) > 2:
                    raise ProgramStopped("round takes a number and ndigits only", e)
                if nd is not None and not (isinstance(nd, int) and abs(nd) <= _MAX_NDIGITS):
                    raise ProgramStopped(f"round() ndigits must be a whole number within ±{_MAX_NDIGITS}", e)
            if name == "int" and args and isinstance(args[0], str) and len(args[0]) > _MAX_INT_TEXT:
                raise ProgramStopped(f"int() of text longer than {_MAX_INT_TEXT} characters", e)
            if name == "str" and args:
                if not isinstance(args[0], (*_PLAIN, list, dict, tuple)):
                    raise ProgramStopped("str() of this value is not allowed", e)
                if len(args) == 1:  # the text is within max_str and charged as it is written
                    return self._text(args[0], self.lim.max_str, "str()'s value", e)
            table: dict[str, Callable[..., Any]] = {"len": len, "str": str, "int": int, "float": float, "min": min,
                                                    "max": max, "abs": abs, "round": round, "sum": sum, "bool": bool}
            fn = table[name]
            return self._sized(fn(*args, **kwargs), e)
        except ProgramStopped:
            raise
        except (TypeError, ValueError, KeyError, OverflowError) as exc:
            raise ProgramStopped(f"{name}(): {_short(exc)}", e) from None


class _Video:
    """The ``video`` a logic program receives: it has methods and nothing else."""

    def __repr__(self) -> str:
        return "<video>"


_VIDEO = _Video()
#: the types of a flat operation result that need no measuring beyond its length
_SCALARS = frozenset({int, float, bool, type(None), TimeRange})
#: what a program may hand an operation, or ``str()``, as text
_TEXTABLE = (*_PLAIN, list, dict, tuple, _Video)


def _query_args(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    time_ = kwargs.pop("time", args[0] if args else None)
    question = kwargs.pop("question", args[1] if len(args) > 1 else "Describe what happens.")
    modality = kwargs.pop("modality", args[2] if len(args) > 2 else "visual")
    return [time_, modality, question], {}


def _bind(names: tuple[str, ...], args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    """The values of ``names`` from positional and keyword arguments (``TypeError`` as Python says it)."""
    extra = set(kwargs) - set(names)
    if extra:
        raise TypeError(f"unexpected argument(s) {', '.join(sorted(extra))}")
    if len(args) > len(names):
        raise TypeError(f"takes at most {len(names)} arguments")
    values = dict(zip(names, args, strict=False))
    values.update(kwargs)
    missing = [n for n in names if n not in values]
    if missing:
        raise TypeError(f"missing argument(s) {', '.join(missing)}")
    return [values[n] for n in names]


_PASS_THROUGH = (ProgramStopped, _Return, _Break, _Continue, RecursionError, MemoryError)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float)


def _short(exc: BaseException, limit: int = 300) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "…"


def _exc_text(exc: BaseException) -> str:
    """An operation's own exception, as a stop reason (bounded: a message may quote a huge value)."""
    return f"{type(exc).__name__}: {_short(exc)}"


def entry_name() -> str:
    return ENTRY
