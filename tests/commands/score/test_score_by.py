"""``murgat score --by FIELD``: the run's figures per group of an item field, in ``summary.json``
(``extra.breakdown``) and as a table after the summary table, on the bundled example; a list-valued
field counts an item once per distinct value; a group with no judged item is undefined (null with a
reason), never 0; a field no item has is refused before any work (exit 2); ``--by`` decides no work
(a folder scored without it gains a breakdown with nothing redone); and a WorldSense file whose rows
carry the model's answers is scored through the dataset loader (``worldsense:FILE``), its fields kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.core.metric import summarize_results
from murgat.core.schema import ResponseResult

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "responses.jsonl"
WORLDSENSE = ROOT / "tests" / "data" / "worldsense"
#: every verifiable sentence gets one fact, every fact is entailed: the figures follow from the citations alone
CASSETTE = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["Something is there."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]
#: the bundled example's five items with WorldSense-like fields (jfk's audio class names speech twice)
FIELDS = {"friday-mood": {"task_type": "Emotion", "audio_class": ["speech", "music"]},
          "nasa-where": {"task_type": "Place", "audio_class": ["speech"]},
          "jfk-ask": {"task_type": "Speech", "audio_class": ["speech", "speech"]},
          "bikes-sound": {"task_type": "Place", "audio_class": []},
          "flower-color": {"task_type": "Emotion", "audio_class": ["music"]}}


def _jsonl(p: Path, rows: list[dict]) -> Path:
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _example(tmp: Path, extra: list[dict] | None = None) -> Path:
    rows = [json.loads(x) for x in EXAMPLE.read_text().splitlines() if x.strip()]
    return _jsonl(tmp / "in.jsonl", [{**r, "meta": FIELDS[r["id"]]} for r in rows] + (extra or []))


def _score(inp: str | Path, out: Path, cassette: list[dict], *more: str, media: Path | None = None,
           tmp: Path | None = None) -> int:
    cas = _jsonl((tmp or out.parent) / f"{out.name}.cassette.jsonl", cassette)
    return main(["score", str(inp), "--judge", f"replay:{cas}", "--out", str(out), "--quiet",
                 *(["--media-root", str(media)] if media else []), *more])


def _records(run: Path) -> list[ResponseResult]:
    return [ResponseResult.model_validate_json(x) for x in (run / "results.jsonl").read_text().splitlines()]


def test_score_by_groups_the_bundled_example_with_exact_counts(tmp_path: Path, example_media: Path, capsys) -> None:
    inp = _example(tmp_path)
    run = tmp_path / "run"
    assert _score(inp, run, CASSETTE, "--by", "task_type", media=example_media) == 0
    out = capsys.readouterr().out
    summary = json.loads((run / "summary.json").read_text())
    bd = summary["extra"]["breakdown"]
    assert bd["by"] == ["task_type"] and bd["n_items"] == 5 and bd["list_valued"] == [] and bd["note"] is None
    groups = {tuple(g["values"]): g for g in bd["groups"]}
    assert [(g["label"], g["n_items"]) for g in bd["groups"]] == [("Emotion", 2), ("Place", 2), ("Speech", 1)]
    recs = {r.id: r for r in _records(run)}
    for key, ids in ((("Emotion",), ["flower-color", "friday-mood"]), (("Place",), ["bikes-sound", "nasa-where"]),
                     (("Speech",), ["jfk-ask"])):
        want = summarize_results([recs[i] for i in ids]).model_dump(mode="json")
        got = {k: groups[key][k] for k in want}
        assert got == want  # each group's figures are exactly a run summary of its items (CIs, n, cases)
        assert groups[key]["murgat_s"]["n"] == len(ids) and groups[key]["undefined"] == {}
    # the table follows the summary table, one row per group with its n
    assert out.index("MURGAT-S (alce precision)") < out.index("by task_type")
    table = out[out.index("by task_type"):]
    for label, n in (("Emotion", 2), ("Place", 2), ("Speech", 1)):
        row = next(line for line in table.splitlines() if label in line)
        assert row.split("│")[2].strip() == str(n)


def test_a_list_valued_field_counts_an_item_once_per_value(tmp_path: Path, example_media: Path) -> None:
    run = tmp_path / "run"
    assert _score(_example(tmp_path), run, CASSETTE, "--by", "audio_class", "--json", media=example_media) == 0
    bd = json.loads((run / "summary.json").read_text())["extra"]["breakdown"]
    ids = {tuple(g["values"]): g for g in bd["groups"]}
    assert {k: v["n_items"] for k, v in ids.items()} == {("speech",): 3, ("music",): 2, (None,): 1}
    assert ids[("speech",)]["murgat_s"]["n"] == 3  # jfk's ["speech", "speech"] counts once
    assert bd["list_valued"] == ["audio_class"] and "more than the run's" in bd["note"]
    assert sum(g["n_items"] for g in bd["groups"]) == 6 > bd["n_items"] == 5
    # several fields: the combinations of their values
    both = tmp_path / "both"
    assert _score(_example(tmp_path), both, CASSETTE, "--by", "task_type", "--by", "audio_class", "--json",
                  media=example_media) == 0
    combos = {tuple(g["values"]): g["n_items"] for g in
              json.loads((both / "summary.json").read_text())["extra"]["breakdown"]["groups"]}
    assert combos == {("Emotion", "music"): 2, ("Emotion", "speech"): 1, ("Place", "speech"): 1, ("Place", None): 1,
                      ("Speech", "speech"): 1}


def test_a_group_without_a_judged_item_is_undefined_not_zero(tmp_path: Path, example_media: Path, capsys) -> None:
    ghost = {"id": "ghost", "media": "no-such-file.mp4", "response": "A cat sits (visual, 0:01).",
             "meta": {"task_type": "Ghost"}}
    run = tmp_path / "run"
    assert _score(_example(tmp_path, [ghost]), run, CASSETTE, "--by", "task_type", media=example_media) == 1
    out = capsys.readouterr().out
    bd = json.loads((run / "summary.json").read_text())["extra"]["breakdown"]
    g = next(g for g in bd["groups"] if g["values"] == ["Ghost"])
    assert g["n_items"] == 1 and g["n_errors"] == 1
    assert g["murgat_s"] == {"value": None, "ci_low": None, "ci_high": None, "n": 0}
    assert g["undefined"]["murgat_s"] == "no item of this group was judged (error 1)"
    assert "accuracy" in g["undefined"]  # no gold option in the group: accuracy is undefined too, not 0
    row = next(line for line in out.splitlines() if "Ghost" in line and "│" in line)
    assert "undefined" in row and "0.000" not in row
    assert "Ghost: MURGAT-S undefined: no item of this group was judged (error 1)" in out


def test_an_unknown_field_is_refused_before_any_work(tmp_path: Path, example_media: Path, capsys) -> None:
    run = tmp_path / "run"
    assert _score(_example(tmp_path), run, [], "--by", "task_typ", media=example_media) == 2
    err = capsys.readouterr().err
    assert "--by 'task_typ': no item has this field" in err
    assert "fields the items have: audio_class, case, correct, gold, predicted_option, source, task_type, video" in err
    assert not run.exists()  # refused before any judge was asked: no folder, no cache


def test_by_decides_no_work_a_scored_folder_gains_a_breakdown(tmp_path: Path, example_media: Path) -> None:
    inp = _example(tmp_path)
    run = tmp_path / "run"
    assert _score(inp, run, CASSETTE, "--json", media=example_media) == 0
    plain = json.loads((run / "summary.json").read_text())
    assert "breakdown" not in plain["extra"]
    before = (run / "results.jsonl").read_bytes()
    # an empty cassette: any judge request would be a replay miss (exit 3)
    assert _score(inp, run, [], "--json", "--by", "task_type", media=example_media) == 0
    assert (run / "results.jsonl").read_bytes() == before
    grouped = json.loads((run / "summary.json").read_text())
    assert [g["label"] for g in grouped["extra"].pop("breakdown")["groups"]] == ["Emotion", "Place", "Speech"]
    for doc in (plain, grouped):
        doc["extra"].pop("this_invocation")
    assert grouped == plain  # the rest of the summary is what it was without --by


def test_the_input_as_it_is_now_decides_the_groups_of_kept_records(tmp_path: Path, example_media: Path) -> None:
    """A folder scored before its input had the fields (records without ``meta.item``) is grouped on
    the input's fields, not put in the missing group."""
    rows = [json.loads(x) for x in EXAMPLE.read_text().splitlines() if x.strip()]
    inp = _jsonl(tmp_path / "in.jsonl", rows)
    run = tmp_path / "run"
    assert _score(inp, run, CASSETTE, "--json", media=example_media) == 0
    _example(tmp_path)  # the same items, now with fields
    assert _score(inp, run, [], "--json", "--by", "task_type", media=example_media) == 0
    groups = json.loads((run / "summary.json").read_text())["extra"]["breakdown"]["groups"]
    assert [(g["label"], g["n_items"]) for g in groups] == [("Emotion", 2), ("Place", 2), ("Speech", 1)]


