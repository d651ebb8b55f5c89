"""Where a run looks for its media (``murgat.engine.preflight.MediaPlace``): ``--media-root``, else
beside the input — and for a run folder read as input, where that run found them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from murgat.cli import main
from tests.cassettes import YES_CASSETTE, write_jsonl

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _generate(questions: Path, gen: Path, *media_root: str) -> None:
    assert main(["generate", str(questions), *media_root, "--model", f"replay:{EXAMPLES / 'cassettes' / 'model.jsonl'}",
                 "--effort", "high", "--out", str(gen), "--quiet"]) == 0


def _score_finds_every_medium(gen: Path, out: Path) -> None:
    assert main(["score", str(gen), "--judge", f"replay:{EXAMPLES / 'cassettes' / 'score.jsonl'}", "--out", str(out),
                 "--quiet", "--json"]) == 0
    records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert records and not [r["id"] for r in records if r.get("error_kind") == "missing_media"]


def test_scoring_a_generate_folder_finds_the_media_generation_read(tmp_path: Path, capsys) -> None:
    """``murgat score GEN`` without ``--media-root`` looks where ``generate --media-root`` found the
    media (its ``config.json``); before, it looked in GEN's parent and every item was missing_media."""
    media = tmp_path / "media"
    shutil.copytree(EXAMPLES / "media", media)
    gen = tmp_path / "gen"
    _generate(EXAMPLES / "questions.jsonl", gen, "--media-root", str(media))
    _score_finds_every_medium(gen, tmp_path / "scored")
    capsys.readouterr()


def test_a_run_folder_whose_recorded_media_root_is_gone_looks_beside_its_responses(tmp_path: Path, capsys) -> None:
    gen = tmp_path / "gen"
    gen.mkdir()
    (gen / "config.json").write_text(json.dumps({"config": {"media_root": str(tmp_path / "gone")}}))
    shutil.copy(EXAMPLES / "media" / "jfk.flac", gen / "jfk.flac")
    (gen / "responses.jsonl").write_text(json.dumps({"id": "a", "media": "jfk.flac",
                                                     "response": "He says it (audio, 0:00-0:02)."}) + "\n")
    out = tmp_path / "scored"
    cas = write_jsonl(tmp_path / "yes.jsonl", YES_CASSETTE)
    assert main(["score", str(gen), "--judge", f"replay:{cas}", "--out", str(out), "--quiet", "--json"]) == 0
    [rec] = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert rec.get("error_kind") != "missing_media", rec.get("error")
    capsys.readouterr()


def test_a_generate_folder_without_a_media_root_points_beside_its_dataset(tmp_path: Path, capsys) -> None:
    """``generate DATA`` without ``--media-root`` read the media beside ``DATA``: scoring its folder looks there."""
    data = tmp_path / "bench"
    shutil.copytree(EXAMPLES / "media", data)
    shutil.copy(EXAMPLES / "questions.jsonl", data / "questions.jsonl")
    gen = tmp_path / "gen"
    _generate(data / "questions.jsonl", gen)
    _score_finds_every_medium(gen, tmp_path / "scored")
    capsys.readouterr()
