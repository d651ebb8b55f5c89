"""The run folder's line reader (``murgat.engine.folder``): linear in the file, whatever its lines."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from murgat.engine import folder as folder_mod


class _Counted(str):
    """A chunk of the file that counts the characters searched for a line break in it."""

    searched = 0

    def find(self, sub, start=0, end=None):  # type: ignore[override]
        at = str.find(self, sub, start, len(self) if end is None else end)
        _Counted.searched += (at + 1 if at >= 0 else len(self)) - start
        return at

    def split(self, sep=None, maxsplit=-1):  # type: ignore[override]
        _Counted.searched += len(self)
        return str.split(self, sep, maxsplit)


class _Reader:
    """A text file read in chunks of ``size`` characters, each a :class:`_Counted`."""

    def __init__(self, text: str, size: int) -> None:
        self.f, self.size = io.StringIO(text), size

    def read(self, n: int = -1) -> str:
        return _Counted(self.f.read(min(n, self.size) if n >= 0 else self.size))


def test_one_long_line_is_searched_once_not_once_per_chunk() -> None:
    """Before: the pending text was split again after every chunk read, so a 64 MiB line without a
    break was searched 64 times over (quadratic); every character is searched once now."""
    text = "x" * 50_000 + "\r\n" + "y" * 30_000 + "\n" + "z" * 999
    _Counted.searched = 0
    lines = list(folder_mod._lines(_Reader(text, 1_000)))
    assert lines == ["x" * 50_000, "y" * 30_000, "z" * 999]
    assert _Counted.searched == len(text)


def test_lines_split_at_newline_only() -> None:
    text = "a\u2028b\nc\r\n\nd"
    assert list(folder_mod._lines(_Reader(text, 2))) == ["a\u2028b", "c", "", "d"]


def test_a_config_nested_absurdly_is_unreadable_not_a_crash(tmp_path: Path) -> None:
    """``config.json`` of 100,000 nested brackets: ``check_config`` rewrites it (no record yet) and
    ``read_kind`` reads no kind, as for any unreadable file (both raised RecursionError)."""
    from murgat.engine.folder import RunFolder, read_kind

    folder = RunFolder(tmp_path)
    folder.config_path.write_text("[" * 100_000 + "]" * 100_000)
    assert read_kind(tmp_path) is None
    folder.check_config({"a": 1}, {"a": 1}, kind="score")
    assert read_kind(tmp_path) == "score" and any("unreadable; written again" in n for n in folder.notices)


@pytest.mark.parametrize("target", ["loop", "missing/folder"])
def test_an_out_link_to_nowhere_is_named_as_such(target: str, tmp_path: Path) -> None:
    """A dangling ``--out`` link, or a loop, is said to be one (mkdir's own words were "File exists")."""
    from murgat.engine.folder import NotWritable, check_writable_dir

    link = tmp_path / "loop"
    link.symlink_to(tmp_path / target)
    with pytest.raises(NotWritable, match="symbolic link that leads to no folder"):
        check_writable_dir(link, "--out")


# --- reading finished records straight from their text, and one scan serving a run's end ---

LEGACY = Path(__file__).resolve().parents[1] / "data" / "legacy_runs"


def _record_lines() -> list[str]:
    """Every line of the score and faithfulness records kept from earlier versions (the shapes the fast
    reading must read exactly as the step-by-step one does)."""
    lines: list[str] = []
    for path in sorted(LEGACY.rglob("results.jsonl")):
        lines += [ln for ln in path.read_text(encoding="utf-8").split("\n") if ln.strip()]
    return lines


@pytest.mark.parametrize("slim", [False, True])
def test_a_finished_line_read_from_its_text_is_the_record_read_step_by_step(tmp_path: Path, slim: bool) -> None:
    """The fast reading (pydantic's JSON parser) and the old one (``json.loads``, the slim drop, the model)
    give equal records with equal fields set, for every kept record of earlier versions."""
    from murgat.core.jsonl import loads_line
    from murgat.core.steps import FaithResult
    from murgat.engine.folder import _REQUIRED

    lines = _record_lines()
    assert len(lines) >= 5
    checked = 0
    for model in (folder_mod.ResponseResult, FaithResult):
        rf = folder_mod.RunFolder(tmp_path / model.__name__, record=model)
        for line in lines:
            try:
                old = loads_line(line)
                rf._check_required(old)
                if slim:
                    sents = old.pop("sentences", None)
                    if sents and "n_time_like" not in old:
                        old["n_time_like"] = sum(len((s.get("sentence") or {}).get("time_like") or []) for s in sents)
                    old.pop("steps", None)
                want = rf._validate(old)
            except ValueError:  # pydantic's ValidationError is one too: not this stream's record
                assert rf._parse_finished(line, slim) is None
                continue
            got = rf._parse_finished(line, slim)
            assert got is not None and got == want and got.model_fields_set == want.model_fields_set
            checked += 1
        assert _REQUIRED.get(model, frozenset()) == rf.required
    assert checked >= 5


def test_a_line_short_of_a_required_key_is_left_to_the_reading_that_says_why(tmp_path: Path) -> None:
    """A bare ``{"id": …}`` validates as a record (every other field has a default) but is not a
    finished item: the fast reading hands it back, and the scan reports it as it always did."""
    rf = folder_mod.RunFolder(tmp_path / "run")
    assert rf._parse_finished('{"id": "a"}', slim=True) is None
    (tmp_path / "run" / "results.jsonl").write_text('{"id": "a"}\n', encoding="utf-8")
    assert folder_mod.RunFolder(tmp_path / "run", repair=False).load_results(slim=True) == []


def _finished(i: int) -> str:
    return folder_mod.ResponseResult(id=f"r{i}", case="scored", n_sentences=i).model_dump_json()


def test_compaction_leaves_the_scan_true_of_the_new_file_without_reading_it_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After :meth:`compact` the folder's records are those a fresh scan of the compacted file gives
    (the latest of each id, in input order), and asking for them reads nothing."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(_finished(i) + "\n" for i in (3, 1, 2, 1)), encoding="utf-8")
    rf = folder_mod.RunFolder(run)
    rf.compact(order=["r1", "r2", "r3"])
    scans: list[int] = []
    real = folder_mod.RunFolder._scan
    monkeypatch.setattr(folder_mod.RunFolder, "_scan", lambda self, *a, **k: scans.append(1) or real(self, *a, **k))
    held = rf.latest_results(slim=True)
    fresh = folder_mod.RunFolder(run, repair=False).latest_results(slim=True)
    assert scans == [1]  # the fresh folder's, not the held one's
    assert [r.model_dump() for r in held] == [r.model_dump() for r in fresh]
    assert [r.id for r in held] == ["r1", "r2", "r3"]
    assert rf._last_line == {"r1": 1, "r2": 2, "r3": 3}
    assert rf.latest_results(slim=True, want={"r2"})[0].id == "r2" and scans == [1]


def test_a_file_changed_under_compaction_is_scanned_again(tmp_path: Path) -> None:
    """When the file is not what compaction wrote (a line added since), the records come from a scan."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text(_finished(1) + "\n", encoding="utf-8")
    rf = folder_mod.RunFolder(run)
    rf.compact(order=["r1"])
    with open(run / "results.jsonl", "a", encoding="utf-8") as f:
        f.write(_finished(2) + "\n")
    assert [r.id for r in rf.latest_results(slim=True)] == ["r1", "r2"]