def _worldsense(tmp: Path, example_media: Path, answers: dict[str, str] | None) -> Path:
    root = tmp / "worldsense"
    (root / "videos").mkdir(parents=True)
    for name in ("friday.mp4", "nasa_13013.mp4", "bikes.mp4"):
        shutil.copy(example_media / name, root / "videos" / name)
    rows = json.loads((WORLDSENSE / "worldsense_rows.json").read_text())
    if answers is not None:  # VLMEvalKit's column for a model's answer
        rows = [{**r, "prediction": answers[str(r["index"])]} for r in rows]
    path = root / "rows.json"
    path.write_text(json.dumps(rows))
    return path


ANSWERS = {"0": "An operator says he is in a bad humor (audio, 0:03-0:04).\nAnswer: B",
           "1": "She calls out Hildy (audio, 0:00-0:01).\nAnswer: C",
           "2": "The narrator names Goddard (audio, 0:08-0:12).\nAnswer: B",
           "3": "The lift is orange (visual, 0:06).\nAnswer: A",
           "4": "Cars wait in traffic (visual, 0:02).\nAnswer: A"}


def test_a_worldsense_spec_is_scored_through_the_dataset_loader(tmp_path: Path, example_media: Path) -> None:
    rows = _worldsense(tmp_path, example_media, ANSWERS)
    run = tmp_path / "run"
    # no --media-root: the videos are found beside the dataset file, as generate finds them
    assert _score(f"worldsense:{rows}", run, CASSETTE, "--json", "--by", "domain", "--by", "audio_class",
                  tmp=tmp_path) == 0
    recs = {r.id: r for r in _records(run)}
    assert set(recs) == {"0", "1", "2", "3", "4"} and all(r.error is None for r in recs.values())
    assert recs["0"].meta["item"]["task_type"] == "Human Emotions" and recs["0"].meta["item"]["source"] == "worldsense"
    # option letters stripped for the correct rule; a gold written as the whole candidate ("C. Orange") is its letter
    assert recs["2"].correct is True and recs["3"].gold == "C" and recs["3"].correct is False
    bd = json.loads((run / "summary.json").read_text())["extra"]["breakdown"]
    got = {tuple(g["values"]): g["n_items"] for g in bd["groups"]}
    rows_doc = json.loads(rows.read_text())
    want: dict[tuple, int] = {}
    for r in rows_doc:
        for a in dict.fromkeys(r["audio_class"]) or [None]:
            want[(r["domain"], a)] = want.get((r["domain"], a), 0) + 1
    assert got == want == {("Film & TV", "speech"): 2, ("Tech & Science", "speech"): 2, ("Daily Life", None): 1}
    config = json.loads((run / "config.json").read_text())
    assert config["config"]["input"] == str(rows.resolve())  # the file, not the spec text


