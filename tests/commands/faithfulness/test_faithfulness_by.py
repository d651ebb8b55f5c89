"""``faithfulness --by`` and ``reflect --by``: each group's UPR (exactly the command's summary of its
records; a group with no perception step undefined, never 0), the summary without ``--by`` as it
was, a field no item has refused (exit 2); and what they group on — an item's own fields reach the
records of ``faithfulness`` (``meta.item``) and ``reflect`` (the trace row's ``meta.item``; the
rewritten response keeps the item's ``meta``, so scoring it can be grouped too), as they reach
score's records. Items without fields get records as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
META = {"friday-mood": {"task_type": "Emotion", "audio_class": ["speech"]}}


def _with_meta(src: Path, dst: Path) -> Path:
    rows = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    dst.write_text("".join(json.dumps({**r, **({"meta": META[r["id"]]} if r["id"] in META else {})}) + "\n"
                           for r in rows))
    return dst


def _lines(p: Path) -> list[dict]:
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]


def test_faithfulness_records_keep_the_items_fields(tmp_path: Path, example_media: Path) -> None:
    inp = _with_meta(EXAMPLES / "responses.jsonl", tmp_path / "in.jsonl")
    out = tmp_path / "faith"
    assert main(["faithfulness", str(inp), "--media-root", str(example_media), "--judge",
                 f"replay:{EXAMPLES / 'cassettes' / 'faithfulness.jsonl'}", "--out", str(out), "--quiet", "--json"]) == 0
    recs = {r["id"]: r for r in _lines(out / "results.jsonl")}
    assert recs["friday-mood"]["meta"]["item"] == {"source": "hand-written example (not model output)",
                                                   "task_type": "Emotion", "audio_class": ["speech"]}
    assert recs["nasa-where"]["meta"]["item"] == {"source": "hand-written example (not model output)"}


def _reflect(inp: Path, media: Path, out: Path, *extra: str) -> list[str]:
    """The README's offline reflect command on ``inp``, into ``out``."""
    cas = EXAMPLES / "cassettes"
    return ["reflect", str(inp), "--from", str(EXAMPLES / "responses.jsonl"), "--media-root", str(media), "--mode",
            "cite", "--model", f"replay:{cas / 'reflect.jsonl'}", "--detector", f"replay:{cas / 'reflect.jsonl'}",
            "--detector-prompt", "label", "--judge", f"replay:{cas / 'faithfulness.jsonl'}", "--out", str(out),
            "--quiet", *extra]


def test_reflect_traces_and_responses_keep_the_items_fields(tmp_path: Path, example_media: Path) -> None:
    inp = _with_meta(EXAMPLES / "questions.jsonl", tmp_path / "q.jsonl")
    out = tmp_path / "reflect"
    assert main(_reflect(inp, example_media, out, "--json")) == 0
    traces = {r["id"]: r for r in _lines(out / "traces.jsonl")}
    assert traces["friday-mood"]["meta"] == {"item": {"task_type": "Emotion", "audio_class": ["speech"]}}
    assert "meta" not in traces["nasa-where"]  # an item without fields: the row as it was
    responses = {r["id"]: r for r in _lines(out / "responses.jsonl")}
    assert responses["friday-mood"]["meta"] == META["friday-mood"] and "meta" not in responses["nasa-where"]


#: the bundled example's items in two groups (jfk and bikes: the two slips the README names are theirs)
KINDS = {"friday-mood": "film", "nasa-where": "science", "jfk-ask": "speech", "bikes-sound": "street",
         "flower-color": "science"}


def _kinds(src: Path, dst: Path) -> Path:
    rows = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    dst.write_text("".join(json.dumps({**r, "meta": {"kind": KINDS[r["id"]]}}) + "\n" for r in rows))
    return dst


