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
