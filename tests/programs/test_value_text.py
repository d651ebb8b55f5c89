"""Program values become text only within a size budget, checked while the text is written.

A value inside the 20,000-part budget can be ~20 MB as text: a part may be a 99-character
string whose ``repr`` is ten times longer (U+E0000 is unassigned, so ``repr`` escapes it as
``\\U000e0000``). ``str()`` of it, an f-string of it, or the same value handed to an operation
(where it became a 20 MB prompt and a trace too big to serialise) must stop with a budget
error naming the value, and nothing that big may ever be built (tracemalloc shows it).
"""

from __future__ import annotations

import random
import tracemalloc

import pytest

from murgat.programs.bounded import preview, text_of
from murgat.programs.interpreter import Interpreter, ProgramStopped, TimeRange
from murgat.programs.safety import Limits, ProgramRefused, parse_program
from tests.programs.test_interpreter import FakeApi

F = "def execute_command(video, options):\n"


def body(*lines: str) -> str:
    return F + "".join(f"    {ln}\n" for ln in lines)


#: 19 rows of 1,000 references to one 99-character string: about 19,000 parts, ~19 MB as text
HUGE = ("s = '\\U000e0000' * 99", "row = [s] * 1000", "big = [row] * 19")


async def stop_with_small_memory(code: str, api: FakeApi | None = None) -> tuple[ProgramStopped, FakeApi]:
    api = api or FakeApi()
    tracemalloc.start()
    try:
        with pytest.raises(ProgramStopped) as err:
            await Interpreter(api, options=["a", "b"]).run(parse_program(code))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, f"{peak / 2**20:.0f} MiB allocated before the stop"
    return err.value, api


async def test_the_huge_value_is_inside_the_part_budget() -> None:
    """The premise: the value itself is allowed (it is small in memory, shared references)."""
    interp = Interpreter(FakeApi())
    assert await interp.run(parse_program(body(*HUGE, "return len(big)"))) == 19


@pytest.mark.parametrize(("call", "named"), [
    ("video.query('00:01-00:03', big, 'audio')", "describe's instruction"),
    ("describe('00:01-00:03', 'audio', big)", "describe's instruction"),
    ("describe(big, 'audio', 'What?')", "describe's ranges"),
    ("describe('00:01', big, 'What?')", "describe's modality"),
    ("video.find(big, 'audio')", "find's query"),
    ("find('a dog', row)", "find's modality"),
    ("answer_question(big, [], options)", "answer_question's question"),
    ("answer_question('Why?', [], [s * 5] * 26)", "answer_question's options"),
    ("synthesize(big)", "synthesize's instruction"),
    ("synthesize('Decide.', options=[row])", "synthesize's options"),
])
async def test_an_operation_argument_is_refused_before_it_becomes_text(call: str, named: str) -> None:
    stop, api = await stop_with_small_memory(body(*HUGE, f"return {call}"))
    assert stop.reason.startswith(named) and "characters as text" in stop.reason, stop.reason
    assert stop.line == 5 and api.calls == []  # the operation never ran


async def test_too_many_options_or_ranges_are_refused_by_count() -> None:
    stop, api = await stop_with_small_memory(body("return answer_question('Why?', [], list(range(27)))"))
    assert stop.reason == "answer_question's options has 27 items; at most 26" and api.calls == []
    stop, api = await stop_with_small_memory(body("return video.query(list(range(65)), 'What?', 'audio')"))
    assert stop.reason == "describe's ranges has 65 items; at most 64" and api.calls == []


@pytest.mark.parametrize("expr", ["str(big)", "f'{big}'", "f'{big!r}'", "f'x{row}y{big}'"])
async def test_str_and_f_strings_of_a_huge_value_stop_without_building_it(expr: str) -> None:
    stop, _ = await stop_with_small_memory(body(*HUGE, f"return {expr}"))
    assert "longer than" in stop.reason and stop.line == 5


async def test_a_bad_index_message_quotes_a_short_preview_of_the_key() -> None:
    stop, _ = await stop_with_small_memory(body(*HUGE, "d = {'a': 1}", "return d[big]"))
    assert stop.reason.startswith("bad index [[") and len(stop.reason) < 200


