"""Each operation's trace record says how its work ended, on real media (friday.mp4).

A record is appended when the operation starts; it used to keep ``status: ok`` with no
output when the work then raised (``[0, 1e308]`` overflows the time formatter, ``"nan"``
cannot be a time), and a ``find`` whose search failed was recorded as ``empty`` ("nothing
found"). Now a failure is a failure (``error`` with the reason), ``empty`` means there was
genuinely nothing, and a model answer too long for the program is refused before anything
reads it. The judges are scripted (in-process functions); media decoding is real.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import JudgeRequest
from murgat.judging.context import ItemContext
from murgat.judging.pool import CallPool
from murgat.media.streams import probe
from murgat.programs.interpreter import Interpreter, ProgramStopped
from murgat.programs.ops import ExecutorApi, OpSettings
from murgat.programs.safety import Limits, parse_program
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig

F = "def execute_command(video, options):\n"


def body(*lines: str) -> str:
    return F + "".join(f"    {ln}\n" for ln in lines)


def answers(req: JudgeRequest) -> str:
    return {"find": "I could not look.", "describe": "A woman asks a question.",
            "synthesize": "She asks [1].\nAnswer: B"}.get(req.task, "yes")


def make_api(media: Path, answer=answers, **kw) -> ExecutorApi:
    js = JudgeSpec(spec="replay:none")
    cfg = ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js)
    ctx = ItemContext(media=media, durations=probe(media).durations(), config=cfg)
    judge = ScriptedJudge(answer)
    return ExecutorApi(executor=judge, checker=None, pool=CallPool(), ctx=ctx,
                       settings=OpSettings(check=False), options=["happy", "bad humor"], **kw)


async def run(api: ExecutorApi, code: str, limits: Limits | None = None) -> ProgramStopped | None:
    try:
        await Interpreter(api, limits, options=api.options).run(parse_program(code, limits))
    except ProgramStopped as exc:
        return exc
    return None


@pytest.mark.parametrize("ranges", ["[0, 1e308]", "[0, 1000000000000]", "[[0, 1e308]]"])
async def test_a_time_beyond_any_media_is_the_operations_error(friday: Path, ranges: str) -> None:
    """``[0, 1e308]`` raised OverflowError inside describe, under a record that said ``ok``."""
    api = make_api(friday)
    stop = await run(api, body(f"d = video.query({ranges}, 'What?', 'audio')", "return d"))
    assert stop is None  # not a crash: the operation reports it and returns no description
    (rec,) = api.records
    assert rec.status == "error" and "beyond any media" in (rec.error or "") and rec.output is None


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity", "1e999", " NaN "])
async def test_non_finite_times_written_as_text_are_refused(friday: Path, text: str) -> None:
    """"nan" as text got round the interpreter's non-finite check and raised ValueError
    inside describe, under a record that said ``ok``."""
    api = make_api(friday)
    stop = await run(api, body(f"d = video.query([{text!r}, '0:02'], 'What?', 'audio')",
                               f"e = video.query({text!r}, 'What?', 'audio')", "return d"))
    assert stop is None
    first, second = api.records
    assert first.status == "error" and "is not a time" in (first.error or "")
    assert second.status == "error" and "is not a time" in (second.error or "")


async def test_an_operation_that_raises_is_recorded_as_an_error_and_stops_the_program(friday: Path,
                                                                                       monkeypatch) -> None:
    api = make_api(friday)

    def explode(*a, **k):
        raise RuntimeError("evidence builder exploded")

    monkeypatch.setattr(api.ctx, "evidence_for", explode)
    stop = await run(api, body("x = 1", "d = video.query('0:01-0:03', 'What?', 'audio')", "return d"))
    assert stop is not None and stop.reason == "RuntimeError: evidence builder exploded" and stop.line == 3
    (rec,) = api.records
    assert rec.status == "error" and rec.error == "RuntimeError: evidence builder exploded"


async def test_a_failed_find_is_a_failure_not_nothing_found(friday: Path) -> None:
    api = make_api(friday)
    assert await run(api, body("r = video.find('a dog', 'audio')", "return r")) is None
    (rec,) = api.records
    assert rec.status == "unparseable" and rec.error  # it was "empty" ("nothing found")
    empty = make_api(friday, answer=lambda req: '{"ranges": []}')
    assert await run(empty, body("r = video.find('a dog', 'audio')", "return r")) is None
    assert empty.records[0].status == "empty"


async def test_describing_nothing_found_is_empty_but_unusable_times_are_errors(friday: Path) -> None:
    api = make_api(friday)
    await run(api, body("a = video.query([], 'What?', 'audio')", "b = video.query('0:50-0:55', 'What?', 'audio')",
                        "c = video.query('soon', 'What?', 'audio')",
                        "d = video.query(['0:01-0:03', '0:50-0:55'], 'What?', 'audio')"))
    nothing, outside, unreadable, partly = api.records
    assert nothing.status == "empty" and "nothing found" in (nothing.error or "")
    assert outside.status == "error" and "0:50-0:55" in (outside.error or "")
    assert unreadable.status == "error" and "'soon' is not a time" in (unreadable.error or "")
    assert partly.status == "unchecked" and partly.citations == ["audio, 0:01-0:03"]
    assert len(partly.notes) == 1 and partly.notes[0].startswith("left out audio, 0:50-0:55")


async def test_a_reversed_range_given_to_describe_is_an_error_not_nothing_found(friday: Path) -> None:
    api = make_api(friday)
    await run(api, body("a = video.query([[3, 1]], 'What?', 'audio')", "b = video.query('0:03-0:01', 'What?', 'audio')",
                        "c = video.query(['0:01-0:03', [5, 4]], 'What?', 'audio')"))
    pair, text, mixed = api.records
    for rec in (pair, text, mixed):
        assert rec.status == "error" and "reversed range" in (rec.error or ""), rec
    assert "nothing found" not in " ".join(r.error or "" for r in api.records)


async def test_a_cancelled_operation_is_recorded_as_cut_short(friday: Path) -> None:
    """The program's time limit fires while an operation waits: its record says so."""
    api = make_api(friday)
    api.executor = ScriptedJudge(answers, delay_s=30)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(run(api, body("return video.query('0:01-0:03', 'What?', 'audio')")), 0.5)
    (rec,) = api.records
    assert rec.status == "error" and "time limit" in (rec.error or "")


