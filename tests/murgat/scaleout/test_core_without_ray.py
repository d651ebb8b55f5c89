"""Ray is an optional extra: the core never imports it, and asking for it without it installed
is a clear error, not a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_the_core_does_not_import_ray() -> None:
    code = ("import sys; import murgat.cli as c; c.build_parser(); import murgat.pipeline.runner, programs.cli, "
            "murgat.faithfulness.cli, murgat.generation.cli, murgat.scaleout; print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_run_on_ray_without_ray_says_how_to_get_it(tmp_path: Path, example_media: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "Hi there you (audio, 0:01)."}) + "\n")
    code = ("import sys; sys.modules['ray'] = None; from murgat.cli import main; "
            f"sys.exit(main(['score', {str(inp)!r}, '--media-root', {str(example_media)!r}, '--judge', 'embedded', "
            f"'--out', {str(tmp_path / 'run')!r}, '--run-on', 'ray', '--quiet']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2 and "pip install 'murgat[ray]'" in out.stderr