async def test_arguments_within_the_budget_are_exactly_what_str_writes() -> None:
    """The text an operation gets is ``str()`` of the value, as before (requests and their
    cache keys do not change)."""
    api = FakeApi()
    code = body("r = video.find('a dog', 'audio')", "x = [1, 2.5, 'é', None, True, (3,), {'k': [r]}]",
                "d = video.query(r, x, 'audio')", "return answer_question(x, [d], [1, 'two', (3, 4)])")
    await Interpreter(api, options=["a"]).run(parse_program(code))
    instruction = api.calls[1][3]  # (tuple displays make lists in the interpreter)
    assert instruction == str([1, 2.5, "é", None, True, [3], {"k": [[TimeRange(1.0, 2.0, "audio", "fake")]]}])
    assert api.calls[2][1] == instruction and api.calls[2][2] == ("1", "two", "[3, 4]")


def _random_value(rnd: random.Random, depth: int = 0) -> object:
    kind = rnd.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rnd.choice(["", "a", "it's", 'say "hi"', "\U000e0000", "\n\t\\", "é" * rnd.randrange(5)])
    if kind == 1:
        return rnd.randrange(-10**12, 10**12)
    if kind == 2:
        return rnd.choice([0.1, -2.5, 1e308, 1e-300, 3.0])
    if kind == 3:
        return rnd.choice([None, True, False])
    if kind == 4:
        return TimeRange(rnd.random(), 1 + rnd.random(), rnd.choice(["audio", None]))
    if kind == 5:
        return ()
    if kind == 6:
        return [_random_value(rnd, depth + 1) for _ in range(rnd.randrange(4))]
    if kind == 7:
        return tuple(_random_value(rnd, depth + 1) for _ in range(rnd.randrange(3)))
    return {rnd.choice(["k", 1, 2.5, None, True]): _random_value(rnd, depth + 1) for _ in range(rnd.randrange(3))}


def test_text_of_writes_what_python_writes_or_a_prefix_of_it() -> None:
    rnd = random.Random(7)
    for _ in range(3000):
        v = _random_value(rnd)
        for quote in (False, True):
            full = repr(v) if quote else str(v)
            assert text_of(v, 10**6, quote=quote) == (full, True)
            limit = rnd.randrange(len(full) + 2)
            text, complete = text_of(v, limit, quote=quote)
            assert complete == (len(full) <= limit) and len(text) <= limit
            if complete:
                assert text == full


def test_text_of_does_work_in_proportion_to_the_limit() -> None:
    big = [["\U000e0000" * 99] * 1000] * 19
    tracemalloc.start()
    try:
        text, complete = text_of(big, 5_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not complete and len(text) == 5_000 and peak < 2**20
    assert preview(big, 20).endswith("…") and len(preview(big, 20)) == 21


def test_non_finite_number_literals_are_refused() -> None:
    """``1e999`` is infinity before anything runs: the interpreter's non-finite check only
    sees numbers it computes."""
    for lit in ("1e999", "-1e999", "1e999 - 1e999"):
        with pytest.raises(ProgramRefused, match="must be finite"):
            parse_program(body(f"return video.query([0, {lit}], 'What?', 'audio')"))
    assert parse_program(body("return 1e308"))


async def test_the_text_budget_is_charged_as_work() -> None:
    """Writing a long value as text costs a step per 100 characters, like making it does."""
    code = body("s = 'x' * 9000", "t = [s, s, s, s, s]", "return len(str(t))")
    limits = Limits(max_steps=100_000)
    interp = Interpreter(FakeApi(), limits)
    assert await interp.run(parse_program(code, limits)) == len(str(["x" * 9000] * 5))
    assert interp.steps >= 45_000 // 100


async def test_f_strings_write_what_python_writes() -> None:
    """``!r`` first, then the spec, as Python does (the spec was ignored after ``!r``)."""
    code = body("x = 'ab'", "y = 1.2345", "z = [1, 'a']", "w = None",
                "return f'{x!r:>8}|{y:.2f}|{z}|{z!r}|{w}|{w!r}|{x}'")
    assert await Interpreter(FakeApi()).run(parse_program(code)) == "    'ab'|1.23|[1, 'a']|[1, 'a']|None|None|ab"
