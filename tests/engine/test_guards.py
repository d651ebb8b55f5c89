"""Where every run command writes, checked once before any work (``murgat.engine.guards.check_outputs``):
``--cache``, ``--record`` and ``--out`` are claimed by the one output rule (``murgat.engine.outputs``)
for ``score``, ``faithfulness``, ``reflect``, ``program``, ``generate`` and ``sweep`` alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from murgat.cli import main
from tests.cassettes import YES_CASSETTE as SCORE_CASSETTE
from tests.cassettes import write_jsonl as _write

COMMANDS = ["score", "faithfulness", "reflect", "program", "generate", "sweep"]


def _input(tmp: Path) -> Path:
    """One item every command reads: a question with options and gold, and a cited response."""
    return _write(tmp / "in.jsonl", [{"id": "a", "media": "friday.mp4", "question": "What mood is the man in?",
                                      "options": ["happy", "bad humor"], "gold": "B",
                                      "response": "She asks for him (audio, 0:01-0:03).\nAnswer: B"}])


def _argv(command: str, inp: Path, cas: Path, out: Path, media: Path) -> list[str]:
    judge = f"replay:{cas}"
    head = {
        "score": ["score", str(inp), "--judge", judge],
        "faithfulness": ["faithfulness", str(inp), "--judge", judge],
        "reflect": ["reflect", str(inp), "--model", judge, "--detector", judge],
        "program": ["program", str(inp), "--planner", judge, "--variant", "logic-declarative"],
        "generate": ["generate", str(inp), "--model", judge, "--mode", "base"],
        "sweep": ["sweep", str(inp), "--model", judge, "--judge", judge, "--efforts", "low"],
    }[command]
    return [*head, "--media-root", str(media), "--out", str(out), "--quiet", "--json"]


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (what a refused run must leave as it was)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def scored(tmp_path: Path, example_media: Path) -> Path:
    """A finished score run (another run's folder, whose files no other run may take)."""
    cas = _write(tmp_path / "score-cassette.jsonl", SCORE_CASSETTE)
    run = tmp_path / "scored"
    assert main(["score", str(_input(tmp_path)), "--judge", f"replay:{cas}", "--media-root", str(example_media),
                 "--out", str(run), "--quiet", "--json"]) == 0
    return run


@pytest.mark.parametrize("command", COMMANDS)
def test_cache_naming_the_input_is_refused_and_nothing_touched(command: str, tmp_path: Path, example_media: Path,
                                                                capsys) -> None:
    """Before: the input was moved aside as ``in.jsonl.corrupt-<time>`` and a SQLite database put in its place."""
    inp = _input(tmp_path)
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    before = _tree(tmp_path)
    out = tmp_path / "out"
    assert main([*_argv(command, inp, cas, out, example_media), "--cache", str(inp)]) == 2
    err = capsys.readouterr().err
    assert f"--cache {inp}" in err and "input" in err and "Traceback" not in err
    assert _tree(tmp_path) == before and not out.exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_cache_naming_a_runs_records_is_refused(command: str, tmp_path: Path, scored: Path, example_media: Path,
                                                capsys) -> None:
    """Before: ``--cache RUN/results.jsonl`` moved the run's records aside and put a database in their place."""
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    before = _tree(scored)
    assert main([*_argv(command, tmp_path / "in.jsonl", cas, tmp_path / "out", example_media), "--cache",
                 str(scored / "results.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "results.jsonl" in err and "'score' run" in err
    assert _tree(scored) == before and not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_cache_naming_the_replayed_cassette_is_refused(command: str, tmp_path: Path, example_media: Path,
                                                       capsys) -> None:
    inp = _input(tmp_path)
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    before = cas.read_bytes()
    assert main([*_argv(command, inp, cas, tmp_path / "out", example_media), "--cache", str(cas)]) == 2
    assert "input of this command" in capsys.readouterr().err and cas.read_bytes() == before
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_another_runs_cache_may_be_shared(tmp_path: Path, scored: Path, example_media: Path) -> None:
    """A run's cache.sqlite is safe to share: the rule does not refuse it."""
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    assert main([*_argv("score", tmp_path / "in.jsonl", cas, tmp_path / "out", example_media), "--cache",
                 str(scored / "cache.sqlite")]) == 0


@pytest.mark.parametrize("target", ["input", "cassette", "cache", "records"])
def test_record_never_appends_to_what_is_not_a_cassette(target: str, tmp_path: Path, scored: Path,
                                                        example_media: Path, capsys) -> None:
    """Before: ``--record in.jsonl`` appended cassette lines to the input (and to the replayed cassette,
    the cache or a run's records alike)."""
    inp = _input(tmp_path)
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    path = {"input": inp, "cassette": cas, "cache": scored / "cache.sqlite", "records": scored / "results.jsonl"}[target]
    before = _tree(tmp_path)
    assert main([*_argv("score", inp, cas, tmp_path / "out", example_media), "--record", str(path)]) == 2
    assert f"--record {path}" in capsys.readouterr().err
    assert _tree(tmp_path) == before


def test_record_appends_to_a_cassette_or_a_new_file(tmp_path: Path, example_media: Path) -> None:
    inp = _input(tmp_path)
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    rec = tmp_path / "new" / "rec.jsonl"
    args = _argv("score", inp, cas, tmp_path / "out", example_media)
    assert main([*args, "--record", str(rec)]) == 0
    n = len(rec.read_text().splitlines())
    assert n > 0
    assert main([*args, "--overwrite", "--record", str(rec), "--cache", str(tmp_path / "other.sqlite")]) == 0
    assert len(rec.read_text().splitlines()) == 2 * n  # appended to a cassette


@pytest.mark.parametrize("command", ["faithfulness", "reflect", "program", "generate", "sweep"])
def test_out_naming_a_run_of_another_kind_is_refused_before_any_work(command: str, tmp_path: Path, scored: Path,
                                                                     example_media: Path, capsys) -> None:
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    before = _tree(scored)
    assert main(_argv(command, tmp_path / "in.jsonl", cas, scored, example_media)) == 2
    assert "'score' run" in capsys.readouterr().err
    assert _tree(scored) == before


@pytest.mark.parametrize("what", ["cassette", "device", "records"])
def test_generate_out_file_takes_only_a_responses_file(what: str, tmp_path: Path, scored: Path, example_media: Path,
                                                       capsys) -> None:
    """``generate --out FILE.jsonl`` appends responses to FILE.jsonl: never to a cassette, a device or a
    run's records."""
    inp = _input(tmp_path)
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "Answer: B"}}])
    other = _write(tmp_path / "other-cassette.jsonl", SCORE_CASSETTE)
    target = {"cassette": other, "device": Path("/dev/null"), "records": scored / "results.jsonl"}[what]
    before = _tree(tmp_path)
    assert main(_argv("generate", inp, cas, target, example_media)) == 2
    assert f"--out {target}" in capsys.readouterr().err
    assert _tree(tmp_path) == before


