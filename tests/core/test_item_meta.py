"""An item's own fields (``Item.meta``, and the input's extra fields) travel from the loaders through
generate and score into the records — where breakdowns group on them — without entering what
identifies an item's work: adding or editing them redoes nothing, and old folders resume as they are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from murgat.cli import main
from murgat.core.breakdown import breakdown
from murgat.core.inputs import iter_items
from murgat.core.schema import Item, ResponseResult
from murgat.engine.loop import item_digest

LEGACY = Path(__file__).resolve().parents[1] / "data" / "legacy_runs"
WORLDSENSE = Path(__file__).resolve().parents[1] / "data" / "worldsense"
CASSETTE = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["Something is heard."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]


def _jsonl(p: Path, rows: list[dict]) -> Path:
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_meta_is_not_part_of_an_items_digest() -> None:
    plain = Item(id="a", media="m.mp4", question="q", response="r")
    assert item_digest(plain) == item_digest(Item.model_validate({"id": "a", "media": "m.mp4", "question": "q",
                                                                  "response": "r", "meta": {"task_type": "count"},
                                                                  "task_domain": "x"}))
    assert item_digest(plain) != item_digest(Item(id="a", media="m.mp4", question="q2", response="r"))


def test_a_non_object_meta_field_of_an_input_is_kept_not_refused() -> None:
    assert Item.model_validate({"id": "a", "meta": "from another tool"}).meta == {"meta": "from another tool"}
    assert Item.model_validate({"id": "a", "meta": None}).meta == {}


def test_a_scored_folder_resumes_with_nothing_redone_when_the_input_gains_meta(tmp_path: Path, example_media: Path,
                                                                              capsys) -> None:
    rows: list[dict[str, object]] = [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03)."},
            {"id": "b", "media": "nasa_13013.mp4", "response": "A narrator talks (audio, 0:00-0:04)."}]
    inp = _jsonl(tmp_path / "in.jsonl", rows)
    run = tmp_path / "run"

    def score(cassette: list[dict]) -> int:
        cas = _jsonl(tmp_path / "judge.jsonl", cassette)
        return main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out",
                     str(run), "--quiet", "--json"])

    assert score(CASSETTE) == 0
    before = (run / "results.jsonl").read_text()
    assert '"item"' not in before  # no item fields: records as they were before meta existed
    for r in rows:
        r["meta"] = {"task_type": "Audio Recognition", "audio_class": ["speech"]}
        r["task_domain"] = "Recognition"
    _jsonl(inp, rows)
    capsys.readouterr()
    assert score([]) == 0  # an empty cassette: any judge request would be a replay miss (exit 3)
    assert (run / "results.jsonl").read_text() == before
    assert "changed since" not in capsys.readouterr().err


def test_a_legacy_folder_resumes_byte_for_byte_from_an_input_with_meta(tmp_path: Path, example_media: Path) -> None:
    run = tmp_path / "score-run"
    shutil.copytree(LEGACY / "score-run", run)
    rows = [json.loads(x) for x in (LEGACY / "score_input.jsonl").read_text().splitlines()]
    inp = _jsonl(tmp_path / "in.jsonl", [{**r, "meta": {"task_type": "t", "duration": "short"}} for r in rows])
    before = sorted((run / "results.jsonl").read_text().splitlines())
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out", str(run),
                 "--quiet", "--json"]) == 0  # the folder's own judge; nothing is left for it to do
    assert sorted((run / "results.jsonl").read_text().splitlines()) == before


def test_worldsense_fields_reach_generate_score_and_a_breakdown(tmp_path: Path, example_media: Path) -> None:
    root = tmp_path / "worldsense"
    (root / "videos").mkdir(parents=True)
    for name in ("friday.mp4", "nasa_13013.mp4", "bikes.mp4"):
        shutil.copy(example_media / name, root / "videos" / name)
    shutil.copy(WORLDSENSE / "WorldSense.tsv", root / "WorldSense.tsv")
    answers = {"0": "An operator says he is in a bad humor (audio, 0:03-0:04).\nAnswer: B",
               "1": "She calls out Hildy (audio, 0:00-0:01).\nAnswer: C",
               "2": "The narrator names Goddard (audio, 0:08-0:12).\nAnswer: B",
               "3": "The lift is orange (visual, 0:06).\nAnswer: A",
               "4": "Cars wait in traffic (visual, 0:02).\nAnswer: A"}
    model = _jsonl(tmp_path / "model.jsonl", [{"match": {"task": "generate", "inputs": {"id": k}}, "output": {"text": v}}
                                              for k, v in answers.items()])
    out = tmp_path / "responses.jsonl"
    assert main(["generate", str(root / "WorldSense.tsv"), "--model", f"replay:{model}", "--mode", "cite",
                 "--media-root", str(root), "--out", str(out), "--json"]) == 0
    items = {it.id: it for it in iter_items(out)}
    assert items["0"].meta["task_type"] == "Human Emotions" and (items["0"].options or [])[1] == "A bad humor"
    assert items["3"].meta["audio_class"] == ["speech"] and items["4"].meta["audio_class"] == []
    judge = _jsonl(tmp_path / "judge.jsonl", CASSETTE)
    run = tmp_path / "run"
    assert main(["score", str(out), "--media-root", str(root), "--judge", f"replay:{judge}", "--out", str(run),
                 "--quiet", "--json"]) == 0
    recs = [ResponseResult.model_validate_json(x) for x in (run / "results.jsonl").read_text().splitlines()]
    assert recs[0].meta["item"]["task_type"] == "Human Emotions" and recs[0].meta["item"]["source"] == "worldsense"
    by_audio = {g.values: g for g in breakdown(recs, "audio_class", n_resamples=100).groups}
    assert by_audio[("speech",)].ids == ["0", "1", "2", "3"] and by_audio[(None,)].ids == ["4"]
    acc = {g.values: g.summary.accuracy for g in breakdown(recs, "task_type", n_resamples=100).groups}
    wrong, right = acc[("Attribute Recognition",)], acc[("Human Emotions",)]
    assert wrong is not None and right is not None and (wrong.value, right.value) == (0.0, 1.0)
