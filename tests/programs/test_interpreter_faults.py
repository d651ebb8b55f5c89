"""Programs that break the interpreter's own allow-list from inside: allowed operations that
raise, builtins whose work is one C call, memory that grows with what was ever measured,
builtins that return new containers, values nested deep enough to break a later walk.

Each must end as a :class:`ProgramStopped` (the item's recorded stop) naming its reason and,
where a node raised, its line and column; no other exception may leave ``Interpreter.run``.
"""

from __future__ import annotations

import sys
import tracemalloc

import pytest

from murgat.programs.interpreter import Interpreter, ProgramStopped
from murgat.programs.safety import Limits, parse_program
from tests.programs.test_interpreter import FakeApi

F = "def execute_command(video, options):\n"


def body(*lines: str) -> str:
    return F + "".join(f"    {ln}\n" for ln in lines)


async def stop_of(code: str, limits: Limits | None = None, api: FakeApi | None = None) -> ProgramStopped:
    """The stop ``code`` ends in (the test fails if it completes or raises anything else)."""
    interp = Interpreter(api or FakeApi(), limits, options=["a", "b"])
    with pytest.raises(ProgramStopped) as err:
        await interp.run(parse_program(code, limits))
    return err.value


class RaisingApi(FakeApi):
    """An operation whose implementation fails (a bug, a media error, anything)."""

    async def describe(self, ranges, modality, instruction):
        raise ValueError("evidence builder exploded")


@pytest.mark.parametrize(("lines", "col", "reason"), [
    (("x = [1, 2, 3]", "return x[0.5:]"), 11, "slice bounds and step must be whole numbers"),
    (("x = 'abc'", "return x[::0]"), 11, "slice step cannot be zero"),
    (("x = [1, 2, 3]", "return x['a':]"), 11, "whole numbers"),
])
async def test_an_exception_inside_an_allowed_operation_is_a_stop_with_line_and_column(lines, col, reason) -> None:
    stop = await stop_of(body(*lines))
    assert reason in stop.reason
    assert (stop.line, stop.col) == (3, col)
    assert str(stop).startswith(f"line 3, column {col}: ")


async def test_an_operation_that_raises_stops_the_program_at_its_call() -> None:
    code = body("x = 1", "d = video.query('00:01-00:02', 'What?', 'audio')", "return d")
    stop = await stop_of(code, api=RaisingApi())
    assert stop.reason == "ValueError: evidence builder exploded"
    assert (stop.line, stop.col) == (3, 8)


