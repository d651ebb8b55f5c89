"""``murgat faithfulness`` (murgat/commands/faithfulness/command.py): what a refused run leaves behind."""

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


def _labeller(tmp: Path, steps: list[dict]) -> Path:
    """A replay cassette of the labelling judge: the media description, then these step labels."""
    rows = [{"match": {"task": "faith_describe"}, "output": {"text": "A woman on a phone."}},
            {"match": {"task": "faith_chain"}, "output": {"text": json.dumps({"steps": steps})}}]
    cas = tmp / "judge.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return cas


def test_a_summary_that_cannot_be_written_exits_5(tmp_path: Path, example_media: Path, capsys, monkeypatch) -> None:
    """Before: summary.json was written through its own temporary file, outside the run folder's
    atomic writer: a failed write ended in an OSError traceback instead of exit 5 and the
    "what was written is intact" line every other command prints."""
    cas = _labeller(tmp_path, [{"index": 0, "type": "perception", "label": "faithful", "reason": "seen"},
                               {"index": 1, "type": "reasoning", "reason": "so"}])
    inp = tmp_path / "chains.jsonl"
    inp.write_text(json.dumps({"id": "c", "media": "friday.mp4",
                               "response": "A woman talks on a phone (visual, 0:01). So it is B.\nAnswer: B"}) + "\n")
    out = tmp_path / "f"
    from murgat.media import safewrite

    real = safewrite._open_in

    def no_summary(folder_fd, name, *a, **k):  # the temporary file of summary.json cannot be made
        if name.startswith(".summary.json."):
            raise OSError(28, "No space left on device")
        return real(folder_fd, name, *a, **k)

    monkeypatch.setattr(safewrite, "_open_in", no_summary)
    code = main(["faithfulness", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}",
                 "--out", str(out), "--quiet", "--json"])
    assert code == 5
    assert "summary.json" in capsys.readouterr().err
    assert (out / "results.jsonl").read_text().strip()  # the labelled item is kept


def test_item_concurrency_none_is_the_default(tmp_path: Path, example_media: Path) -> None:
    """Before: ``murgat.faithfulness(..., item_concurrency=None)`` passed validation (the field is
    ``int | None`` for score's role default) and failed in the item loop with a TypeError."""
    import murgat

    cas = _labeller(tmp_path, [{"index": 0, "type": "perception", "label": "faithful", "reason": "seen"}])
    inp = tmp_path / "chains.jsonl"
    inp.write_text(json.dumps({"id": "c", "media": "friday.mp4",
                               "response": "A woman talks on a phone (visual, 0:01).\nAnswer: B"}) + "\n")
    run = murgat.faithfulness(inp, judge=f"replay:{cas}", out=tmp_path / "f", media_root=example_media,
                              item_concurrency=None)
    assert run.settings.item_concurrency == 8 and len(run.records) == 1


def test_murgat_faithfulness_can_be_called_again(tmp_path: Path, example_media: Path) -> None:
    """Before: the first call imported the subpackage ``murgat.faithfulness``, which then replaced the
    API function of the same name on ``murgat``: every later call (and any call after ``murgat.reflect``
    or an import of ``murgat.settings.faithfulness``) failed with "'module' object is not callable"."""
    import murgat
    import murgat.settings.faithfulness  # what any import of the subpackage does
    from murgat.settings.faithfulness import FaithfulnessSettings

    cas = _labeller(tmp_path, [])
    inp = tmp_path / "chains.jsonl"
    inp.write_text(json.dumps({"id": "c", "media": "friday.mp4", "response": "She talks (visual, 0:01).\nAnswer: B"})
                   + "\n")
    for n in (1, 2):
        run = murgat.faithfulness(inp, judge=f"replay:{cas}", out=tmp_path / f"f{n}", media_root=example_media)
        assert run.kind == "faithfulness" and len(run.records) == 1
    assert murgat.settings.faithfulness.FaithfulnessSettings is FaithfulnessSettings  # still the package
