"""``murgat annotate`` on a run whose summary.json is damaged: a named error (exit 2), not a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

from murgat.cli import main
from tests.commands.faithfulness.test_faithfulness import cassette, labelling_input


def test_annotate_a_faithfulness_run_with_a_truncated_summary(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: the faithfulness path read summary.json with json.loads (JSONDecodeError traceback)."""
    media = tmp_path / "media"
    shutil.copytree(example_media, media)
    chains = labelling_input(tmp_path / "chains.jsonl")
    run = tmp_path / "faith"
    assert main(["faithfulness", str(chains), "--media-root", str(media), "--judge", f"replay:{cassette(tmp_path)}",
                 "--out", str(run), "--granularity", "step", "--quiet", "--json"]) == 0
    (run / "summary.json").write_text((run / "summary.json").read_text()[:30])
    capsys.readouterr()
    assert main(["annotate", str(run), "--annotator", "ann1"]) == 2
    err = capsys.readouterr().err
    assert "summary.json: not valid JSON" in err and "Traceback" not in err
    assert not (run / "annotate-ann1.html").exists()
