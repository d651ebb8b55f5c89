"""``murgat faithfulness`` (murgat/faithfulness/command.py): what a refused run leaves behind."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main


def test_a_refused_judge_leaves_no_cache_behind(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: a judge that cannot label steps (``embedded``) was refused with exit 2 but left the
    ``cache.sqlite`` it had opened in the output folder, where 'murgat reflect' and 'murgat score'
    discard theirs (a bad judge leaves no cache behind)."""
    inp = tmp_path / "chains.jsonl"
    inp.write_text(json.dumps({"id": "c", "media": "friday.mp4", "response": "A woman talks (audio, 0:01).\nAnswer: B"})
                   + "\n")
    out = tmp_path / "f"
    assert main(["faithfulness", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out", str(out),
                 "--quiet"]) == 2
    assert "faith_chain" in capsys.readouterr().err
    assert not [p.name for p in out.glob("cache.sqlite*")]
