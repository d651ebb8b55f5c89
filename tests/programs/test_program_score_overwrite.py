"""``murgat program --score`` honours ``--overwrite`` in its scoring folders too (fault-finding pass of #21)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from murgat.cli import main
from tests.programs.test_program_e2e import Q, program_cassette, score_cassette


def test_overwrite_with_another_judge_rescores_instead_of_refusing(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: ``program --score --overwrite`` with another --judge exited 2 saying "use --overwrite to
    start again" (the variants' scoring folders OUT/VARIANT/run kept the old judge's settings)."""
    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps(Q) + "\n")
    cas = program_cassette(tmp_path)
    first = score_cassette(tmp_path)
    second = tmp_path / "score-again.jsonl"  # the same answers under another judge spec
    shutil.copy(first, second)
    out = tmp_path / "prog"
    args = ["program", str(data), "--media-root", str(example_media), "--variant", "logic-imperative", "--planner",
            f"replay:{cas}", "--no-check", "--out", str(out), "--json", "--quiet", "--score", "--overwrite"]
    assert main([*args, "--judge", f"replay:{first}"]) == 0
    capsys.readouterr()
    assert main([*args, "--judge", f"replay:{second}"]) == 0, capsys.readouterr().err
    cfg = json.loads((out / "logic-imperative" / "run" / "config.json").read_text())
    assert str(second) in json.dumps(cfg)
