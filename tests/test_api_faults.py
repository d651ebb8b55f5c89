"""A fault-finding pass over the Python API of #21 (``murgat.score(...)`` and friends), each defect
pinned: the API must accept and refuse what the command line does, keep its documented exit
contract (RunError for 2/3/5), draw no progress bar unless asked, and list records in input order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import murgat
from tests.engine.test_commands import CASSETTE, _write


def _input(tmp: Path) -> Path:
    return _write(tmp / "in.jsonl", [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01)."}])


@pytest.mark.parametrize("field,value", [("pad", float("inf")), ("fps", float("inf")), ("timeout", float("inf")),
                                         ("attributed_threshold", float("nan")), ("rpm", float("inf"))])
def test_non_finite_numbers_are_refused_as_on_the_command_line(tmp_path: Path, field: str, value: float) -> None:
    """Before: murgat.score(..., pad=float("inf")) scored with an infinite pad and wrote
    ``"pad_s": Infinity`` (not JSON) into config.json; ``--pad inf`` exits 2."""
    with pytest.raises(ValueError, match=field):
        murgat.score(_input(tmp_path), judge="embedded", out=tmp_path / "run", **{field: value})
    assert not (tmp_path / "run").exists()


def test_effort_is_checked_and_spelled_as_on_the_command_line(tmp_path: Path, example_media: Path) -> None:
    """Before: effort="bogus" ran (every real provider then failed per request) and effort="LOW" gave
    another settings fingerprint than ``--effort LOW`` (which the command line turns into "low")."""
    from murgat.cli import main

    with pytest.raises(ValueError, match="unknown effort"):
        murgat.score(_input(tmp_path), judge="embedded", out=tmp_path / "run", effort="bogus")
    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    run = murgat.score(_input(tmp_path), judge=f"replay:{cas}", out=tmp_path / "run", media_root=example_media,
                       effort="LOW")
    assert run.settings.effort == "low"
    # the command line with the same settings resumes that folder (same fingerprint), not refuses it
    assert main(["score", str(tmp_path / "in.jsonl"), "--judge", f"replay:{cas}", "--out", str(tmp_path / "run"),
                 "--media-root", str(example_media), "--effort", "LOW", "--quiet", "--json"]) == 0


def test_a_run_folder_that_cannot_be_written_is_a_run_error_5(tmp_path: Path, example_media: Path, monkeypatch) -> None:
    """Before: the API leaked murgat.core.jsonl.ResultsWriteError, where the README promises RunError
    with exit status 5 (the command line exits 5)."""
    from murgat.media import safewrite

    real = safewrite._open_in

    def full_for_summary(folder_fd, name, *a, **k):  # the temporary file of summary.json (a random name)
        if name.startswith(".summary.json."):
            raise OSError(28, "No space left on device")
        return real(folder_fd, name, *a, **k)

    monkeypatch.setattr(safewrite, "_open_in", full_for_summary)
    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    with pytest.raises(murgat.RunError) as exc:
        murgat.score(_input(tmp_path), judge=f"replay:{cas}", out=tmp_path / "run", media_root=example_media)
    assert exc.value.exit_code == 5 and "summary.json" in exc.value.message


def test_a_settings_object_draws_no_progress_bar_unless_asked(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: murgat.score(settings=ScoreSettings(...)) drew the progress bar on stderr (keywords did not)."""
    from murgat.settings.score import ScoreSettings

    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    s = ScoreSettings(input=str(_input(tmp_path)), judge=f"replay:{cas}", out=str(tmp_path / "run"),
                      media_root=str(example_media))
    capsys.readouterr()
    run = murgat.score(settings=s)
    assert run.exit_code == 0 and "score 1/1" not in capsys.readouterr().err
    assert s.quiet is False  # the caller's object is left as it was


def test_paired_folders_list_records_in_input_order(tmp_path: Path) -> None:
    """Before: reflect's (and program's) results.jsonl stayed in completion order, so
    ``murgat.reflect(...).records`` / ``load_run`` listed items as they happened to finish (two runs
    of one input differed), though responses.jsonl and traces.jsonl were in input order."""
    from murgat.engine.folder import PairFolder, pair_record, write_atomic

    folder = PairFolder(tmp_path / "run")
    for i in ("c", "a", "b"):  # finished in this order
        folder.append_many([pair_record(i, {"id": i, "response": i}, {"id": i})])
    write_atomic(tmp_path / "run" / "config.json", json.dumps({"kind": "reflect"}))
    folder.export(["a", "b", "c"])
    assert [json.loads(ln)["id"] for ln in (tmp_path / "run" / "results.jsonl").read_text().splitlines()] == ["a", "b", "c"]
    assert [r["id"] for r in murgat.load_run(tmp_path / "run").records] == ["a", "b", "c"]


def test_a_sweep_folder_has_a_summary_for_load_run_and_summarize(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: load_run(SWEEP).summary was {} and ``murgat summarize SWEEP`` exited 2 ("a 'sweep' folder
    without summary.json"): a sweep's summary is its sweep.json."""
    from murgat.cli import main

    gen = _write(tmp_path / "gen.jsonl", [{"match": {"task": "generate"}, "output": {"text": "He speaks (audio, 0:01).\n"
                                                                                              "Answer: A"}}])
    q = _write(tmp_path / "q.jsonl", [{"id": "q", "media": "friday.mp4", "question": "?", "options": ["a", "b"],
                                       "gold": "A"}])
    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    run = murgat.sweep(q, model=f"replay:{gen}", judge=f"replay:{cas}", out=tmp_path / "sw", media_root=example_media,
                       efforts="low")
    assert run.summary["rows"][0]["effort"] == "low"
    assert murgat.load_run(tmp_path / "sw").summary == run.summary
    capsys.readouterr()
    assert main(["summarize", str(tmp_path / "sw")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "sweep" and doc["summary"] == run.summary


def test_the_api_runs_inside_a_running_event_loop(tmp_path: Path, example_media: Path) -> None:
    """Before: in a Jupyter cell (the kernel's asyncio loop is running) every call failed with
    "asyncio.run() cannot be called from a running event loop" after writing config.json."""
    import asyncio

    cas = _write(tmp_path / "c.jsonl", CASSETTE)

    async def cell() -> murgat.RunResult:
        return murgat.score(_input(tmp_path), judge=f"replay:{cas}", out=tmp_path / "run", media_root=example_media)

    run = asyncio.run(cell())
    assert run.exit_code == 0 and [r["id"] for r in run.records] == ["a"]


def test_a_refusal_reaches_the_api_as_the_error_raised_not_a_line_read_back(tmp_path: Path, example_media: Path,
                                                                            monkeypatch) -> None:
    """#32: the API built RunError from the last ``error:`` line it found on stderr. The error the
    command raised is what the caller gets now: its class (a folder of another command is a
    RunConfigMismatch, and a RunError), its exit status and its message, whatever stderr is."""
    import io

    from murgat.engine.folder import RunConfigMismatch, RunFolder

    RunFolder(tmp_path / "run", record=None).check_config({"judge": "x"}, {}, kind="faithfulness")
    monkeypatch.setattr("sys.stderr", io.StringIO())  # nothing to read back from
    with pytest.raises(murgat.RunError) as exc:
        murgat.score(_input(tmp_path), judge="embedded", out=tmp_path / "run", media_root=example_media)
    assert isinstance(exc.value, RunConfigMismatch) and exc.value.exit_code == 2
    assert exc.value.message == f"--out {tmp_path / 'run'}: holds a 'faithfulness' run, not 'score'; use a new --out folder"