def test_faithfulness_by_gives_each_groups_upr(tmp_path: Path, example_media: Path, capsys) -> None:
    from murgat.core.steps import FaithResult
    from murgat.core.upr import summarize_faithfulness

    inp = _kinds(EXAMPLES / "responses.jsonl", tmp_path / "in.jsonl")
    out = tmp_path / "faith"
    judge = f"replay:{EXAMPLES / 'cassettes' / 'faithfulness.jsonl'}"
    assert main(["faithfulness", str(inp), "--media-root", str(example_media), "--judge", judge, "--out", str(out),
                 "--quiet", "--by", "kind"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    bd = summary["breakdown"]
    assert [(g["label"], g["n_items"]) for g in bd["groups"]] == [("science", 2), ("film", 1), ("speech", 1),
                                                                   ("street", 1)]
    recs = {r.id: r for r in (FaithResult.model_validate(x) for x in _lines(out / "results.jsonl"))}
    science = summarize_faithfulness([recs["nasa-where"], recs["flower-color"]])
    got = next(g for g in bd["groups"] if g["label"] == "science")
    assert {k: got[k] for k in science} == science  # the group is exactly the summary of its records
    assert sum(g["perception_steps"] for g in bd["groups"]) == summary["perception_steps"]
    assert sum(g["unfaithful_steps"] for g in bd["groups"]) == summary["unfaithful_steps"]
    assert "step faithfulness by kind" in printed
    summary.pop("breakdown")
    plain = tmp_path / "plain"
    assert main(["faithfulness", str(inp), "--media-root", str(example_media), "--judge", judge, "--out", str(plain),
                 "--quiet", "--json"]) == 0
    again = json.loads((plain / "summary.json").read_text())
    for doc in (summary, again):
        doc.pop("this_invocation")
    assert again == summary  # without --by: the summary it always was
    capsys.readouterr()
    assert main(["faithfulness", str(inp), "--media-root", str(example_media), "--judge", judge, "--out",
                 str(tmp_path / "typo"), "--quiet", "--by", "knd"]) == 2
    assert "--by 'knd': no item has this field" in capsys.readouterr().err and not (tmp_path / "typo").exists()


def test_reflect_by_gives_each_groups_upr_before_and_after(tmp_path: Path, example_media: Path, capsys) -> None:
    inp = _kinds(EXAMPLES / "questions.jsonl", tmp_path / "q.jsonl")
    out = tmp_path / "reflect"
    assert main(_reflect(inp, example_media, out, "--by", "kind")) == 0
    assert "murgat reflect by kind" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    groups = {g["label"]: g for g in summary["breakdown"]["groups"]}
    assert {k: (g["items"], g["reflected"]) for k, g in groups.items()} == {
        "science": (2, 2), "film": (1, 1), "speech": (1, 1), "street": (1, 1)}
    # the README's 4 of 18 perception steps unfaithful before (22.2%), 0 after: each group's share of them
    before = {k: g["upr_before"]["value"] for k, g in groups.items()}
    assert before == pytest.approx({"science": 0.0, "film": 1 / 5, "speech": 1 / 4, "street": 2 / 3})
    assert summary["upr_before"]["value"] == pytest.approx(4 / 18)
    assert all(g["upr_after"]["value"] == 0.0 and g["undefined"] == {} for g in groups.values())


def test_a_group_without_a_perception_step_is_undefined_not_zero() -> None:
    from murgat.core.steps import FaithResult, StepLabel, tally
    from murgat.report.step_groups import faithfulness_breakdown

    seen = tally(FaithResult(id="a", steps=[StepLabel(index=0, text="A dog runs.", type="perception", faithful=False)],
                             meta={"item": {"kind": "seen"}}))
    thought = tally(FaithResult(id="b", steps=[StepLabel(index=0, text="So B.", type="reasoning")],
                                meta={"item": {"kind": "thought"}}))
    groups = {g["label"]: g for g in faithfulness_breakdown([seen, thought], ["kind"], [])["groups"]}
    assert groups["seen"]["upr"]["value"] == 1.0
    # no gold option in either group: accuracy is null with its reason, never a bare null
    no_gold = "no item of this group has a gold option (or every one is an error)"
    assert groups["seen"]["undefined"] == {"accuracy": no_gold, "accuracy_answered": no_gold}
    assert groups["thought"]["upr"]["value"] is None and groups["thought"]["n_no_perception"] == 1
    assert groups["thought"]["undefined"]["upr"] == "no perception step of this group was decided"
