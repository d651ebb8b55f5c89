"""The safe interpreter: what programs can do, and the budgets that stop them."""

from __future__ import annotations

import pytest

from murgat.programs.extract import NoProgram, extract_logic, extract_narrative
from murgat.programs.interpreter import Api, Interpreter, ProgramStopped, TimeRange
from murgat.programs.safety import Limits, ProgramRefused, parse_program


class FakeApi(Api):
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    async def find(self, query, modality):
        self.calls.append(("find", query, modality))
        return [TimeRange(1.0, 2.0, modality, "fake")]

    async def describe(self, ranges, modality, instruction):
        self.calls.append(("describe", ranges, modality, instruction))
        return f"described {len(ranges) if isinstance(ranges, list) else 1}"

    async def synthesize(self, instruction, options=None):
        self.calls.append(("synthesize", instruction, tuple(options or ())))
        return "Conclusion.\nAnswer: B"


async def run(code: str, limits: Limits | None = None, options=("x", "y")):
    api = FakeApi()
    interp = Interpreter(api, limits, options=list(options))
    result = await interp.run(parse_program(code, limits))
    return result, api, interp


async def test_logic_program_with_loop_if_and_fstring() -> None:
    code = '''
def execute_command(video, options):
    found = video.find("a dog barks", "audio")
    notes = []
    for r in found:
        if len(notes) < 3:
            notes = notes + [video.query(r, f"What barks at {r}?", "audio")]
    d = video.query("00:06-00:09", "What is seen?", "visual")
    return answer_question("Why?", notes + [d], options)
'''
    result, api, interp = await run(code)
    assert result == "Conclusion.\nAnswer: B"
    assert [c[0] for c in api.calls] == ["find", "describe", "describe", "synthesize"]
    assert api.calls[1][3] == "What barks at 0:01-0:02?"
    assert api.calls[2][1] == "00:06-00:09" and api.calls[3][2] == ("x", "y")
    assert interp.ops == 4 and interp.steps > 10


async def test_narrative_program_runs_each_call() -> None:
    code = 'describe(find("a man speaks", "audio"), "audio", "What does he say?")\nsynthesize("Decide.")\n'
    _, api, _ = await run(code)
    assert [c[0] for c in api.calls] == ["find", "describe", "synthesize"]


def test_extract_from_prose_and_fences() -> None:
    text = "Here is my plan:\n```python\ndef execute_command(video, options):\n    return answer_question('q', [], options)\n```\nDone."
    assert extract_logic(text).startswith("def execute_command(video, options):\n    return")
    prose = "Sure.\ndef execute_command(video, options):\n    x = 1\n\n    return x\nThat is all."
    assert "That is all" not in extract_logic(prose) and "return x" in extract_logic(prose)
    bullets = ('Plan:\n1. describe("00:06-00:09", "visual",\n   "Who enters?")  -> the entrance\n'
               '- Step 2: synthesize("Decide.")\n')
    assert extract_narrative(bullets) == 'describe("00:06-00:09", "visual",\n   "Who enters?")\nsynthesize("Decide.")\n'
    with pytest.raises(NoProgram):
        extract_logic("I think the answer is B.")
    with pytest.raises(NoProgram):
        extract_narrative("I think the answer is B.")


def test_refusals_name_line_column_node_and_rule() -> None:
    with pytest.raises(ProgramRefused) as err:
        parse_program("def execute_command(video, options):\n    x = 1\n    import os\n")
    assert err.value.line == 3 and err.value.node == "Import" and "not allowed" in str(err.value)
    assert str(err.value).startswith("line 3, column 4: Import refused")
    with pytest.raises(ProgramRefused, match="syntax error"):
        parse_program("def execute_command(video, options):\n    x = (\n")


async def test_budgets_stop_running_programs() -> None:
    loop = ("def execute_command(video, options):\n    n = 0\n    for i in range(1000):\n        for j in range(1000):\n"
            "            n = n + 1\n    return n\n")
    with pytest.raises(ProgramStopped, match="interpreter steps"):
        await run(loop, Limits(max_steps=5000))
    many = "def execute_command(video, options):\n    for i in range(30):\n        video.find('x', 'audio')\n"
    with pytest.raises(ProgramStopped, match="more than 24 operation calls"):
        await run(many)


async def test_timerange_and_builtins() -> None:
    code = ("def execute_command(video, options):\n    r = video.find('x', 'visual')\n"
            "    return [len(r), str(r[0]), max(3, 4), sorted([3, 1, 2])]\n")
    result, _, _ = await run(code)
    assert result == [1, "0:01-0:02", 4, [1, 2, 3]]