def test_generate_out_file_resumes_its_own_responses(tmp_path: Path, example_media: Path) -> None:
    inp = _input(tmp_path)
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "Answer: B"}}])
    args = _argv("generate", inp, cas, tmp_path / "answers.jsonl", example_media)
    assert main(args) == 0 and main(args) == 0
    assert len((tmp_path / "answers.jsonl").read_text().splitlines()) == 1


def test_a_variant_file_linked_out_of_the_program_folder_is_refused(tmp_path: Path, example_media: Path,
                                                                    capsys) -> None:
    """A program run writes each variant's files itself, never through a link to a file elsewhere."""
    inp = _input(tmp_path)
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "plan"}, "output": {"text": "no program"}}])
    elsewhere = _write(tmp_path / "mine.jsonl", [{"note": "my own file"}])
    out = tmp_path / "out"
    (out / "logic-declarative").mkdir(parents=True)
    (out / "logic-declarative" / "responses.jsonl").symlink_to(elsewhere)
    assert main(_argv("program", inp, cas, out, example_media)) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert elsewhere.read_text() == '{"note": "my own file"}\n'
    assert sorted(p.name for p in out.rglob("*")) == ["logic-declarative", "responses.jsonl"]


def test_a_refused_cache_leaves_no_folder_it_made(tmp_path: Path, scored: Path, example_media: Path) -> None:
    """The folders made while the outputs were proved writable go again when one of them is refused."""
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    out = tmp_path / "new" / "run"
    assert main([*_argv("score", tmp_path / "in.jsonl", cas, out, example_media), "--cache",
                 str(scored / "results.jsonl")]) == 2
    assert not (tmp_path / "new").exists()


def test_a_folder_input_is_read_as_its_responses_file(tmp_path: Path, example_media: Path, capsys) -> None:
    """``score DIR --out DIR`` (a folder holding responses.jsonl, as ``import inspect`` writes it) scores into
    the folder; ``--cache DIR/responses.jsonl`` names the input and is refused."""
    folder = tmp_path / "imported"
    folder.mkdir()
    _input(folder).rename(folder / "responses.jsonl")
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    before = (folder / "responses.jsonl").read_bytes()
    args = ["score", str(folder), "--judge", f"replay:{cas}", "--media-root", str(example_media), "--quiet", "--json"]
    assert main([*args, "--out", str(tmp_path / "run"), "--cache", str(folder / "responses.jsonl")]) == 2
    assert "input of this command" in capsys.readouterr().err
    assert main([*args, "--out", str(folder)]) == 0
    assert (folder / "responses.jsonl").read_bytes() == before and (folder / "results.jsonl").exists()


def test_an_input_hard_linked_as_the_runs_results_is_refused(tmp_path: Path, example_media: Path, capsys) -> None:
    """``OUT/results.jsonl`` that is the input under another name (a hard link) would be appended
    to: refused by the output rule's same-file check, as a symbolic link or the path itself is."""
    inp = _input(tmp_path)
    cas = _write(tmp_path / "c.jsonl", SCORE_CASSETTE)
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").hardlink_to(inp)
    before = _tree(tmp_path)
    assert main(_argv("score", inp, cas, out, example_media)) == 2
    err = capsys.readouterr().err
    assert "is an input of this command" in err and "Traceback" not in err
    assert _tree(tmp_path) == before
