"""``score --repeats K`` (``murgat.commands.score.repeats``): every yes/no question asked K times, the majority used
(ties → unknown), each repeat scored on its own answers, the stability reported — with a scripted judge
whose answers flip on some repeats, and a replay cassette with a line for one repeat."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.commands.score.repeats import RepeatRecord, used
from murgat.commands.score.runner import score_items, summary_of
from murgat.commands.score.stages import StageJudges
from murgat.core.schema import Item, ResponseResult
from murgat.engine.folder import RunFolder
from murgat.engine.preflight import MediaPlace
from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import JudgeRequest, TextPart
from murgat.judging.pool import repeat_of
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig
from tests.cassettes import YES_CASSETTE as CASSETTE
from tests.cassettes import write_jsonl as _write

#: the same, but the judge says "no" to every entailment question of repeat 1
FLIPPING = [{"match": {"task": "entail", "inputs": {"repeat": 1}}, "output": {"text": "no"}}, *CASSETTE]
RESPONSES = [{"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03)."},
             {"id": "b", "media": "friday.mp4", "response": "A man laughs (audio, 0:03-0:05; visual, 0:02)."}]


def _score(tmp: Path, media: Path, cassette: list[dict], out: str, *extra: str, capsys=None) -> dict:
    """``score`` of the two responses into ``tmp/out``; one cassette file per content (the judge's name is
    its path, part of every cache key)."""
    inp = tmp / "in.jsonl"
    if not inp.exists():
        _write(inp, RESPONSES)
    cas = _write(tmp / ("flipping.jsonl" if cassette is FLIPPING else "cassette.jsonl"), cassette)
    if capsys is not None:
        capsys.readouterr()
    assert main(["score", str(inp), "--judge", f"replay:{cas}", "--media-root", str(media), "--out", str(tmp / out),
                 "--quiet", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out) if capsys is not None else {}


def _records(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines() if x.strip()]


def test_repeat_zero_is_the_request_of_a_run_without_repeats() -> None:
    req = JudgeRequest(parts=[TextPart("Is it so?")], task="verify", inputs={"sentence": "s"})
    assert repeat_of(req, 0) is req
    two = repeat_of(req, 2)
    assert two.config.seed == req.config.seed + 2 and two.inputs == {"sentence": "s", "repeat": 2}
    assert two.parts == req.parts and req.inputs == {"sentence": "s"} and req.config.seed == 0  # the original untouched
    judge = ScriptedJudge(lambda r: "yes")
    keys = {judge.key(repeat_of(req, r)) for r in range(4)}
    assert len(keys) == 4 and judge.key(repeat_of(req, 0)) == judge.key(req)  # cached per repeat index
    # a request keyed by other settings than it is sent with (a sized answer cap) gets its seed there too
    from murgat.judges.types import GenerateConfig

    sized = JudgeRequest(parts=[TextPart("Is it so?")], config=GenerateConfig(max_tokens=64),
                         key_config=GenerateConfig(max_tokens=1024), task="verify")
    assert repeat_of(sized, 1).key_config.seed == 1 and judge.key(repeat_of(sized, 1)) != judge.key(sized)


def test_the_majority_is_the_verdict_and_a_tie_is_unknown() -> None:
    assert used(["yes", "no", "yes"]) == "yes"
    assert used(["yes", "no"]) == "unknown" and used(["yes", "no", "unknown", "unknown"]) == "unknown"
    assert used(["yes", "error", "error"]) == "yes"  # a failed answer is no vote
    assert used(["unparseable", "error"]) == "unparseable"  # nothing answered: the first repeat's failure


def test_a_judge_that_flips_on_one_repeat(tmp_path: Path, example_media: Path, capsys) -> None:
    doc = _score(tmp_path, example_media, FLIPPING, "run", "--repeats", "3", capsys=capsys)
    rep = doc["extra"]["repeats"]
    assert rep["k"] == 3 and rep["seeds"] == [0, 1, 2] and rep["n_items"] == 2
    # every fact: yes, no, yes — the majority is yes, every fact flips, 2 of 3 answers agree with it
    assert rep["facts"]["n_facts"] == 2 and rep["facts"]["flip_share"] == 1.0
    assert rep["facts"]["mean_agreement"] == pytest.approx(2 / 3) and rep["facts"]["majority_counts"] == {"yes": 2}
    assert rep["verifiability"]["flip_share"] == 0.0  # verifiability was asked 3 times and never flipped
    # repeat 1 alone scores every response 0; the run's figure is the majority's
    assert rep["murgat_s"]["per_repeat"] == [1.0, 0.0, 1.0] and rep["murgat_s"]["range"] == 1.0
    assert doc["murgat_s"]["value"] == 1.0
    assert not rep["identical_answers"] and "differed between repeats at temperature 0" in rep["note"]
    a = RepeatRecord.model_validate(next(r for r in _records(tmp_path / "run") if r["id"] == "a")["meta"]["repeats"])
    assert [f.joint for f in a.facts] == [["yes", "no", "yes"]] and a.facts[0].fact == 0
    assert a.verify == {0: ["yes", "yes", "yes"]} and [s.murgat_s for s in a.scores] == [1.0, 0.0, 1.0]


def test_the_table_says_how_stable_the_judge_is(tmp_path: Path, example_media: Path, capsys) -> None:
    inp = _write(tmp_path / "in.jsonl", RESPONSES)
    cas = _write(tmp_path / "c.jsonl", FLIPPING)
    assert main(["score", str(inp), "--judge", f"replay:{cas}", "--media-root", str(example_media), "--out",
                 str(tmp_path / "run"), "--quiet", "--repeats", "3"]) == 0
    out = capsys.readouterr().out
    assert "repeats 3" in out and "flip" in out and "MURGAT-S over repeats" in out


def test_identical_answers_at_temperature_zero_are_said_not_passed_off_as_stability(tmp_path: Path,
                                                                                  example_media: Path,
                                                                                  capsys) -> None:
    rep = _score(tmp_path, example_media, CASSETTE, "run", "--repeats", "2", capsys=capsys)["extra"]["repeats"]
    assert rep["identical_answers"] and rep["facts"]["flip_share"] == 0.0
    assert "temperature 0" in rep["note"] and "determinism" in rep["note"]


def test_repeats_one_changes_nothing(tmp_path: Path, example_media: Path, capsys) -> None:
    """``--repeats 1`` is a run without repeats: the same records, fingerprint and cache keys."""
    plain = _score(tmp_path, example_media, CASSETTE, "plain", capsys=capsys)
    one = _score(tmp_path, example_media, CASSETTE, "one", "--repeats", "1", capsys=capsys)
    assert "repeats" not in plain["extra"] and "repeats" not in one["extra"]
    fp = [json.loads((tmp_path / r / "config.json").read_text())["fingerprint"] for r in ("plain", "one")]
    assert fp[0] == fp[1] and "repeats" not in fp[0]

    def same(r: dict) -> dict:
        return {k: v for k, v in r.items() if k not in ("meta",)} | {"meta": {k: v for k, v in r["meta"].items()
                                                                             if k != "repeats"}}

    assert [same(r) for r in _records(tmp_path / "plain")] == [same(r) for r in _records(tmp_path / "one")]
    assert not any("repeats" in r["meta"] for r in _records(tmp_path / "one"))


def test_answers_are_cached_per_repeat_and_repeat_zero_shares_the_cache_of_a_run_without_repeats(
        tmp_path: Path, example_media: Path, capsys) -> None:
    cache = str(tmp_path / "shared.sqlite")
    first = _score(tmp_path, example_media, CASSETTE, "k1", "--cache", cache, capsys=capsys)
    sent_k1 = first["extra"]["this_invocation"]["sent"]
    three = _score(tmp_path, example_media, CASSETTE, "k3", "--cache", cache, "--repeats", "3", capsys=capsys)
    now = three["extra"]["this_invocation"]
    # decompositions are asked once (repeat 0): cached; each yes/no question's repeat 0 is cached; 1 and 2 are new
    n_decompose = 2
    assert now["cache_hits"] == sent_k1 and now["sent"] == 2 * (sent_k1 - n_decompose)
    again = _score(tmp_path, example_media, CASSETTE, "k3-again", "--cache", cache, "--repeats", "3", capsys=capsys)
    assert again["extra"]["this_invocation"]["sent"] == 0  # every repeat of every question is in the cache
    assert again["extra"]["repeats"]["facts"] == three["extra"]["repeats"]["facts"]


def test_a_folder_scored_without_repeats_is_not_resumed_with_them(tmp_path: Path, example_media: Path,
                                                                  capsys) -> None:
    _score(tmp_path, example_media, CASSETTE, "run")
    cas = tmp_path / "cassette.jsonl"
    capsys.readouterr()
    assert main(["score", str(tmp_path / "in.jsonl"), "--judge", f"replay:{cas}", "--media-root", str(example_media),
                 "--out", str(tmp_path / "run"), "--quiet", "--repeats", "2"]) == 2
    assert "repeats" in capsys.readouterr().err


def test_a_dry_run_counts_every_repeat(tmp_path: Path, example_media: Path, capsys) -> None:
    inp = _write(tmp_path / "in.jsonl", RESPONSES)
    calls = []
    for k in ("1", "3"):
        capsys.readouterr()
        assert main(["score", str(inp), "--judge", "embedded", "--media-root", str(example_media), "--out",
                     str(tmp_path / f"dry{k}"), "--dry-run", "--json", "--repeats", k]) == 0
        calls.append(json.loads(capsys.readouterr().out)["judge_calls_upper_bound"])
    # the 2 decompositions are asked once, every yes/no question 3 times
    assert calls[1] - 2 == 3 * (calls[0] - 2)


# ----- a scripted judge: which repeat a request is, from its seed


def _cfg(k: int) -> ScoreConfig:
    spec = JudgeSpec(spec="scripted")
    return ScoreConfig(judge_verify=spec, judge_decompose=spec, judge_entail=spec, repeats=k)


def _scored(tmp: Path, media: Path, k: int, answer, response: str) -> tuple[ResponseResult, dict]:
    judge = ScriptedJudge(answer)
    folder = RunFolder(tmp / f"k{k}")
    cfg = _cfg(k)
    fresh, _ = asyncio.run(score_items([Item(id="x", media="friday.mp4", response=response)], cfg,
                                       StageJudges(judge, judge, judge), folder, place=MediaPlace(media)))
    return fresh[0], summary_of(fresh, cfg).extra.get("repeats", {})


def _decompose(req: JudgeRequest) -> str:
    return json.dumps({"facts": [req.inputs["sentence"]]})


def test_a_tie_leaves_the_fact_unknown_and_says_why(tmp_path: Path, example_media: Path) -> None:
    """Entailment "yes" on even repeats, "no" on odd ones: with 2 repeats every question ties."""
    def answer(req: JudgeRequest) -> str:
        if req.task == "decompose":
            return _decompose(req)
        if req.task == "entail":
            return "no" if req.config.seed % 2 else "yes"
        return "yes"

    rr, rep = _scored(tmp_path, example_media, 2, answer, "She speaks (audio, 0:01-0:03).")
    fv = rr.sentences[0].verdicts[0]
    assert fv.joint == "unknown" and fv.status == "undetermined" and "2 repeats tied" in (fv.reason or "")
    assert rr.scores.murgat_s is None and rr.case == "undetermined"  # never a silent 0
    assert rep["n_tied"] == 1 and rep["facts"]["flip_share"] == 1.0
    rr3, rep3 = _scored(tmp_path, example_media, 3, answer, "She speaks (audio, 0:01-0:03).")
    assert rr3.sentences[0].verdicts[0].joint == "yes" and rr3.scores.murgat_s == 1.0  # yes, no, yes
    assert rep3["murgat_s"]["per_repeat"] == [1.0, 0.0, 1.0]


def test_a_sentence_only_one_repeat_finds_verifiable_is_scored_in_that_repeat_only(tmp_path: Path,
                                                                                    example_media: Path) -> None:
    """Verifiability "yes" on repeat 1 only (of 3): the majority says no (the record keeps no facts of it),
    but repeat 1 is scored on its own answers, with the sentence's facts decomposed and entailed."""
    def answer(req: JudgeRequest) -> str:
        if req.task == "decompose":
            return _decompose(req)
        if req.task == "verify" and "laughs" in req.inputs["sentence"]:
            return "yes" if req.config.seed == 1 else "no"
        return "yes"

    rr, rep = _scored(tmp_path, example_media, 3, answer,
                      "She speaks (audio, 0:01-0:03). A man laughs (audio, 0:03-0:05).")
    laugh = rr.sentences[1]
    assert laugh.verifiable is False and laugh.facts == [] and laugh.verdicts == []
    assert any("1 of 3 repeats that found it verifiable" in n for n in laugh.notes)
    assert rr.n_verifiable == 1 and rr.n_facts == 1 and rr.scores.coverage == 1.0
    rec = RepeatRecord.model_validate(rr.meta["repeats"])
    assert rec.verify[1] == ["no", "yes", "no"]
    assert [f.fact for f in rec.facts] == [0, None]  # the second sentence's fact is in no record
    assert rep["verifiability"]["flip_share"] == 0.5  # one of two sentences flips


