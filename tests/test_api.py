"""The Python API and the command line are one path (#21): every command parses its arguments into
its settings model and calls :func:`murgat.api.execute`, which the Python functions call too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import murgat
from murgat import api
from murgat.cli import main
from tests.engine.test_commands import CASSETTE, _write


@pytest.mark.parametrize("argv,command,field,value", [
    (["score", "in.jsonl", "--judge", "embedded", "--out", "o", "--max-tokens", "77"], "score", "max_tokens", 77),
    (["faithfulness", "in.jsonl", "--judge", "x:y", "--out", "o", "--granularity", "step"], "faithfulness",
     "granularity", "step"),
    (["reflect", "q.jsonl", "--model", "x:y", "--detector", "self", "--out", "o", "--from", "r.jsonl"], "reflect",
     "from_", "r.jsonl"),
    (["program", "q.jsonl", "--planner", "x:y", "--out", "o", "-P", "a=b", "--cache", "c.sqlite"], "program",
     "planner_option", ["a=b"]),
    (["generate", "q.jsonl", "--model", "x:y", "--out", "o", "--item-concurrency", "3", "--quiet"], "generate",
     "item_concurrency", 3),
    (["sweep", "q.jsonl", "--model", "x:y", "--judge", "embedded", "--out", "o", "--efforts", "low"], "sweep",
     "efforts", "low"),
])
def test_every_command_line_is_a_call_of_execute(monkeypatch, argv, command, field, value) -> None:
    """The CLI does nothing of its own: the parsed arguments arrive at execute() as the command's
    settings model, with the values given."""
    got = {}

    def fake(settings, *, echo=True, sink=None):
        got["settings"], got["echo"] = settings, echo
        return 7

    monkeypatch.setattr(api, "execute", fake)
    assert main(argv) == 7
    s = got["settings"]
    assert s.command == command and getattr(s, field) == value and got["echo"] is True
    assert type(s).__name__.lower().startswith(command)


def test_settings_object_and_keywords_run_the_same(tmp_path: Path, example_media: Path) -> None:
    from murgat.settings.score import ScoreSettings

    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01)."}])
    by_kw = murgat.score(inp, judge=f"replay:{cas}", out=tmp_path / "kw", media_root=example_media)
    s = ScoreSettings(input=str(inp), judge=f"replay:{cas}", out=str(tmp_path / "obj"), media_root=str(example_media),
                      quiet=True)
    by_obj = murgat.score(settings=s)
    assert by_kw.summary["murgat_s"] == by_obj.summary["murgat_s"] and by_obj.settings is s
    assert by_kw.settings.quiet is True  # the API draws no progress bar unless asked
    with pytest.raises(TypeError, match="not both"):
        murgat.score(settings=s, limit=1)


def test_api_refusals_are_exceptions_with_the_reason(tmp_path: Path) -> None:
    """Exit 2 (bad input) is a RunError carrying the command's error line, not a result to inspect."""
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "x.mp4", "response": "r"}])
    with pytest.raises(murgat.RunError) as exc:
        murgat.score(inp, judge="embedded", out=tmp_path / "run", media_root=tmp_path / "no-such-folder")
    assert exc.value.exit_code == 2 and "no-such-folder" in exc.value.message
    with pytest.raises(ValueError, match="max_tokenz"):
        murgat.score(inp, judge="embedded", out=tmp_path / "run", max_tokenz=5)
    with pytest.raises(ValueError, match="input"):
        murgat.score(judge="embedded", out=tmp_path / "run")


