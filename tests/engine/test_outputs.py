"""The one output rule (``murgat.engine.outputs``): what a command may write, and how it is written.

Real files, folders, FIFOs, symlinks and descriptors on this machine; a file-size limit is set
with ``RLIMIT_FSIZE`` in a child process. Nothing here writes to a device node: ``/dev/null`` and
``/dev/stdout`` are only claimed (streams are written through a FIFO and ``/dev/fd/N`` of a pipe),
so a fault in the rule can never replace a device of the machine running the tests.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from murgat.core.jsonl import ResultsWriteError
from murgat.engine.outputs import OutputRefused, claim_output, content_of, is_stream
from tests.conftest import ROOT


def _score_folder(path: Path) -> Path:
    """A score run folder as murgat writes it (the kind in config.json)."""
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"kind": "score", "fingerprint": {}, "config": {}}))
    (path / "results.jsonl").write_text(json.dumps({"id": "a", "case": "scored", "scores": {}}) + "\n")
    return path


def test_an_input_is_never_an_output(tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": "a", "response": "x"}\n')
    with pytest.raises(OutputRefused, match="is an input of this command"):
        claim_output(inp, inputs=[inp])
    link = tmp_path / "hard.jsonl"
    os.link(inp, link)  # the same file under another name
    with pytest.raises(OutputRefused, match="is an input"):
        claim_output(link, inputs=[inp], role="cassette")
    assert inp.read_text() == '{"id": "a", "response": "x"}\n'


def test_a_runs_own_files_are_its_commands_only(tmp_path: Path) -> None:
    run = _score_folder(tmp_path / "run")
    before = (run / "results.jsonl").read_bytes()
    for name in ("results.jsonl", "summary.json", "config.json", ".lock", "responses.jsonl"):
        with pytest.raises(OutputRefused, match="part of the 'score' run"):
            claim_output(run / name)  # existing or not yet
    assert (run / "results.jsonl").read_bytes() == before
    # a report or an export beside them is fine, and another run may share the cache
    claim_output(run / "report.html")
    claim_output(run / "cache.sqlite", role="cache")
    with pytest.raises(OutputRefused, match="part of the 'score' run"):
        claim_output(run / "results.jsonl", role="cache")


def test_murgat_data_of_another_sort_is_not_replaced(tmp_path: Path) -> None:
    cassette = tmp_path / "answers.jsonl"
    cassette.write_text(json.dumps({"match": {"task": "entail"}, "output": {"text": "yes"}}) + "\n")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "q", "evidence": []}) + "\n")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "q", "annotator": "ann", "sentences": []}) + "\n")
    db = tmp_path / "c.sqlite"
    import sqlite3

    sqlite3.connect(db).execute("create table t(x)").connection.close()
    assert [content_of(p) for p in (cassette, gold, labels, db)] == ["cassette", "gold", "labels", "sqlite"]
    for p, sort in ((cassette, "replay cassette"), (gold, "gold evidence"), (labels, "human labels"), (db, "SQLite")):
        with pytest.raises(OutputRefused, match=sort):
            claim_output(p)  # an export or a page over it
    claim_output(gold, replaces=("gold",))  # a gold import may replace a gold file
    claim_output(db, role="cache")
    claim_output(cassette, role="cassette")
    with pytest.raises(OutputRefused, match="cache must be a SQLite database"):
        claim_output(cassette, role="cache")
    with pytest.raises(OutputRefused, match="appended only to a cassette"):
        claim_output(gold, role="cassette")
    # an empty or new file is fine for both, a damaged cache file keeps its name (the cache moves it aside)
    (tmp_path / "old.sqlite").write_bytes(b"garbage")
    claim_output(tmp_path / "old.sqlite", role="cache")
    claim_output(tmp_path / "new.jsonl", role="cassette")


def test_a_long_first_line_is_recognised_by_its_keys(tmp_path: Path) -> None:
    big = tmp_path / "results.jsonl"
    # a record as murgat writes it (id, error, scores, case first), its sentences past the 1 MiB read
    big.write_text(json.dumps({"id": "a", "error": None, "scores": {}, "case": "scored",
                               "sentences": [{"text": "x" * (2 << 20)}]}) + "\n")
    assert content_of(big) == "results"


def test_devices_and_pipes_are_streamed_into_never_replaced(tmp_path: Path) -> None:
    for dev in ("/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/2"):
        claim = claim_output(dev)
        assert claim.stream and claim.fd in (1, 2) and is_stream(dev)
    null = claim_output("/dev/null")
    assert null.stream and null.fd is None and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(OutputRefused, match="must be a regular file"):
        claim_output("/dev/null", role="cache")
    with pytest.raises(OutputRefused, match="is a folder"):
        claim_output(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    claim_output(fifo).write_text("id,case\na,scored\n")
    reader.join(10)
    assert got == [b"id,case\na,scored\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the pipe


def test_a_descriptor_is_written_through_a_duplicate(tmp_path: Path) -> None:
    code = ("import sys; from murgat.engine.outputs import claim_output; "
            "claim_output('/dev/fd/1').write_text('streamed\\n'); print('after', flush=True)")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode == 0, got.stderr
    assert got.stdout == "streamed\nafter\n"


def test_a_symlink_out_of_its_folder_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("keep me")
    (run / "report.html").symlink_to(secret)
    with pytest.raises(OutputRefused, match=r"symbolic link to .*elsewhere\.txt, outside"):
        claim_output(run / "report.html")
    assert secret.read_text() == "keep me"
    # a link to a file inside the folder is written at its target, and stays a link
    (run / "pages").mkdir()
    (run / "page.html").symlink_to(run / "pages" / "v2.html")
    claim_output(run / "page.html").write_text("<p>new</p>")
    assert (run / "page.html").is_symlink() and (run / "pages" / "v2.html").read_text() == "<p>new</p>"


def test_folders_of_another_kind_or_holding_foreign_files_are_refused(tmp_path: Path) -> None:
    run = _score_folder(tmp_path / "score")
    with pytest.raises(OutputRefused, match="holds a 'score' run, not 'ground'"):
        claim_output(run, role="folder", kind="ground", files=("config.json", "results.jsonl"))
    with pytest.raises(OutputRefused, match="is a murgat 'score' run folder"):
        claim_output(run, role="folder")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.json").write_text('{"user": "settings"}')
    with pytest.raises(OutputRefused, match=r"holds config\.json, which no murgat ground run wrote"):
        claim_output(mine, role="folder", kind="ground", files=("config.json", "results.jsonl"))
    ground = tmp_path / "ground"
    ground.mkdir()
    (ground / "config.json").write_text('{"kind": "ground"}')
    claim = claim_output(ground, role="folder", kind="ground", files=("config.json", "results.jsonl"))
    claim.file("config.json").write_text('{"kind": "ground", "again": true}')  # its own files: rewritten
    assert json.loads((ground / "config.json").read_text())["again"] is True
    with pytest.raises(OutputRefused, match="is not a folder"):
        claim_output(ground / "config.json", role="folder")


def test_an_unwritable_place_is_refused_before_any_work_and_leaves_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputRefused, match="cannot be written"):
        claim_output(blocker / "sub" / "report.html")
    with pytest.raises(OutputRefused, match="cannot write to the output folder"):
        claim_output(blocker / "folder", role="folder")
    deep = tmp_path / "a" / "b"
    claim_output(deep / "x.csv")
    assert deep.is_dir() and list(deep.iterdir()) == []  # the probe leaves nothing behind


def test_a_write_that_fails_leaves_the_old_file_whole(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text("old page")
    page.chmod(0o640)
    code = ("import resource, sys; from murgat.engine.outputs import claim_output; "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)); "
            f"claim_output({str(page)!r}).write_text('x' * 100000)")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode != 0 and "ResultsWriteError" in got.stderr and "File too large" in got.stderr
    assert page.read_text() == "old page" and sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    claim_output(page).write_text("new page")
    assert page.read_text() == "new page" and stat.S_IMODE(page.stat().st_mode) == 0o640  # mode kept


def test_write_errors_are_results_write_errors(tmp_path: Path) -> None:
    claim = claim_output(tmp_path / "x.csv")

    def boom(f: object) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(ResultsWriteError, match=r"cannot write .*x\.csv: No space left on device"):
        claim.write(boom)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("role", ["file", "cache", "cassette"])
def test_a_loop_of_symlinks_is_refused_not_a_traceback(tmp_path: Path, role: str) -> None:
    """Before: ``OSError: [Errno 40] Too many levels of symbolic links`` out of the claim."""
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    (tmp_path / "self").symlink_to("self")
    for name in ("a", "self"):
        with pytest.raises(OutputRefused, match="cannot be followed"):
            claim_output(tmp_path / name, role=role)  # type: ignore[arg-type]


def test_a_cassette_opening_with_a_blank_line_is_still_a_cassette(tmp_path: Path) -> None:
    """The replay reader passes over blank lines, so a hand-written cassette may open with one.
    Before, it was "no murgat data": an export replaced it, and ``--record`` refused to append to it."""
    cassette = tmp_path / "answers.jsonl"
    cassette.write_text('\n\n{"match": {"task": "entail", "inputs": {}}, "output": {"text": "yes"}}\n')
    assert content_of(cassette) == "cassette"
    with pytest.raises(OutputRefused, match="replay cassette"):
        claim_output(cassette, role="file")
    assert claim_output(cassette, role="cassette").target == cassette
