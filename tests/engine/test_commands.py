"""#21 defects of the commands, each pinned: every command goes through the one engine now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import murgat
from murgat.cli import main
from tests.cassettes import YES_CASSETTE as CASSETTE
from tests.cassettes import write_jsonl as _write


def test_score_rescores_an_edited_item_and_says_so(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: rescoring an edited input into the same --out exited 0 and silently kept the old scores."""
    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    inp = tmp_path / "in.jsonl"
    rows = [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03)."},
            {"id": "b", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}]
    args = ["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out",
            str(tmp_path / "run"), "--quiet", "--json"]
    _write(inp, rows)
    assert main(args) == 0
    rows[1]["response"] = "No citation here at all."
    _write(inp, rows)
    capsys.readouterr()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "1 item(s) changed since they were last run" in err and "(b)" in err
    run = murgat.load_run(tmp_path / "run")
    recs = {r["id"]: r for r in run.records}
    assert recs["b"]["n_verifiable_cited"] == 0 and recs["a"]["n_verifiable_cited"] == 1
    assert run.kind == "score" and run.summary["n_items"] == 2


@pytest.mark.parametrize("bad", [["--ray-group-size", "0"], ["--limit", "-1"], ["--concurrency", "0"],
                                 ["--item-concurrency", "0"], ["--bootstrap", "0"]])
def test_senseless_counts_exit_2(tmp_path: Path, bad: list[str], capsys) -> None:
    """Before: --ray-group-size 0 scored nothing and exited 0; --limit -1 dropped one item."""
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "x.mp4", "response": "r"}])
    with pytest.raises(SystemExit) as exc:
        main(["score", str(inp), "--judge", "embedded", "--out", str(tmp_path / "run"), *bad])
    assert exc.value.code == 2 and "must be at least" in capsys.readouterr().err


def test_old_executor_spelling_gets_a_hint(tmp_path: Path, capsys) -> None:
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "x.mp4", "response": "r"}])
    with pytest.raises(SystemExit) as exc:
        main(["score", str(inp), "--judge", "embedded", "--out", str(tmp_path / "run"), "--executor", "ray"])
    assert exc.value.code == 2 and "--run-on" in capsys.readouterr().err


def test_bad_judge_spec_leaves_no_cache_files(tmp_path: Path, capsys) -> None:
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "x.mp4", "response": "r"}])
    assert main(["score", str(inp), "--judge", "nosuchprovider:m", "--out", str(tmp_path / "run"), "--quiet"]) == 2
    assert not [p.name for p in (tmp_path / "run").glob("cache.sqlite*")]


def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path, monkeypatch, capsys) -> None:
    from murgat import api

    def interrupted(settings, **kw):  # what a Ctrl-C during a run raises in the main thread
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "execute", interrupted)
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "x.mp4", "response": "r"}])
    assert main(["score", str(inp), "--judge", "embedded", "--out", str(tmp_path / "run")]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and "resume" in err


def test_limit_reads_only_the_first_items(tmp_path: Path, monkeypatch) -> None:
    """Before: a 200,000-line input with --limit 5 validated every line (and checked ids with list.count)."""
    import murgat.core.inputs as inputs

    seen = {"n": 0}
    real = inputs.normalise_record

    def counting(*a, **k):
        seen["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(inputs, "normalise_record", counting)
    inp = _write(tmp_path / "in.jsonl", [{"id": str(k), "media": "x.mp4", "response": "r"} for k in range(5000)])
    items = inputs.load_items(inp, limit=5)
    assert [i.id for i in items] == ["0", "1", "2", "3", "4"] and seen["n"] <= 6
    _write(tmp_path / "dup.jsonl", [{"id": "1", "response": "r"}, {"id": "1", "response": "s"}])
    with pytest.raises(inputs.InputError, match="duplicate id"):
        inputs.load_items(tmp_path / "dup.jsonl")


def test_generate_folder_and_legacy_file_output(tmp_path: Path, example_media: Path) -> None:
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "Answer: A"}}])
    q = _write(tmp_path / "q.jsonl", [{"id": f"q{k}", "media": "friday.mp4", "question": "?", "options": ["a", "b"],
                                       "gold": "A"} for k in range(6)])
    res = murgat.generate(q, model=f"replay:{cas}", out=tmp_path / "gen", mode="base", media_root=example_media)
    assert res.exit_code == 0 and res.kind == "generate"
    assert [r["id"] for r in res.records] == [f"q{k}" for k in range(6)]  # input order
    assert (tmp_path / "gen" / "cache.sqlite").exists() and (tmp_path / "gen" / "config.json").exists()
    legacy = tmp_path / "answers.jsonl"
    assert main(["generate", str(q), "--model", f"replay:{cas}", "--mode", "base", "--out", str(legacy),
                 "--media-root", str(example_media), "--json"]) == 0
    assert len(legacy.read_text().splitlines()) == 6 and (tmp_path / "answers.run" / "summary.json").exists()
    assert murgat.load_run(legacy).kind == "generate"
    # generate's output is score's input
    run = murgat.score(legacy, judge="embedded", out=tmp_path / "scored", media_root=example_media)
    assert run.exit_code in (0, 1) and len(run.records) == 6


