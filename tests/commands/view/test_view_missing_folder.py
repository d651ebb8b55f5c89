"""``view``, ``summarize`` and ``annotate`` on a path that is not a run folder say what it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from murgat.cli import main


@pytest.mark.parametrize("command", [["view"], ["summarize"], ["annotate", "--annotator", "ann"]])
def test_a_folder_that_does_not_exist_is_said_not_to_exist(command: list[str], tmp_path: Path, capsys) -> None:
    """Before: "runs/nonexist has no summary.json", as if the folder were there."""
    gone = tmp_path / "runs" / "nonexist"
    assert main([command[0], str(gone), *command[1:]]) == 2
    err = capsys.readouterr().err
    assert "the folder does not exist" in err and str(gone) in err and "summary.json" not in err
    assert "Traceback" not in err


def test_a_file_is_not_a_run_folder(tmp_path: Path, capsys) -> None:
    f = tmp_path / "results.jsonl"
    f.write_text("")
    assert main(["view", str(f)]) == 2
    assert "is a file, not a run folder" in capsys.readouterr().err
