"""``murgat program`` on the one engine (#21): its options reach every request, its two readable
files come from one results stream (a crash between two appends can no longer split them), a
corrupt line is quarantined with a word, and ``--executor ray`` is a model name with a hint.

Remote-model tests use the stand-in OpenAI-compatible server (``tests/standin.py``), which
speaks the real Chat Completions wire format to murgat's real HTTP client."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main
from tests.programs.test_program_e2e import program_cassette
from tests.standin import StandIn


def _data(tmp: Path) -> Path:
    p = tmp / "q.jsonl"
    p.write_text(json.dumps({"id": "friday-q", "media": "friday.mp4", "question": "What mood is the man in?",
                             "options": ["happy", "in a bad humor"], "gold": "in a bad humor"}) + "\n")
    return p


def test_generation_options_reach_every_request(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: --max-tokens 77 --temperature 0.7 were recorded in config.json but every request went
    out with max_tokens 1024 and temperature 0.0."""
    with StandIn() as server:
        code = main(["program", str(_data(tmp_path)), "--media-root", str(example_media), "--variant",
                     "logic-declarative", "--planner", "openai:m", "-P", f"base_url={server.base_url}",
                     "--max-tokens", "77", "--temperature", "0.7", "--out", str(tmp_path / "p"), "--quiet", "--json",
                     "--probes", "off"])  # the items' requests (a probe's token-account twin asks for one token)
        assert code == 1  # the stand-in answers "yes", not a program: a planning error record
        assert server.requests and all(r["max_tokens"] == 77 and r["temperature"] == 0.7 for r in server.requests)


def test_retries_zero_means_one_attempt(tmp_path: Path, example_media: Path, capsys) -> None:
    with StandIn() as server:
        server.mode = "fail"
        main(["program", str(_data(tmp_path)), "--media-root", str(example_media), "--variant", "logic-declarative",
              "--planner", "openai:m", "-P", f"base_url={server.base_url}", "--retries", "0", "--out",
              str(tmp_path / "p"), "--quiet", "--json", "--probes", "off"])  # counts requests: no judge probes
        assert len(server.requests) == 1


def test_one_results_stream_and_legacy_folders_adopted(tmp_path: Path, example_media: Path, capsys) -> None:
    cas = program_cassette(tmp_path)
    out = tmp_path / "prog"
    log = tmp_path / "served.log"
    args = ["program", str(_data(tmp_path)), "--media-root", str(example_media), "--variant", "logic-declarative",
            "--planner", f"replay:{cas}", "-P", f"log={log}", "--out", str(out), "--json", "--quiet"]
    assert main(args) == 0
    first = log.read_text().count("\n")
    v = out / "logic-declarative"
    assert [json.loads(ln)["id"] for ln in (v / "responses.jsonl").read_text().splitlines()] == ["friday-q"]
    assert [json.loads(ln)["id"] for ln in (v / "traces.jsonl").read_text().splitlines()] == ["friday-q"]
    assert json.loads((out / "config.json").read_text())["kind"] == "program"
    # a folder of the old layout, cut by a crash between its two appends (a response, no trace)
    (v / "results.jsonl").unlink()
    (v / "traces.jsonl").write_text("")
    assert main(args) == 0
    assert log.read_text().count("\n") == first  # done again from the cache: nothing paid twice
    (row,) = [json.loads(ln) for ln in (v / "results.jsonl").read_text().splitlines()]
    assert row["id"] == "friday-q" and row["trace"]["status"] == "ok"
    assert len((v / "responses.jsonl").read_text().splitlines()) == 1
    assert len((v / "traces.jsonl").read_text().splitlines()) == 1


def test_corrupt_middle_line_is_quarantined_with_a_word(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: a corrupt middle line of a program/generate/reflect output was skipped without a word."""
    cas = program_cassette(tmp_path)
    out = tmp_path / "prog"
    args = ["program", str(_data(tmp_path)), "--media-root", str(example_media), "--variant", "logic-declarative",
            "--planner", f"replay:{cas}", "--out", str(out), "--json", "--quiet"]
    assert main(args) == 0
    res = out / "logic-declarative" / "results.jsonl"
    good = res.read_text().splitlines()[0]
    res.write_text("{torn\n" + good + "\n")
    capsys.readouterr()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "corrupt line" in err and (out / "logic-declarative" / "results.corrupt.jsonl").exists()
    assert res.read_text().splitlines() == [good]


def test_executor_ray_is_a_model_name_with_a_hint(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: program --executor ray said "unknown judge provider 'ray'"."""
    code = main(["program", str(_data(tmp_path)), "--media-root", str(example_media), "--planner", "embedded",
                 "--executor", "ray", "--out", str(tmp_path / "p"), "--quiet"])
    assert code == 2 and "--run-on ray" in capsys.readouterr().err


def test_identical_concurrent_requests_are_sent_once(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: program --item-concurrency 2 sent identical concurrent requests twice (a pool per item)."""
    row = json.loads(_data(tmp_path).read_text())
    q = tmp_path / "twins.jsonl"
    q.write_text(json.dumps(row) + "\n" + json.dumps({**row, "id": "twin"}) + "\n")
    with StandIn(latency=0.5) as server:
        main(["program", str(q), "--media-root", str(example_media), "--variant", "logic-declarative", "--planner",
              "openai:m", "-P", f"base_url={server.base_url}", "--item-concurrency", "2", "--out", str(tmp_path / "p"),
              "--quiet", "--json", "--probes", "off"])  # counts requests: no judge probes
        assert len(server.requests) == 1

def test_cache_option_and_overwrite_cover_the_whole_run(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: program accepted no --cache (always OUT/cache.sqlite), and --variant X --overwrite left
    the other variants' results in the folder it claimed to start again."""
    cas = program_cassette(tmp_path)
    out = tmp_path / "prog"
    shared = tmp_path / "shared-cache.sqlite"
    base = ["program", str(_data(tmp_path)), "--media-root", str(example_media), "--planner", f"replay:{cas}",
            "--out", str(out), "--json", "--quiet", "--cache", str(shared)]
    assert main([*base, "--variant", "logic-declarative"]) == 0
    assert shared.exists() and not (out / "cache.sqlite").exists()
    other = out / "narrative-imperative"  # a variant folder left from an earlier run of this folder
    other.mkdir()
    (other / "results.jsonl").write_text(json.dumps({"id": "friday-q", "record": {}, "trace": {}}) + "\n")
    assert main([*base, "--variant", "logic-declarative", "--overwrite"]) == 0
    assert not (other / "results.jsonl").exists()
    assert (out / "logic-declarative" / "results.jsonl").exists()
