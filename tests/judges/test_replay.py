"""Which cassette line answers a request: exact keys, whole inputs, and hand-written lines that
name only some inputs (the first fitting line in the file wins, as before the lines were indexed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from murgat.judges.replay import ReplayJudge, ReplayMiss
from murgat.judges.types import JudgeRequest, TextPart


def _cassette(tmp_path: Path, lines: list[dict]) -> ReplayJudge:
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return ReplayJudge(str(path))


def _line(task: str, inputs: dict, text: str) -> dict:
    return {"match": {"task": task, "inputs": inputs}, "output": {"text": text}}


def _req(task: str, **inputs: object) -> JudgeRequest:
    return JudgeRequest(parts=[TextPart("q")], task=task, inputs=dict(inputs))


def _answer(judge: ReplayJudge, req: JudgeRequest) -> str:
    return judge.lookup(req)["output"]["text"]


def test_partial_lines_first_fitting_line_in_file_order(tmp_path: Path) -> None:
    judge = _cassette(tmp_path, [
        _line("entail", {"fact": "A", "evidence": ["visual 0:01"]}, "one"),
        _line("entail", {"evidence": ["visual 0:02"]}, "two"),   # no text input: checked for every request
        _line("entail", {"fact": "A"}, "three"),
        _line("entail", {"question": "Q", "fact": "B"}, "four"),  # indexed by 'fact' (first text input by name)
        _line("entail", {}, "any"),
        _line("verify", {"sentence": "A"}, "verify-A"),
    ])
    assert _answer(judge, _req("entail", fact="A", evidence=["visual 0:01"], context="x")) == "one"
    assert _answer(judge, _req("entail", fact="A", evidence=["visual 0:02"])) == "two"  # line 2 precedes line 3
    assert _answer(judge, _req("entail", fact="A", evidence=["audio 0:03"])) == "three"
    assert _answer(judge, _req("entail", fact="B", question="Q")) == "four"
    assert _answer(judge, _req("entail", fact="B", question="other")) == "any"
    assert _answer(judge, _req("verify", sentence="A")) == "verify-A"
    with pytest.raises(ReplayMiss, match="task 'verify'"):
        judge.lookup(_req("verify", sentence="B"))


def test_values_compare_as_python_values_not_as_text(tmp_path: Path) -> None:
    judge = _cassette(tmp_path, [_line("generate", {"n": 1}, "int"), _line("generate", {"name": "1"}, "str")])
    assert _answer(judge, _req("generate", n=1.0)) == "int"  # 1 == 1.0, as before indexing
    assert _answer(judge, _req("generate", name="1")) == "str"
    with pytest.raises(ReplayMiss):
        judge.lookup(_req("generate", name=1))  # a number never matches the text "1"


def test_a_request_is_looked_up_once_for_generate_and_call(tmp_path: Path) -> None:
    """generate checks the line exists (a miss is loud, never retried), _call serves it: one search."""
    judge = _cassette(tmp_path, [_line("verify", {"sentence": "A"}, "yes")])
    found: list[str] = []
    real = judge._find

    def counting(req: JudgeRequest) -> dict:
        found.append(req.task)
        return real(req)

    judge._find = counting  # type: ignore[method-assign]
    out = asyncio.run(judge.generate(_req("verify", sentence="A")))
    assert out.text == "yes" and found == ["verify"]


@pytest.mark.parametrize(("line", "words"), [
    ('["a list"]', "JSON object, not list"),
    ('{"output": {"text": "yes"}}', 'neither "key" nor "match"'),
    ('{"match": "entail", "output": {"text": "yes"}}', '"match" must be an object'),
    ('{"match": {"inputs": {}}, "output": {"text": "yes"}}', 'needs a "task"'),
    ('{"match": {"task": "entail", "inputs": ["fact"]}, "output": {"text": "yes"}}', '"match.inputs" must be an object'),
    ('{"match": {"task": "entail"}, "output": "yes"}', '"output" must be an object'),
    ('{"match": {"task": "entail"}, "output": {"text": 1}}', '"output.text" must be a string'),
    ('{"match": {"task": "entail"}, "output": {"text": "yes", "usage": {"input_tokens": "ten"}}}', "token counts"),
    ('{"key": 7, "output": {"text": "yes"}}', '"key" must be a string'),
    # a string "false" was truthy: every answer of the line was served as a safety block
    ('{"match": {"task": "entail"}, "output": {"text": "yes", "blocked": "false"}}', '"output.blocked" must be true or false'),
    ('{"match": {"task": "entail"}, "output": {"text": "yes", "truncated": "no"}}', '"output.truncated" must be true or false'),
])
def test_a_malformed_hand_written_line_names_the_file_and_line(tmp_path: Path, line: str, words: str) -> None:
    """Before: TypeError/KeyError/AttributeError from deep inside, with no file or line named."""
    path = tmp_path / "hand.jsonl"
    path.write_text(json.dumps(_line("verify", {"sentence": "A"}, "yes")) + "\n" + line + "\n")
    with pytest.raises(ValueError, match="line 2") as info:
        ReplayJudge(str(path))
    assert str(path) in str(info.value) and words in str(info.value)


def test_a_cassette_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    """Before: a bare ``UnicodeDecodeError`` naming neither the file nor the line."""
    path = tmp_path / "hand.jsonl"
    good = json.dumps(_line("verify", {"sentence": "A"}, "yes")).encode()
    path.write_bytes(good + b"\n" + b'{"match": {"task": "entail"}, "output": {"text": "caf\xe9"}}\n')
    with pytest.raises(ValueError, match="line 2: not UTF-8") as info:
        ReplayJudge(str(path))
    assert str(path) in str(info.value)
