"""``murgat summarize``: runs side by side, a damaged summary named (exit 2, never a traceback), and the
agreement between the judges of runs over the same responses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from tests.cassettes import YES_CASSETTE as CASSETTE
from tests.cassettes import write_jsonl as _write


def _score(tmp: Path, media: Path, name: str = "run", cassette: list[dict] | None = None) -> Path:
    inp = tmp / "in.jsonl"
    if not inp.exists():
        _write(inp, [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03)."},
                     {"id": "b", "media": "friday.mp4", "response": "A man laughs (audio, 0:03-0:05)."}])
    cas = _write(tmp / f"{name}.cassette.jsonl", cassette or CASSETTE)
    run = tmp / name
    assert main(["score", str(inp), "--judge", f"replay:{cas}", "--media-root", str(media), "--out", str(run),
                 "--quiet", "--json"]) == 0
    return run


@pytest.mark.parametrize("damage", ["truncated", "not a summary"])
def test_a_damaged_summary_is_a_named_error(damage: str, tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: a truncated summary.json made ``summarize`` print pydantic's traceback."""
    run = _score(tmp_path, example_media)
    text = (run / "summary.json").read_text()
    (run / "summary.json").write_text(text[:100] if damage == "truncated" else json.dumps({"murgat_s": "high"}))
    capsys.readouterr()
    assert main(["summarize", str(run)]) == 2
    err = capsys.readouterr().err
    assert "summary.json" in err and "Traceback" not in err
    assert ("cut short" in err) if damage == "truncated" else ("not a score run's summary" in err)


def test_a_damaged_summary_of_another_kind_is_a_named_error(tmp_path: Path, capsys) -> None:
    """Before: ``summarize`` of a faithfulness folder read its summary.json with json.loads (a traceback)."""
    run = tmp_path / "faith"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"kind": "faithfulness", "fingerprint": {}, "config": {}}))
    (run / "summary.json").write_text('{"upr": {"value": 0.')
    assert main(["summarize", str(run)]) == 2
    err = capsys.readouterr().err
    assert "summary.json: not valid JSON" in err and "Traceback" not in err


# ----- agreement between judges (two or more runs over the same responses)

HUMAN = [True, False, False, True]
JUDGE_A = [True, True, False, False]
JUDGE_B = [True, False, False, False]


def _judged(tmp: Path, media: Path, name: str, support: list[bool], responses: Path | None = None) -> Path:
    """A score run of four one-fact responses whose judge says ``support`` of the facts."""
    inp = responses or _write(tmp / "four.jsonl", [
        {"id": f"r{k}", "media": "friday.mp4", "response": f"Thing {k} happens (audio, 0:01-0:03)."} for k in range(4)])
    cas = [{"match": {"task": "verify"}, "output": {"text": "yes"}}]
    for k, yes in enumerate(support):
        cas.append({"match": {"task": "decompose", "inputs": {"sentence": f"Thing {k} happens (audio, 0:01-0:03)."}},
                    "output": {"text": json.dumps({"facts": [f"Thing {k} happens."]})}})
        cas.append({"match": {"task": "entail", "inputs": {"fact": f"Thing {k} happens."}},
                    "output": {"text": "yes" if yes else "no"}})
    c = _write(tmp / f"{name}.cassette.jsonl", cas)
    run = tmp / name
    assert main(["score", str(inp), "--judge", f"replay:{c}", "--media-root", str(media), "--out", str(run),
                 "--quiet", "--json"]) == 0
    return run


def _labels(tmp: Path) -> Path:
    return _write(tmp / "labels.jsonl", [
        {"id": f"r{k}", "annotator": "ann1", "sentences": [
            {"index": 0, "verifiable": True, "facts": [{"text": f"Thing {k} happens.", "citations": ["audio, 0:01-0:03"],
                                                        "supported": s}]}]} for k, s in enumerate(HUMAN)])


