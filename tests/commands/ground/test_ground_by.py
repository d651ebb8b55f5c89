"""``murgat ground --by FIELD``: the grounding figures per group of an item field, each group's
exactly the summary of its responses (the one grounding metric, not a copy of it), n per group,
a group with nothing to measure undefined (null with a reason, never 0); ``summary.json`` without
``--by`` is what it always was; a field no response has is refused (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.commands.gold.importers import write_gold
from murgat.commands.ground.run import GroundSettings, ground, summarize_ground
from murgat.core.gold import GoldAnswer, GoldEvidence, GoldItem

RESPONSES = [
    {"id": "a", "media": "v1.mp4", "response": "A door opens (visual, 0:02-0:04).\nAnswer: A", "meta": {"kind": "x"}},
    {"id": "b", "media": "v2.mp4", "response": "A door opens (visual, 0:06-0:08).\nAnswer: B", "meta": {"kind": "x"}},
    {"id": "c", "media": "v3.mp4", "response": "A door opens (visual, 0:02-0:03).\nAnswer: A", "meta": {"kind": "y"}},
    {"id": "d", "media": "v4.mp4", "response": "A door opens (visual, 0:02-0:04).\nAnswer: A", "meta": {"kind": "z"}},
]


def _files(tmp: Path) -> tuple[Path, Path]:
    inp = tmp / "responses.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in RESPONSES))
    gold = tmp / "gold.jsonl"
    # every question's gold: 0:02-0:04 of a 10-second video, answer A; "d" has no gold (an error record)
    write_gold([GoldItem(id=i, video=f"v{k}", duration=10.0, answer=GoldAnswer(text="open", choices=["open", "shut"],
                                                                               index=0),
                         evidence=[GoldEvidence(modality="visual", start=2.0, end=4.0)])
                for k, i in enumerate("abc", 1)], gold)
    return inp, gold


def test_ground_by_gives_each_groups_figures_with_n(tmp_path: Path, capsys) -> None:
    inp, gold = _files(tmp_path)
    out = tmp_path / "g"
    assert main(["ground", str(inp), "--gold", str(gold), "--out", str(out), "--by", "kind"]) == 1  # d: no gold
    table = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    bd = summary["breakdown"]
    groups = {g["label"]: g for g in bd["groups"]}
    assert [(g["label"], g["n_items"]) for g in bd["groups"]] == [("x", 2), ("y", 1), ("z", 1)]
    assert groups["x"]["nextgqa"]["miou"]["value"] == pytest.approx(50.0)  # IoU 1 and 0, in percent
    assert groups["x"]["nextgqa"]["miou"]["n"] == 2
    assert groups["y"]["nextgqa"]["miou"]["value"] == pytest.approx(50.0)  # 0:02-0:03 of 0:02-0:04
    assert groups["x"]["answers"]["accuracy"]["value"] == pytest.approx(0.5)
    # each group is exactly the grounding summary of its responses
    res = ground(inp, gold, settings=GroundSettings())
    recs = {r.id: r for r in res.records}
    from murgat.core.gold import load_gold

    g = load_gold(gold)
    want = summarize_ground([recs["a"], recs["b"]], {"a": g["a"], "b": g["b"]}, GroundSettings()).model_dump(mode="json")
    assert {k: groups["x"][k] for k in ("nextgqa", "rextime", "overlap", "evidence", "answers")} == {
        k: want[k] for k in ("nextgqa", "rextime", "overlap", "evidence", "answers")}
    # z's one response has no gold: nothing to measure, each family undefined with the reason, never 0
    z = groups["z"]
    assert z["n_errors"] == 1 and z["nextgqa"] == {} and z["undefined"]["nextgqa"] == "no response of this group has gold visual time"
    assert "(n=2)" in table and "grounding by kind" in table
    by_kind = table[table.index("grounding by kind"):]
    miou = next(line for line in by_kind.splitlines() if "│ nextgqa" in line and " miou " in line)
    assert [c.strip() for c in miou.split("│")[3:6]] == ["50.0 [0.0, 100.0] n=2", "50.0 [50.0, 50.0] n=1", "undefined"]


def test_ground_without_by_is_unchanged_and_an_unknown_field_refused(tmp_path: Path, capsys) -> None:
    inp, gold = _files(tmp_path)
    plain, grouped = tmp_path / "plain", tmp_path / "grouped"
    assert main(["ground", str(inp), "--gold", str(gold), "--out", str(plain), "--json"]) == 1
    assert "breakdown" not in json.loads(capsys.readouterr().out)
    assert main(["ground", str(inp), "--gold", str(gold), "--out", str(grouped), "--json", "--by", "kind"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [g["label"] for g in doc.pop("breakdown")["groups"]] == ["x", "y", "z"]
    assert doc == json.loads((plain / "summary.json").read_text())
    assert (plain / "results.jsonl").read_bytes() == (grouped / "results.jsonl").read_bytes()
    assert main(["ground", str(inp), "--gold", str(gold), "--by", "knd"]) == 2
    err = capsys.readouterr().err
    assert "--by 'knd': no item has this field" in err and "correct, gold, kind, video" in err


def test_the_group_table_draws_the_largest_groups_and_says_how_many_more(tmp_path: Path, capsys) -> None:
    """One column per group: 30 groups (one per response) were 30 columns, each label whole; the table
    draws the largest few and its caption says how many the JSON holds beside them."""
    gold = tmp_path / "gold.jsonl"
    write_gold([GoldItem(id=f"q{i}", video="v", duration=10.0, evidence=[GoldEvidence(modality="visual", start=2.0,
                                                                                     end=4.0)]) for i in range(30)],
               gold)
    inp = tmp_path / "r.jsonl"
    inp.write_text("".join(json.dumps({"id": f"q{i}", "media": "v.mp4", "response": "A door (visual, 0:02-0:04).",
                                       "meta": {"kind": f"k{i}" + "x" * 500}}) + "\n" for i in range(30)))
    assert main(["ground", str(inp), "--gold", str(gold), "--by", "kind"]) == 0
    out = capsys.readouterr().out
    assert "22 smaller group(s) not drawn (of 30)" in out and "x" * 200 not in out
    doc = ground(inp, gold, None, GroundSettings(), by=["kind"]).breakdown
    assert doc is not None and len(doc["groups"]) == 30  # every group in the JSON