def test_each_repeat_asks_what_its_own_answers_need(tmp_path: Path, example_media: Path) -> None:
    """With two citations, alce asks each alone only after a joint "yes": repeat 1's joint "no" asks no
    more of it, but the majority's "yes" asks every repeat the citations alone."""
    def answer(req: JudgeRequest) -> str:
        if req.task == "decompose":
            return _decompose(req)
        if req.task == "entail" and len(req.inputs["evidence"]) == 2:
            return "no" if req.config.seed == 1 else "yes"
        return "yes"

    judge_requests: list[JudgeRequest] = []

    def recording(req: JudgeRequest) -> str:
        judge_requests.append(req)
        return answer(req)

    rr, rep = _scored(tmp_path, example_media, 3, recording, "A man laughs (audio, 0:03-0:05; visual, 0:02).")
    entail = [r for r in judge_requests if r.task == "entail"]
    assert sorted((len(r.inputs["evidence"]), r.config.seed) for r in entail) == sorted(
        [(2, s) for s in range(3)] + [(1, s) for s in range(3)] * 2)
    fv = rr.sentences[0].verdicts[0]
    assert fv.joint == "yes" and fv.alone == {0: "yes", 1: "yes"} and rr.scores.murgat_s == 1.0
    assert rep["murgat_s"]["per_repeat"] == [1.0, 0.0, 1.0]
    assert len(fv.calls) == 3  # the record keeps repeat 0's answer to each question asked


