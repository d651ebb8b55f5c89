"""``murgat summarize RUN… --by FIELD``: each run's figures per group (as the run summarised them),
and with two runs the paired group differences B − A, paired by id within each group; the
document and tables without ``--by`` are what they always were; a field no run's items have and
runs of another kind are refused (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main

YES = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["Someone speaks."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]
#: run B's judge denies the facts of the "talk" items (a and b): their MURGAT-S drops by 1
NO_FOR_FRIDAY = [
    *({"match": {"task": "decompose", "inputs": {"sentence": s}}, "output": {"text": json.dumps({"facts": ["Talk."]})}}
      for s in ("She speaks (audio, 0:01-0:03).", "He speaks (audio, 0:03-0:05).")),
    {"match": {"task": "entail", "inputs": {"fact": "Talk."}}, "output": {"text": "no"}}, *YES]
ITEMS = [
    {"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03).\nAnswer: A", "options": ["x", "y"],
     "gold": "A", "meta": {"kind": "talk"}},
    {"id": "b", "media": "friday.mp4", "response": "He speaks (audio, 0:03-0:05).\nAnswer: B", "options": ["x", "y"],
     "gold": "A", "meta": {"kind": "talk"}},
    {"id": "c", "media": "nasa_13013.mp4", "response": "A man speaks (audio, 0:00-0:04).\nAnswer: A",
     "options": ["x", "y"], "gold": "A", "meta": {"kind": "science"}},
]


def _jsonl(p: Path, rows: list[dict]) -> Path:
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _score(tmp: Path, media: Path, name: str, cassette: list[dict], items: list[dict]) -> Path:
    inp = _jsonl(tmp / f"{name}.in.jsonl", items)
    cas = _jsonl(tmp / f"{name}.cassette.jsonl", cassette)
    run = tmp / name
    assert main(["score", str(inp), "--judge", f"replay:{cas}", "--media-root", str(media), "--out", str(run),
                 "--quiet", "--json"]) == 0
    return run


@pytest.fixture
def two_runs(tmp_path: Path, example_media: Path) -> tuple[Path, Path]:
    a = _score(tmp_path, example_media, "A", YES, ITEMS)
    # run B lacks item c and has an item d of its own: neither pairs with anything
    d = {"id": "d", "media": "nasa_13013.mp4", "response": "A voice (audio, 0:00-0:02).", "meta": {"kind": "science"}}
    b = _score(tmp_path, example_media, "B", NO_FOR_FRIDAY, [*ITEMS[:2], d])
    return a, b


def test_summarize_two_runs_by_a_field_pairs_by_id_within_each_group(two_runs: tuple[Path, Path], capsys) -> None:
    a, b = two_runs
    capsys.readouterr()
    assert main(["summarize", str(a), str(b), "--by", "kind", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["breakdown"]
    assert doc["by"] == ["kind"]
    runs = {r["run"]: {g["label"]: g for g in r["groups"]} for r in doc["runs"]}
    assert runs[str(a)]["talk"]["n_items"] == 2 and runs[str(a)]["talk"]["murgat_s"]["value"] == pytest.approx(1.0)
    assert runs[str(b)]["talk"]["murgat_s"]["value"] == pytest.approx(0.0)  # every fact denied: 0, and judged
    assert runs[str(b)]["science"]["n_items"] == 1  # d
    [diff] = doc["differences"]
    assert (diff["run"], diff["against"]) == (str(b), str(a))
    groups = {g["label"]: g for g in diff["groups"]}
    talk, science = groups["talk"], groups["science"]
    assert talk["n_common"] == 2 and talk["murgat_s"]["value"] == pytest.approx(-1.0) and talk["murgat_s"]["n"] == 2
    assert talk["accuracy"]["value"] == pytest.approx(0.0) and talk["accuracy"]["n"] == 2  # same answers
    # c is only in A, d only in B: no pair, so no difference — null with the reason, never 0
    assert science["n_common"] == 0 and science["murgat_s"]["value"] is None and science["note"]
    assert science["undefined"]["murgat_s"] == "no item of this group has the figure in both runs"


def test_summarize_by_prints_group_tables_and_differences(two_runs: tuple[Path, Path], capsys, monkeypatch) -> None:
    monkeypatch.chdir(two_runs[0].parent)  # the titles name the folders as given: short, so no title wraps
    a, b = (Path(p.name) for p in two_runs)
    capsys.readouterr()
    assert main(["summarize", str(a), str(b), "--by", "kind"]) == 0
    out = capsys.readouterr().out
    assert f"{a} by kind" in out and f"{b} by kind" in out and f"{b} − {a} by kind" in out
    diff = out[out.index(f"{b} − {a} by kind"):]
    talk = next(line for line in diff.splitlines() if line.startswith("│ talk"))
    assert talk.split("│")[2].strip() == "2" and "-1.000" in talk
    science = next(line for line in diff.splitlines() if line.startswith("│ science"))
    assert "undefined" in science and "science: no item of this group was scored in both runs" in out


def test_summarize_without_by_is_unchanged(two_runs: tuple[Path, Path], capsys) -> None:
    a, b = two_runs
    capsys.readouterr()
    assert main(["summarize", str(a), str(b), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["summarize", str(a), str(b), "--json", "--by", "kind"]) == 0
    grouped = json.loads(capsys.readouterr().out)
    grouped.pop("breakdown")
    assert grouped == plain
    assert main(["summarize", str(a)]) == 0
    one = capsys.readouterr().out
    assert main(["summarize", str(a), "--by", "kind"]) == 0
    assert capsys.readouterr().out.startswith(one)  # the table it always printed, then the groups


def test_summarize_by_an_unknown_field_or_of_another_kind_is_refused(two_runs: tuple[Path, Path], tmp_path: Path,
                                                                     capsys) -> None:
    a, b = two_runs
    capsys.readouterr()
    assert main(["summarize", str(a), str(b), "--by", "knd"]) == 2
    err = capsys.readouterr().err
    assert "--by 'knd': no item has this field" in err and "kind" in err
    faith = tmp_path / "faith"
    faith.mkdir()
    (faith / "config.json").write_text(json.dumps({"kind": "faithfulness", "fingerprint": {}, "config": {}}))
    assert main(["summarize", str(faith), "--by", "kind"]) == 2
    assert "groups score runs" in capsys.readouterr().err