def test_api_dataframe(tmp_path: Path, example_media: Path) -> None:
    import pandas as pd
    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01)."}])
    run = murgat.score(inp, judge=f"replay:{cas}", out=tmp_path / "run", media_root=example_media)
    df = run.dataframe()
    assert isinstance(df, pd.DataFrame) and list(df["id"]) == ["a"] and "scores.murgat_s" in df.columns


def _faith_folder(path: Path, with_kind: bool) -> Path:
    from murgat.core.steps import FaithResult, StepLabel, tally
    from murgat.core.upr import summarize_faithfulness
    from murgat.engine.folder import RunFolder

    folder = RunFolder(path, record=FaithResult)
    res = [tally(FaithResult(id="a", steps=[StepLabel(index=0, text="A man waves.", type="perception", faithful=True,
                                                      status="labelled")]))]
    folder.append_many(res)
    folder.write_summary(summarize_faithfulness(res, 50, 0))
    if with_kind:
        folder.check_config({"judge": "x"}, {}, kind="faithfulness")
    return path


@pytest.mark.parametrize("with_kind", [True, False])
def test_view_and_summarize_dispatch_on_kind(tmp_path: Path, with_kind: bool, capsys) -> None:
    """Before: murgat view / summarize on a faithfulness folder printed a pydantic traceback."""
    run = _faith_folder(tmp_path / "faith", with_kind)
    assert main(["view", str(run)]) == 0 and (run / "report.html").exists()
    capsys.readouterr()
    assert main(["summarize", str(run)]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "faithfulness"
    assert main(["summarize", str(run), str(run)]) == 2
    assert "'faithfulness' run" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["faithfulness", "generate", "program", "reflect"])
def test_a_bad_model_spec_leaves_no_cache_in_any_command(tmp_path: Path, example_media: Path, command: str,
                                                         capsys) -> None:
    """Before: a bad judge/model spec left cache.sqlite-wal/-shm behind (checked for score above)."""
    q = _write(tmp_path / "q.jsonl", [{"id": "a", "media": "friday.mp4", "question": "?", "response": "r"}])
    spec = "nosuchprovider:m"
    argv = {"faithfulness": ["faithfulness", str(q), "--judge", spec],
            "generate": ["generate", str(q), "--model", spec],
            "program": ["program", str(q), "--planner", spec],
            "reflect": ["reflect", str(q), "--model", spec, "--detector", "self"]}[command]
    out = tmp_path / "out"
    assert main([*argv, "--media-root", str(example_media), "--out", str(out), "--json"]) == 2
    assert "nosuchprovider" in capsys.readouterr().err
    assert not list(out.rglob("cache.sqlite*"))


def test_view_a_program_folder_writes_its_page(tmp_path: Path, capsys) -> None:
    """A program run has a page of its own (what ``murgat program`` writes); ``view`` writes it again
    (tests/programs/test_program_e2e.py checks it with items). A variant's folder says where to look."""
    from murgat.engine.folder import RunFolder

    folder = RunFolder(tmp_path / "prog", record=None)
    folder.check_config({"planner": "x"}, {}, kind="program")
    folder.write_summary({"variants": {}})
    assert main(["view", str(tmp_path / "prog")]) == 0
    assert (tmp_path / "prog" / "report.html").exists()
    variant = RunFolder(tmp_path / "prog" / "logic-declarative", record=None)
    variant.check_config({"variant": "logic-declarative"}, {}, kind="program-variant")
    capsys.readouterr()
    assert main(["view", str(tmp_path / "prog" / "logic-declarative")]) == 2
    assert "murgat view the folder above" in capsys.readouterr().err