def test_a_dataset_without_the_models_answers_is_refused(tmp_path: Path, example_media: Path, capsys) -> None:
    rows = _worldsense(tmp_path, example_media, None)
    assert _score(f"worldsense:{rows}", tmp_path / "run", [], tmp=tmp_path) == 2
    assert "no response field (response or prediction)" in capsys.readouterr().err
    assert _score(str(WORLDSENSE / "WorldSense.tsv"), tmp_path / "run2", [], tmp=tmp_path) == 2  # recognised unprefixed
    assert "line 2 (index 0): no response field" in capsys.readouterr().err
    csv = tmp_path / "q.csv"
    csv.write_text("id,media,question,a0,a1,answer\nq1,friday.mp4,Who?,a,b,a\n")
    assert _score(f"csv:{csv}", tmp_path / "run3", [], tmp=tmp_path) == 2
    err = capsys.readouterr().err
    assert "holds questions without the model's answers" in err and "murgat generate" in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "run3").exists()


@pytest.mark.parametrize("spec", ["jsonl", "plain"])
def test_a_response_file_reads_as_it_always_did(tmp_path: Path, example_media: Path, spec: str) -> None:
    inp = _example(tmp_path)
    run = tmp_path / "run"
    assert _score(f"jsonl:{inp}" if spec == "jsonl" else inp, run, CASSETTE, "--json", media=example_media) == 0
    assert [r.id for r in _records(run)] == list(FIELDS)


def test_the_python_api_takes_by(tmp_path: Path, example_media: Path) -> None:
    import murgat

    cas = _jsonl(tmp_path / "c.jsonl", CASSETTE)
    run = murgat.score(_example(tmp_path), judge=f"replay:{cas}", out=tmp_path / "run", media_root=example_media,
                       by=["task_type"])
    assert [(g["label"], g["n_items"]) for g in run.summary["extra"]["breakdown"]["groups"]] == [
        ("Emotion", 2), ("Place", 2), ("Speech", 1)]
    with pytest.raises(murgat.RunError, match="no item has this field") as err:
        murgat.score(_example(tmp_path), judge=f"replay:{cas}", out=tmp_path / "run2", media_root=example_media,
                     by=["nope"])
    assert err.value.exit_code == 2