def test_dry_run_through_the_api_returns_the_estimate(tmp_path: Path, example_media: Path) -> None:
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01)."}])
    run = murgat.score(inp, judge="openai:gpt-4o-mini", out=tmp_path / "run", media_root=example_media, dry_run=True)
    assert run.exit_code == 0 and run.summary["items"] == 1 and run.summary["judge_calls_upper_bound"] >= 3
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_api_prints_no_tables(tmp_path: Path, example_media: Path, capsys) -> None:
    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01)."}])
    murgat.score(inp, judge=f"replay:{cas}", out=tmp_path / "run", media_root=example_media)
    assert capsys.readouterr().out == ""
    assert main(["score", str(inp), "--judge", f"replay:{cas}", "--out", str(tmp_path / "run2"), "--media-root",
                 str(example_media), "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["n_items"] == 1


def test_generate_honours_item_concurrency_and_quiet(tmp_path: Path, example_media: Path, monkeypatch,
                                                     capsys) -> None:
    """Before: generate had no --item-concurrency (its item pool followed --concurrency) and no progress bar."""
    import murgat.engine.command as gen

    seen = {}
    real = gen.run_items

    async def spy(task, todo, folder, digest, *, concurrency=8, on_item=None, keep=False):
        seen["concurrency"] = concurrency
        return await real(task, todo, folder, digest, concurrency=concurrency, on_item=on_item, keep=keep)

    monkeypatch.setattr(gen, "run_items", spy)
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "Answer: A"}}])
    q = _write(tmp_path / "q.jsonl", [{"id": f"q{k}", "media": "friday.mp4", "question": "?"} for k in range(3)])
    assert main(["generate", str(q), "--model", f"replay:{cas}", "--mode", "base", "--media-root", str(example_media),
                 "--out", str(tmp_path / "g"), "--item-concurrency", "2", "--concurrency", "5"]) == 0
    assert seen["concurrency"] == 2
    assert "generate" in capsys.readouterr().err  # the progress bar's label, on stderr
    assert main(["generate", str(q), "--model", f"replay:{cas}", "--mode", "base", "--media-root", str(example_media),
                 "--out", str(tmp_path / "g2"), "--quiet"]) == 0
    assert "━" not in capsys.readouterr().err


def test_sweep_through_the_api(tmp_path: Path, example_media: Path) -> None:
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "I see her (audio, 0:01).\nAnswer: A"}},
                                        *CASSETTE])
    q = _write(tmp_path / "q.jsonl", [{"id": "q0", "media": "friday.mp4", "question": "?", "options": ["a", "b"],
                                       "gold": "A"}])
    run = murgat.sweep(q, model=f"replay:{cas}", judge=f"replay:{cas}", efforts="low,high", out=tmp_path / "sw",
                       media_root=example_media)
    assert run.kind == "sweep" and [r["effort"] for r in run.summary["rows"]] == ["low", "high"]
    assert (tmp_path / "sw" / "effort-low" / "run" / "summary.json").exists()


def test_lists_where_the_command_line_takes_commas(tmp_path: Path) -> None:
    """A notebook user writes ids=["a", "b"]; the command line's --ids a,b means the same."""
    from murgat.settings.score import ScoreSettings
    from murgat.settings.sweep import SweepSettings

    assert ScoreSettings(input="i", judge="j", out="o", ids=["a", "b"]).ids == "a,b"
    assert SweepSettings(data="d", model="m", judge="j", out="o", efforts=["low", "high"]).efforts == "low,high"


def test_missing_media_hint_names_an_absolute_folder(tmp_path: Path, monkeypatch) -> None:
    from murgat.engine.preflight import MediaPlace, missing_hint

    monkeypatch.chdir(tmp_path)
    hint = missing_hint(["missing_media: x.mp4"], MediaPlace(None, "q.jsonl", False))
    assert hint is not None and str(tmp_path) in hint and "looked in ." not in hint


def test_sweep_hands_its_request_limits_to_scoring(tmp_path: Path, example_media: Path) -> None:
    """Newcomer trial: sweep's --rpm/--concurrency/--retries reached the answering model only; its
    scoring ran unthrottled on score's defaults (one rate-limited account serves both)."""
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "I see her (audio, 0:01).\nAnswer: A"}},
                                        *CASSETTE])
    q = _write(tmp_path / "q.jsonl", [{"id": "q0", "media": "friday.mp4", "question": "?", "options": ["a", "b"],
                                       "gold": "A"}])
    murgat.sweep(q, model=f"replay:{cas}", judge=f"replay:{cas}", efforts="low", out=tmp_path / "sw",
                 media_root=example_media, rpm=30, concurrency=3, retries=1)
    scored = json.loads((tmp_path / "sw" / "effort-low" / "run" / "config.json").read_text())
    gen = json.dumps(scored)
    assert '"rpm": 30' in gen and '"concurrency": 3' in gen and '"retries": 1' in gen
    assert '"max_tokens": 1024' in gen  # the judge's role default, not generate's 4,096