def test_summarize_reports_agreement_between_judges(tmp_path: Path, example_media: Path, capsys) -> None:
    from murgat.core.agreement import judge_agreement
    from murgat.engine.folder import RunFolder
    from murgat.human_eval.labels import load_labels

    a = _judged(tmp_path, example_media, "judge-a", JUDGE_A)
    b = _judged(tmp_path, example_media, "judge-b", JUDGE_B)
    labels = _labels(tmp_path)
    capsys.readouterr()
    assert main(["summarize", str(a), str(b), "--json", "--human", str(labels)]) == 0
    ag = json.loads(capsys.readouterr().out)["judge_agreement"]
    assert (ag["n_common_ids"], ag["n_responses"], ag["n_different_responses"]) == (4, 4, 0)
    (pair,) = ag["support"]["pairwise_kappa"]
    # support: A yes yes no no, B yes no no no: 3 of 4 agree, chance 1/2, so κ = (3/4 − 1/2) / (1 − 1/2)
    assert pair["n"] == 4 and pair["agreement"] == 0.75 and abs(pair["kappa"] - 0.5) < 1e-12
    assert ag["support"]["krippendorff_alpha"]["n_units"] == 4
    # verifiability: both judges always "yes" — α is undefined (no disagreement to expect), not 1
    assert ag["verifiability"]["krippendorff_alpha"]["alpha"] is None
    # errors against people: A wrong on r1, r3; B wrong on r3 — φ of (0,1,0,1) and (0,0,0,1) = 1/√3
    errors = ag["support"]["errors"]
    assert abs(errors["pairs"][0]["correlation"] - 3 ** -0.5) < 1e-9
    direct = judge_agreement({str(p): RunFolder(p, repair=False).latest_results() for p in (a, b)},
                             load_labels(labels))
    assert {k: ag[k] for k in direct} == json.loads(json.dumps(direct))  # the one function, as calibrate calls it
    capsys.readouterr()
    assert main(["summarize", str(a), str(b), "--human", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "agreement between the judges" in out and "0.500" in out and "4 response(s) every run scored" in out


def test_runs_over_other_responses_are_not_compared_as_judges(tmp_path: Path, example_media: Path, capsys) -> None:
    """Two models' answers to the same questions share ids, not responses: no κ of different texts."""
    a = _judged(tmp_path, example_media, "model-a", JUDGE_A)
    other = _write(tmp_path / "other.jsonl", [
        {"id": f"r{k}", "media": "friday.mp4", "response": f"Thing {k} happens (audio, 0:01-0:03)."} for k in range(2)]
        + [{"id": f"r{k}", "media": "friday.mp4", "response": f"Thing {k} happens (audio, 0:01-0:03)."}
           for k in (2, 3)])
    rows = [json.loads(x) for x in other.read_text().splitlines()]
    rows[3]["response"] = "Thing 3 happens (audio, 0:01-0:03). "  # another response for r3
    _write(other, rows)
    b = _judged(tmp_path, example_media, "model-b", JUDGE_B, responses=other)
    capsys.readouterr()
    assert main(["summarize", str(a), str(b), "--json"]) == 0
    ag = json.loads(capsys.readouterr().out)["judge_agreement"]
    assert (ag["n_common_ids"], ag["n_responses"], ag["n_different_responses"]) == (4, 3, 1)
    assert ag["support"]["pairwise_kappa"][0]["n"] == 3
    capsys.readouterr()
    assert main(["summarize", str(a), str(b)]) == 0
    assert "1 shared id(s) hold different responses and are left out" in capsys.readouterr().out


def test_human_labels_need_two_runs(tmp_path: Path, example_media: Path, capsys) -> None:
    a = _judged(tmp_path, example_media, "judge-a", JUDGE_A)
    capsys.readouterr()
    assert main(["summarize", str(a), "--human", str(_labels(tmp_path))]) == 2
    assert "two or more runs" in capsys.readouterr().err
    assert main(["summarize", str(a), str(a), "--human", str(tmp_path / "missing.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_runs_whose_paths_differ_near_the_end_are_told_apart(tmp_path: Path, example_media: Path, capsys) -> None:
    """A sweep's runs are OUT/effort-low/run and OUT/effort-high/run: the table folds a long path instead of
    cutting it to 'runs/swe…' twice, and the viewer names them effort-low/run and effort-high/run, not 'run'."""
    from murgat.report.pages import run_labels

    deep = tmp_path / "sweeps" / "a-rather-long-sweep-folder-name"
    for effort in ("low", "high"):
        (deep / f"effort-{effort}").mkdir(parents=True)
        _score(deep / f"effort-{effort}", example_media)
    runs = [str(deep / "effort-low" / "run"), str(deep / "effort-high" / "run")]
    capsys.readouterr()
    assert main(["summarize", *runs]) == 0
    table = "".join(line.split("│")[1].strip() for line in capsys.readouterr().out.splitlines() if line.count("│") > 2)
    assert "effort-low/run" in table and "effort-high/run" in table and "…" not in table
    assert run_labels([Path(r) for r in runs]) == ["effort-low/run", "effort-high/run"]
    assert run_labels([deep / "effort-low", deep / "effort-high"]) == ["effort-low", "effort-high"]
    assert run_labels([Path(runs[0]), Path(runs[0])]) == ["run", "run"]  # the same folder twice: nothing to tell
    assert main(["view", *runs, "--out", str(tmp_path / "cmp.html")]) == 0
    assert "effort-low/run vs effort-high/run" in (tmp_path / "cmp.html").read_text(encoding="utf-8")