@pytest.mark.parametrize(("expr", "reason"), [
    ("round(1, -1000000000)", "ndigits"),
    ("round(1, ndigits=-1000000000)", "ndigits"),
    ("round(1.5, 1000000000)", "ndigits"),
    ("f'{x:1000000000}'", "format width or precision"),
    ("f'{x:>999999999}'", "format width or precision"),
    ("f'{y:.99999999f}'", "format width or precision"),
    ("int('1' * 40000)", "int() of text longer than"),
    ("range('1' * 40000)", "range() takes whole numbers"),
])
async def test_c_level_builtins_have_their_arguments_checked_before_the_call(expr: str, reason: str) -> None:
    """Each of these would hang or build gigabytes inside one C call, which no step or time
    budget can interrupt; tracemalloc shows nothing big was ever allocated."""
    tracemalloc.start()
    try:
        stop = await stop_of(body("x = 1", "y = 1.5", f"return {expr}"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert reason in stop.reason and stop.line == 4
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MiB allocated before the stop"


@pytest.mark.parametrize("ret", ["f'{n}'", "str(n)", "f'{n!r}'", "f'{n:>5}'"])
async def test_huge_ints_are_refused_before_conversion_to_text(ret: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's own int→str limit (4,300 digits) may be lifted by the host process; the
    interpreter checks the size itself, before the conversion."""
    monkeypatch.setattr(sys, "set_int_max_str_digits", sys.set_int_max_str_digits)
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        # nine squarings of a 12-digit number: 6,144 digits, inside a generous max_int
        code = body("n = 999999999999", "for i in range(9):", "    n = n * n", f"return {ret}")
        stop = await stop_of(code, Limits(max_int=10**20_000))
    finally:
        sys.set_int_max_str_digits(old)
    assert "too long to write as text" in stop.reason and stop.line == 5


async def test_nested_enumerate_loops_stop_within_budget_with_small_memory() -> None:
    """1,000 × 1,000 iterations each making a 1,000-pair list: the memo used to keep every
    list it measured (gigabytes); now each enumerate costs what it makes, and the memo is bounded."""
    code = body("L = range(1000)", "for i in range(1000):", "    for j in range(1000):", "        e = enumerate(L)",
                "return 1")
    tracemalloc.start()
    try:
        stop = await stop_of(code)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "more than 20000 interpreter steps" in stop.reason and stop.line == 5
    assert peak < 40 * 2**20, f"{peak / 2**20:.0f} MiB"


async def test_memo_of_measured_values_stays_bounded() -> None:
    limits = Limits(max_steps=10**7, max_memo=512)
    code = body("L = range(100)", "for i in range(1000):", "    e = enumerate(L)", "return 1")
    interp = Interpreter(FakeApi(), limits)
    assert await interp.run(parse_program(code, limits)) == 1
    assert len(interp._memo) <= 512


async def test_work_is_charged_by_what_a_step_touches() -> None:
    """A hundred sorts of a thousand-item list are a hundred steps by node count, but
    100,000 items touched: they exhaust the 20,000-step budget."""
    code = body("x = range(1000)", "for i in range(100):", "    y = sorted(x)", "return 1")
    stop = await stop_of(code)
    assert "interpreter steps" in stop.reason
    small = body("x = range(10)", "for i in range(100):", "    y = sorted(x)", "return len(y)")
    interp = Interpreter(FakeApi())
    assert await interp.run(parse_program(small)) == 10


@pytest.mark.parametrize(("expr", "reason"), [
    ("sorted('a' * 5000)", "sorted() would make a list longer than 1000 items"),
    ("enumerate('a' * 5000)", "enumerate() would make a list longer than 1000 items"),
    ("list('a' * 5000)", "list() would make a list longer than 1000 items"),
    ("sum(range(10), [])", "sum() adds a list of numbers"),
])
async def test_builtins_that_return_new_containers_respect_the_size_cap(expr: str, reason: str) -> None:
    stop = await stop_of(body(f"return {expr}"))
    assert reason in stop.reason


async def test_values_cannot_nest_deeper_than_the_limit() -> None:
    """A value a few hundred levels deep broke str(), == and writing the trace later."""
    stop = await stop_of(body("x = 1", "for i in range(300):", "    x = [x]", "return 1"))
    assert "nested deeper than 32 levels" in stop.reason and stop.line == 4
    stop = await stop_of(body("d = {}", "for i in range(300):", "    d = {'k': d}", "return 1"))
    assert "nested deeper than 32 levels" in stop.reason
    ok = body("x = 1", "for i in range(20):", "    x = [x]", "return str(x)")
    interp = Interpreter(FakeApi())
    assert await interp.run(parse_program(ok)) == "[" * 20 + "1" + "]" * 20


class LostCluster(RuntimeError):
    pass


class FailingRunApi(FakeApi):
    """An operation failing for the whole run (a replay miss, a lost cluster), as the Api says."""

    async def find(self, query, modality):
        raise LostCluster("the cache service died")

    def is_run_failure(self, exc: BaseException) -> bool:
        return isinstance(exc, LostCluster)


async def test_a_failure_of_the_whole_run_passes_through_unchanged() -> None:
    interp = Interpreter(FailingRunApi())
    with pytest.raises(LostCluster):
        await interp.run(parse_program(body("r = video.find('x', 'audio')", "return r")))