#: repeat 0 says "yes" to every entailment question, repeats 1 and 2 say "no": the majority is "no"
OUTVOTED = [{"match": {"task": "entail", "inputs": {"repeat": r}}, "output": {"text": "No, it is not shown."}}
            for r in (1, 2)] + CASSETTE


def test_diff_and_export_read_the_majority_the_score_used_not_repeat_zero(tmp_path: Path, example_media: Path,
                                                                         capsys) -> None:
    """Before: ``diff`` compared repeat 0's "yes" (1.0 against 0.0 read as "0 verdicts changed") and
    ``export --level fact`` showed repeat 0's words beside the majority's recall."""
    from murgat.engine.differences import run_differences

    inp = _write(tmp_path / "in.jsonl", RESPONSES)
    cas = _write(tmp_path / "outvoted.jsonl", OUTVOTED)
    plain = _write(tmp_path / "plain.jsonl", CASSETTE)
    for run, judge, extra in (("rep", cas, ["--repeats", "3"]), ("once", plain, [])):
        assert main(["score", str(inp), "--judge", f"replay:{judge}", "--media-root", str(example_media), "--out",
                     str(tmp_path / run), "--quiet", "--json", *extra]) == 0
    capsys.readouterr()
    rep = {r["id"]: r for r in _records(tmp_path / "rep")}
    assert rep["a"]["scores"]["murgat_s"] == 0.0  # the majority said no
    v = run_differences(tmp_path / "once", tmp_path / "rep").verdicts
    assert v is not None and v.changed >= 2 and v.by_stage.get("entail", 0) >= 2
    assert main(["export", str(tmp_path / "rep"), "--level", "fact", "--format", "jsonl", "--out",
                 str(tmp_path / "facts.jsonl")]) == 0
    rows = [json.loads(x) for x in (tmp_path / "facts.jsonl").read_text().splitlines() if x.strip()]
    assert rows and all(r["joint"] == "no" and r["judge_answer"] == "No, it is not shown." for r in rows)


def test_diff_says_runs_holding_different_items_differ(tmp_path: Path, example_media: Path, capsys) -> None:
    inp = _write(tmp_path / "in.jsonl", RESPONSES)
    one = _write(tmp_path / "one.jsonl", RESPONSES[:1])
    cas = _write(tmp_path / "c.jsonl", CASSETTE)
    for run, data in (("both", inp), ("first", one)):
        assert main(["score", str(data), "--judge", f"replay:{cas}", "--media-root", str(example_media), "--out",
                     str(tmp_path / run), "--quiet", "--json"]) == 0
    capsys.readouterr()
    assert main(["diff", str(tmp_path / "both"), str(tmp_path / "first")]) == 1
    assert "only in A 1" in capsys.readouterr().out
