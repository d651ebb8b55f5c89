"""The interpreter hands the event loop its turn while it computes.

Its work is CPU-bound: without a yield, ``asyncio.wait_for`` (``--program-timeout``) could
not fire until the program finished on its own, and every other item in flight waited. The
programs here would run for minutes under a generous step budget; the time limit must cut
them at once, and a coroutine beside them must keep running.
"""

from __future__ import annotations

import asyncio

import pytest

from murgat.programs.interpreter import Interpreter
from murgat.programs.safety import Limits, parse_program
from tests.programs.test_interpreter import FakeApi

F = "def execute_command(video, options):\n"
ENDLESS = F + ("    n = 0\n    for i in range(1000):\n        for j in range(1000):\n"
               "            for k in range(1000):\n                n = n + 1\n    return n\n")


async def test_a_time_limit_cuts_a_long_computation_and_others_keep_running() -> None:
    limits = Limits(max_steps=10**10, max_seconds=20.0)  # the interpreter's own clock is only the backstop
    ticks = 0

    async def neighbour() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(neighbour())
    interp = Interpreter(FakeApi(), limits)
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(interp.run(parse_program(ENDLESS, limits)), 0.3)
    finally:
        other.cancel()
    assert interp.steps < 10**9 and ticks > 10  # cut early; the neighbour ran meanwhile


async def test_yielding_does_not_change_what_a_program_computes() -> None:
    code = F + "    n = 0\n    for i in range(300):\n        for j in range(30):\n            n = n + j\n    return n\n"
    every = Limits(max_steps=10**6, yield_steps=1)
    rarely = Limits(max_steps=10**6, yield_steps=10**9)
    a, b = Interpreter(FakeApi(), every), Interpreter(FakeApi(), rarely)
    assert await a.run(parse_program(code, every)) == await b.run(parse_program(code, rarely)) == 300 * 435
    assert a.steps == b.steps