def test_a_summary_that_cannot_be_written_exits_5_with_one_line(tmp_path: Path, example_media: Path, monkeypatch,
                                                                capsys) -> None:
    from murgat.media import safewrite

    real = safewrite._open_in

    def full_for_summary(folder_fd, name, *a, **k):  # the temporary file of summary.json (a random name)
        if name.startswith(".summary.json."):
            raise OSError(28, "No space left on device")
        return real(folder_fd, name, *a, **k)

    monkeypatch.setattr(safewrite, "_open_in", full_for_summary)
    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    inp = _write(tmp_path / "in.jsonl", [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01)."}])
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out",
                 str(tmp_path / "run"), "--quiet", "--json"]) == 5
    err = capsys.readouterr().err
    assert "Traceback" not in err and "summary.json" in err and (tmp_path / "run" / "results.jsonl").exists()


def test_api_edges(tmp_path: Path, example_media: Path) -> None:
    """Fault-finding pass: generate(out=FILE.jsonl).records was empty, load_run of a missing folder
    returned an empty result, a bad option raised SystemExit with the CLI usage."""
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "Answer: A"}}])
    q = _write(tmp_path / "q.jsonl", [{"id": f"q{k}", "media": "friday.mp4", "question": "?"} for k in range(3)])
    res = murgat.generate(q, model=f"replay:{cas}", out=tmp_path / "a.jsonl", mode="base", media_root=example_media)
    assert [r["id"] for r in res.records] == ["q0", "q1", "q2"]
    assert [r["id"] for r in murgat.load_run(tmp_path / "a.jsonl").records] == ["q0", "q1", "q2"]
    with pytest.raises(FileNotFoundError):
        murgat.load_run(tmp_path / "nothing-here")
    with pytest.raises(ValueError, match="limit"):
        murgat.score(q, judge="embedded", out=tmp_path / "r", limit=-1)


def test_view_and_summarize_a_program_variant_folder(tmp_path: Path, capsys) -> None:
    from murgat.engine.folder import PairFolder, RunFolder, read_kind

    prog = tmp_path / "prog"
    RunFolder(prog, record=None).check_config({"planner": "x"}, {}, kind="program")
    v = PairFolder(prog / "logic-declarative")
    v.append_many([{"id": "a", "record": {"id": "a"}, "trace": {"id": "a"}}])
    v.export(["a"])
    assert read_kind(prog / "logic-declarative") == "program-variant"
    assert main(["summarize", str(prog / "logic-declarative")]) == 2
    assert main(["view", str(prog / "logic-declarative")]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["score", "faithfulness", "generate", "program"])
def test_selecting_no_items_is_refused(tmp_path: Path, command: str, capsys) -> None:
    """Fault-finding pass: --ids , or --limit 0 rewrote a finished folder's summary.json to 0 items."""
    q = _write(tmp_path / "q.jsonl", [{"id": "a", "media": "friday.mp4", "question": "?", "response": "r"}])
    head = {"score": ["score", str(q), "--judge", "embedded"], "faithfulness": ["faithfulness", str(q), "--judge", "x:y"],
            "generate": ["generate", str(q), "--model", "x:y"], "program": ["program", str(q), "--planner", "x:y"]}[command]
    assert main([*head, "--out", str(tmp_path / "out"), "--limit", "0"]) == 2
    assert "select no items" in capsys.readouterr().err


def test_generate_says_when_it_redoes_an_edited_item(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: generate and program redid an edited item without the note score printed."""
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "Answer: A"}}])
    rows = [{"id": f"q{k}", "media": "friday.mp4", "question": "?"} for k in range(3)]
    q = _write(tmp_path / "q.jsonl", rows)
    args = ["generate", str(q), "--model", f"replay:{cas}", "--mode", "base", "--media-root", str(example_media),
            "--out", str(tmp_path / "g"), "--quiet", "--json"]
    assert main(args) == 0
    rows[2]["question"] = "What does the man say?"
    _write(q, rows)
    capsys.readouterr()
    assert main(args) == 0
    assert "1 item(s) changed since they were last run" in capsys.readouterr().err