async def test_a_model_answer_too_long_for_the_program_is_refused_before_it_is_read(friday: Path) -> None:
    long = "A woman asks (a and " + "a and " * 5000 + "a)."  # would also reach the citation grammar
    api = make_api(friday, answer=lambda req: long if req.task == "describe" else "He is sad [1].\nAnswer: B",
                   max_answer_chars=20_000)
    assert await run(api, body("d = video.query('0:01-0:03', 'What?', 'audio')", "return d")) is None
    (rec,) = api.records
    assert rec.status == "error" and "beyond the 20,000-character limit" in (rec.error or "") and not api.descriptions


async def test_synthesize_records_the_options_it_was_given(friday: Path) -> None:
    api = make_api(friday)
    await run(api, body("d = video.query('0:01-0:03', 'What?', 'audio')",
                        "return answer_question('Mood?', [d], ['calm', 'angry', 'sleepy'])"))
    synth = api.records[-1]
    assert synth.op == "synthesize" and synth.status == "ok"
    assert synth.inputs["options"] == ["calm", "angry", "sleepy"]
    plain = make_api(friday)
    await run(plain, body("return synthesize('Decide.')"))
    assert plain.records[-1].inputs["options"] == ["happy", "bad humor"]


async def test_describe_records_a_bounded_copy_of_its_ranges(friday: Path) -> None:
    """A trace used to copy the program's ranges part by part (~11 MB per call)."""
    api = make_api(friday)
    await api.describe(["0:01-0:03", "x" * 50_000, *([["1", "2"]] * 500)], "audio", "What?")
    rec = api.records[0]
    assert len(str(rec.inputs["ranges"])) < 40_000 and rec.inputs["ranges"][-1] == "…[438 more items]"
    assert rec.inputs["ranges"][1].endswith("more characters]")
