"""The judge probes asked by the run commands before their first item (``murgat.engine.judge_probes``).

Remote-judge runs use the stand-in OpenAI-compatible server (``tests/standin.py``: the Chat
Completions wire format, murgat's real HTTP client). With ``honest = True`` it perceives the probe
clip (reads the numbers in the images it receives, hears the words in the audio it receives);
``fault`` plays a serving stack that loses media before its model sees them. Each fault must be
caught, in a real ``murgat score`` run, by the probes that check for it; ``--probes off`` must send
exactly the requests of a run without the probes; the probes enter no fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from murgat.cli import main
from tests.standin import StandIn

RESPONSE = "She asks whether the lord of the galaxy is in (audio, 0:01-0:03; visual, 0:02). So yes."
#: the probes each serving fault fails (and no other), as ``murgat judge check`` finds them
FAULTS: dict[str | None, set[str]] = {
    None: set(),
    "drop_audio": {"hearing", "time_hearing"},
    "drop_images": {"seeing", "time_seeing", "order"},
    "shuffle_frames": {"order", "order_reversed"},
    "text_only": {"hearing", "seeing", "time_seeing", "time_hearing", "order"},
}
PROBE_MARK = ("The voice says", "is displayed")


def _input(tmp: Path) -> Path:
    p = tmp / "in.jsonl"
    p.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": RESPONSE}) + "\n")
    return p


def _score(tmp: Path, server: StandIn, out: Path, media: Path, *extra: str) -> int:
    return main(["score", str(_input(tmp)), "--media-root", str(media), "--judge", "openai:m", "-J",
                 f"base_url={server.base_url}", "--retries", "0", "--out", str(out), "--quiet", "--json", *extra])


def _summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


def _config(out: Path) -> dict[str, Any]:
    return json.loads((out / "config.json").read_text())


def _prompt(body: dict[str, Any]) -> str:
    return " ".join(p.get("text", "") for m in body.get("messages", [])
                    for p in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}]))


#: requests one entailment path's probes send: the 12 probes and the token account's two twins (the
#: hearing and seeing requests without their media, murgat.judging.probes.tokens)
ASKED = 14


def _is_probe(body: dict[str, Any]) -> bool:
    text = _prompt(body)
    return any(mark in text for mark in PROBE_MARK)


@pytest.mark.parametrize("fault", list(FAULTS), ids=[str(f) for f in FAULTS])
def test_a_score_run_catches_each_serving_fault_with_its_probes(fault: str | None, tmp_path: Path,
                                                                example_media: Path, capsys) -> None:
    out = tmp_path / "run"
    with StandIn() as server:
        server.honest, server.fault = True, fault
        code = _score(tmp_path, server, out, example_media)
        n = len(server.requests)
        asked = [_is_probe(b) for b in server.requests]
    err = capsys.readouterr().err
    assert asked == [True] * ASKED + [False] * (n - ASKED)  # every probe answered before the first item's request
    summary = _summary(out)
    report = summary["extra"]["probes"]
    failed = {r["probe"] for r in report["results"] if r["outcome"] in ("fail", "error")}
    assert code == 0 and report["setting"] == "auto"
    assert failed == FAULTS[fault]
    assert report["judges"][0]["judge"] == "openai:m" and report["judges"][0]["stage"] == "entail"
    assert report["judges"][0]["calls"] == ASKED and n == ASKED + summary["sent"]
    # the same report in config.json, beside the settings and not in the fingerprint
    cfg = _config(out)
    assert cfg["config"]["probes"]["results"] == report["results"]
    assert "probes" not in json.dumps(cfg["fingerprint"])
    if fault is None:
        assert "WARNING" not in err and "note: judge probes: 12/12 passed" in err
        assert "judge probes: 12/12 passed" in (out / "report.html").read_text()  # the run panel's line
    else:  # loud, before the first item and again after the summary
        assert err.count("WARNING: JUDGE PROBES FAILED") == 2
    # the probes' requests are counted and priced with the run's own (this invocation), not in the items' figures
    now = summary["extra"]["this_invocation"]
    assert now["sent"] == n and now["requests"] == n
    assert summary["judge_calls"] == summary["sent"] == n - ASKED


def test_probes_are_in_the_report_and_every_entail_call_has_its_account(tmp_path: Path, example_media: Path,
                                                                        capsys) -> None:
    out = tmp_path / "run"
    with StandIn() as server:
        server.honest, server.fault = True, "drop_audio"
        assert _score(tmp_path, server, out, example_media) == 0
    capsys.readouterr()
    page = (out / "report.html").read_text()
    assert "JUDGE PROBES FAILED: 2/12" in page and "probesLine" in page
    extra = _summary(out)["extra"]
    ident = extra["judge_identity"]
    assert [i["name"] for i in ident] == ["openai:m"] and ident[0]["system_fingerprints"]["fp_standin"] > 12
    media = extra["sent_media"]
    assert media["requests"] == extra["this_invocation"]["sent"] and media["audio_s"] > 10 and media["images"] > 23
    (rec,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    calls = [c for s in rec["sentences"] for v in s.get("verdicts", []) for c in v["calls"]]
    assert calls and all(c["sent"]["audio_parts"] == 1 and c["sent"]["images"] >= 1 for c in calls
                         if c["evidence"] == [0, 1])
    assert all(c["sent"]["request_bytes"] > 0 for c in calls)


def test_require_stops_before_any_item_on_a_failing_judge(tmp_path: Path, example_media: Path, capsys) -> None:
    out = tmp_path / "run"
    with StandIn() as server:
        server.honest, server.fault = True, "drop_images"
        code = _score(tmp_path, server, out, example_media, "--probes", "require")
        bodies = list(server.requests)
    err = capsys.readouterr().err.rstrip().splitlines()
    assert code == 2
    assert len(bodies) == ASKED and all(_is_probe(b) for b in bodies)  # the probes only: no item was asked
    assert err[-1].startswith("error: JUDGE PROBES FAILED: 3/12") and "no item was started" in err[-1]
    assert any(line.startswith("  seeing [openai:m, entail]") for line in err)
    assert not out.exists()  # refused before any work: nothing it made stays
    # the same judge, served honestly: require lets the run go on
    with StandIn() as server:
        server.honest = True
        assert _score(tmp_path, server, out, example_media, "--probes", "require") == 0
    assert _summary(out)["extra"]["probes"]["setting"] == "require"
    capsys.readouterr()


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _digests(server: StandIn) -> Counter[str]:
    """Every request body the server received, as it received it (a multiset: items run concurrently)."""
    return Counter(_digest(b) for b in server.requests)


def test_probes_off_sends_exactly_the_requests_of_a_run_without_them(tmp_path: Path, example_media: Path,
                                                                     monkeypatch, capsys) -> None:
    """Three fresh runs of one input: ``--probes off``; the engine without the probe step at all (what
    the run commands were before the wiring); the default. The first two send the same request bodies,
    byte for byte; the default sends those and the 12 probes."""
    import murgat.engine.command as command

    with StandIn() as server:  # one server: the runs' settings (its address among them) are the same
        assert _score(tmp_path, server, tmp_path / "off", example_media, "--probes", "off") == 0
        off = _digests(server)
        server.requests.clear()
        with monkeypatch.context() as m:
            m.setattr(command, "probe_before_run", lambda *_a: None)
            assert _score(tmp_path, server, tmp_path / "unwired", example_media) == 0
        unwired = _digests(server)
        server.requests.clear()
        assert _score(tmp_path, server, tmp_path / "on", example_media) == 0
        on = _digests(server)
        probes = [b for b in server.requests if _is_probe(b)]
    capsys.readouterr()
    assert off == unwired and sum(off.values()) > 0
    assert len(probes) == ASKED and on - off == Counter(_digest(b) for b in probes) and not off - on
    # the fingerprint is one and the same; --probes off records no probes and no account of them
    fps = {json.dumps(_config(tmp_path / d)["fingerprint"], sort_keys=True) for d in ("off", "unwired", "on")}
    assert len(fps) == 1
    assert "probes" not in _config(tmp_path / "off")["config"] and "probes" not in _summary(tmp_path / "off")["extra"]
    # MURGAT-S and every per-item figure are the probes' business nowhere
    for d in ("unwired", "on"):
        assert _summary(tmp_path / d)["murgat_s"] == _summary(tmp_path / "off")["murgat_s"]
        assert (tmp_path / d / "results.jsonl").read_text() == (tmp_path / "off" / "results.jsonl").read_text()


def test_a_rerun_asks_no_probe_again_and_probes_change_no_fingerprint(tmp_path: Path, example_media: Path,
                                                                      capsys) -> None:
    out = tmp_path / "run"
    with StandIn() as server:
        server.honest = True
        assert _score(tmp_path, server, out, example_media, "--probes", "off") == 0
        first = len(server.requests)
        # the same folder with probes on: resumed (not refused), the item not redone, only the probes asked
        assert _score(tmp_path, server, out, example_media, "--probes", "on") == 0
        assert len(server.requests) == first + ASKED
        # and again: the probes' answers come from the response cache
        assert _score(tmp_path, server, out, example_media) == 0
        assert len(server.requests) == first + ASKED
    capsys.readouterr()
    j = _summary(out)["extra"]["probes"]["judges"][0]
    assert (j["calls"], j["cache_hits"], j["passed"]) == (0, 12, 12)


def test_auto_leaves_the_embedded_and_replay_judges_unprobed(tmp_path: Path, example_media: Path, capsys) -> None:
    inp = _input(tmp_path)
    cas = tmp_path / "cas.jsonl"
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out",
                 str(tmp_path / "e"), "--record", str(cas), "--quiet", "--json"]) == 0
    assert main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out",
                 str(tmp_path / "r"), "--quiet", "--json"]) == 0
    err = capsys.readouterr().err
    for d in ("e", "r"):
        assert "probes" not in _summary(tmp_path / d)["extra"] and "probes" not in _config(tmp_path / d)["config"]
    assert "judge probes" not in err.lower()


def test_the_embedded_judge_is_probed_when_asked(tmp_path: Path, example_media: Path, capsys) -> None:
    """Whisper hears the word and OCR reads the number; it abstains where it cannot check (the
    one-modality and order probes): no failure, no warning."""
    out = tmp_path / "run"
    assert main(["score", str(_input(tmp_path)), "--media-root", str(example_media), "--judge", "embedded",
                 "--out", str(out), "--probes", "on", "--quiet", "--json"]) == 0
    err = capsys.readouterr().err
    report = _summary(out)["extra"]["probes"]
    outcome = {r["probe"]: r["outcome"] for r in report["results"]}
    assert {p for p, o in outcome.items() if o == "abstain"} == {"modality_visual", "modality_audio", "order",
                                                                 "order_reversed"}
    assert {p for p, o in outcome.items() if o == "pass"} == set(outcome) - {"modality_visual", "modality_audio",
                                                                               "order", "order_reversed"}
    assert "WARNING" not in err and "note: judge probes: 8/12 passed, 4 abstained" in err


def test_a_replay_cassette_answers_the_probes_it_recorded(tmp_path: Path, example_media: Path, capsys) -> None:
    with_probes, without = tmp_path / "with.jsonl", tmp_path / "without.jsonl"
    with StandIn() as server:
        server.honest, server.fault = True, "drop_audio"
        assert _score(tmp_path, server, tmp_path / "rec1", example_media, "--record", str(with_probes)) == 0
        assert _score(tmp_path, server, tmp_path / "rec2", example_media, "--record", str(without), "--probes",
                      "off") == 0
    capsys.readouterr()
    inp = _input(tmp_path)

    def replay(cas: Path, out: str, probes: str) -> int:
        return main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--out",
                     str(tmp_path / out), "--probes", probes, "--quiet", "--json"])

    # the recorded probes are answered as the judge answered them: the dropped audio is caught again
    assert replay(with_probes, "p1", "on") == 0
    rep = _summary(tmp_path / "p1")["extra"]["probes"]
    assert {r["probe"] for r in rep["results"] if r["outcome"] == "fail"} == FAULTS["drop_audio"]
    capsys.readouterr()
    # a cassette without them: every probe unanswered, the run goes on (on) or stops before any item (require)
    assert replay(without, "p2", "on") == 0
    rep = _summary(tmp_path / "p2")["extra"]["probes"]
    assert {r["outcome"] for r in rep["results"]} == {"error"}
    err = capsys.readouterr().err
    assert "WARNING: JUDGE PROBES FAILED: 12/12" in err
    assert "no readable answer: this probe checked nothing (replay:" in err and "may drop audio" not in err
    assert replay(without, "p3", "require") == 2
    assert not (tmp_path / "p3").exists()
    capsys.readouterr()


def _chains(tmp: Path) -> Path:
    p = tmp / "chains.jsonl"
    p.write_text(json.dumps({"id": "c", "media": "friday.mp4", "question": "Who speaks?", "options": ["a", "b"],
                             "gold": "B", "response": "A woman talks (audio, 0:01-0:03).\nAnswer: B"}) + "\n")
    return p


@pytest.mark.parametrize("granularity", ["step", "chain"])
def test_faithfulness_probes_its_labeller(granularity: str, tmp_path: Path, example_media: Path, capsys) -> None:
    out = tmp_path / "f"
    with StandIn() as server:
        server.honest, server.fault = True, "drop_audio"
        code = main(["faithfulness", str(_chains(tmp_path)), "--media-root", str(example_media), "--judge", "openai:m",
                     "-J", f"base_url={server.base_url}", "--retries", "0", "--granularity", granularity,
                     "--out", str(out), "--quiet", "--json"])
    err = capsys.readouterr().err
    assert code in (0, 1)
    doc = _summary(out)
    report = doc["probes"]
    assert [(j["judge"], j["stage"]) for j in report["judges"]] == [("openai:m", f"faith_{granularity}")]
    failed = {r["probe"] for r in report["results"] if r["outcome"] in ("fail", "error")}
    assert "hearing" in failed and failed <= {"hearing", "time_hearing"}
    assert err.count("WARNING: JUDGE PROBES FAILED") == 2
    assert doc["judge_identity"][0]["name"] == "openai:m" and doc["sent_media"]["requests"] > 0
    assert "probes" in _config(out)["config"] and "probes" not in json.dumps(_config(out)["fingerprint"])
    assert "JUDGE PROBES FAILED" in (out / "report.html").read_text()


def _reflect(tmp: Path, server: StandIn, out: Path, media: Path, *extra: str) -> int:
    q = tmp / "q.jsonl"
    base = {"media": "friday.mp4", "question": "Who speaks?", "options": ["a", "b"], "gold": "B"}
    q.write_text(json.dumps({**base, "id": "c"}) + "\n")
    start = tmp / "from.jsonl"
    start.write_text(json.dumps({**base, "id": "c", "response": "A woman talks (audio, 0:01-0:03).\nAnswer: B"}) + "\n")
    url = f"base_url={server.base_url}"
    return main(["reflect", str(q), "--media-root", str(media), "--model", "openai:m", "-M", url, "--detector",
                 "openai:d", "-D", url, "--judge", "openai:d", "-J", url, "--from", str(start), "--retries", "0",
                 "--out", str(out), "--quiet", "--json", *extra])


def test_reflect_probes_each_distinct_path_once(tmp_path: Path, example_media: Path, capsys) -> None:
    """The detector (per step, its own prompt) and the measuring judge (per chain) are two paths of one
    judge; asked the same way (the labelling prompt, per step) they are one set of probes."""
    with StandIn() as server:
        server.honest = True
        assert _reflect(tmp_path, server, tmp_path / "two", example_media) == 0
        two = sum(1 for b in server.requests if _is_probe(b))
    doc = _summary(tmp_path / "two")
    assert [(j["judge"], j["stage"]) for j in doc["probes"]["judges"]] == [("openai:d", "faith_detect"),
                                                                             ("openai:d", "faith_chain")]
    assert doc["probes"]["judges"][0]["passed"] == 12
    with StandIn() as server:
        server.honest = True
        assert _reflect(tmp_path, server, tmp_path / "one", example_media, "--detector-prompt", "label",
                        "--granularity", "step") == 0
        one = sum(1 for b in server.requests if _is_probe(b))
    capsys.readouterr()
    doc = _summary(tmp_path / "one")
    assert [(j["judge"], j["stage"]) for j in doc["probes"]["judges"]] == [("openai:d", "faith_step")]
    assert one == 12 < two


def test_sweep_and_program_score_hand_the_probe_setting_to_scoring() -> None:
    from murgat.settings.program import ProgramSettings
    from murgat.settings.score import ScoreSettings
    from murgat.settings.sweep import SweepSettings

    for parent in (SweepSettings(data="d", model="m", judge="j", out="o", probes="require", probe_seed=3),
                   ProgramSettings(data="d", planner="p", out="o", probes="off")):
        s = ScoreSettings.scoring_of(parent, input="r.jsonl", judge="j", judge_option=[], out="o/run", cache="c")
        assert (s.probes, s.probe_seed) == (parent.probes, parent.probe_seed)
    assert ScoreSettings(input="i", judge="j", out="o").probes == "auto"


def test_summarize_says_how_two_runs_differ(tmp_path: Path, example_media: Path, capsys) -> None:
    """``murgat summarize A B`` prints the settings, probe outcomes and judge identities that differ."""
    with StandIn() as server:
        server.honest = True
        assert _score(tmp_path, server, tmp_path / "a", example_media) == 0
        server.fault = "drop_audio"
        assert _score(tmp_path, server, tmp_path / "b", example_media, "--pad", "0.5", "--precision-mode", "strict",
                      "--cache", str(tmp_path / "b.sqlite")) == 0
    capsys.readouterr()
    assert main(["summarize", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "what differs" in out and "evidence.pad_s" in out and "precision_mode" in out and "entail hearing" in out
    assert main(["summarize", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    keys = {d["key"]: (d["a"], d["b"]) for d in doc["run_differences"][0]["differences"]}
    assert keys["probes.openai:m entail hearing"] == ("pass", "fail") and keys["evidence.pad_s"] == (0.0, 0.5)
    assert keys["precision_mode"] == ("alce", "strict")
    # one run, or runs of the same settings: nothing to say, and said
    assert main(["summarize", str(tmp_path / "a"), str(tmp_path / "a")]) == 0
    assert "no setting, prompt, judge, probe or version differs" in " ".join(capsys.readouterr().out.split())
    assert main(["summarize", str(tmp_path / "a")]) == 0
    assert "what differs" not in capsys.readouterr().out


def test_require_on_a_resumed_folder_starts_no_item_and_leaves_its_records(tmp_path: Path, example_media: Path,
                                                                           capsys) -> None:
    """A folder with one item done, resumed with ``--probes require`` against a judge that lost its
    images: only the probes are sent, exit 2, and the folder's records are byte for byte what they were."""
    inp = tmp_path / "two.jsonl"
    inp.write_text("".join(json.dumps({"id": i, "media": "friday.mp4", "response": RESPONSE}) + "\n" for i in "ab"))
    out = tmp_path / "run"

    def score(server: StandIn, *extra: str) -> int:
        return main(["score", str(inp), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                     f"base_url={server.base_url}", "--retries", "0", "--out", str(out), "--quiet", "--json", *extra])

    with StandIn() as server:
        server.honest = True
        assert score(server, "--ids", "a", "--probes", "off") == 0
        before = (out / "results.jsonl").read_bytes()
        server.requests.clear()
        server.fault = "drop_images"
        assert score(server, "--probes", "require", "--cache", str(tmp_path / "fresh.sqlite")) == 2
        bodies = list(server.requests)
    err = capsys.readouterr().err
    assert len(bodies) == ASKED and all(_is_probe(b) for b in bodies)
    assert "no item was started" in err.strip().splitlines()[-1]
    assert (out / "results.jsonl").read_bytes() == before and not (out / "summary.json").read_text().count("probes")


def test_program_probes_its_runtime_check_and_each_score_run_its_scoring_judge(tmp_path: Path, example_media: Path,
                                                                               capsys) -> None:
    """``program``'s checker (the planner here) is probed before the first item; ``--score`` hands
    ``--probes`` to the variant's score run, which probes its scoring judge (its own response cache:
    asked again). The stand-in writes no program, so each item is a planning error (exit 1)."""
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"id": "friday-q", "media": "friday.mp4", "question": "What mood is the man in?",
                             "options": ["happy", "in a bad humor"], "gold": "in a bad humor"}) + "\n")

    def program(server: StandIn, out: str, *extra: str) -> int:
        return main(["program", str(q), "--media-root", str(example_media), "--variant", "logic-declarative",
                     "--planner", "openai:m", "-P", f"base_url={server.base_url}", "--out", str(tmp_path / out),
                     "--quiet", "--json", *extra])

    with StandIn() as server:
        server.honest = True
        assert program(server, "p", "--score") == 1
        asked = [_is_probe(b) for b in server.requests]
        server.requests.clear()
        assert program(server, "off", "--score", "--probes", "off") == 1
        off = [_is_probe(b) for b in server.requests]
    capsys.readouterr()
    assert asked == [True] * ASKED + [False] + [True] * ASKED  # the checker's probes, the one plan, the scorer's
    assert off == [False]
    doc = _summary(tmp_path / "p")
    assert [(j["judge"], j["stage"], j["passed"]) for j in doc["probes"]["judges"]] == [("openai:m", "entail", 12)]
    assert doc["judge_identity"][0]["name"] == "openai:m" and doc["sent_media"]["requests"] == ASKED + 1
    scored = _summary(tmp_path / "p" / "logic-declarative" / "run")["extra"]["probes"]
    assert scored["setting"] == "auto" and scored["judges"][0]["calls"] == ASKED
    assert "probes" not in _summary(tmp_path / "off") and "probes" not in _config(tmp_path / "off")["config"]


def test_the_folders_probe_report_stays_until_new_probes_replace_it(tmp_path: Path, example_media: Path,
                                                                     capsys) -> None:
    """``config.json`` keeps the last probe report asked of the folder: a resume with ``--probes off``
    and a ``require`` run refused before its items leave it as it was (before, both rewrote the
    config without it); new probes replace it."""
    out = tmp_path / "run"
    with StandIn() as server:
        server.honest = True
        assert _score(tmp_path, server, out, example_media, "--probes", "on") == 0
        first = _config(out)["config"]["probes"]
        assert first["judges"][0]["passed"] == 12
        assert _score(tmp_path, server, out, example_media, "--probes", "off") == 0
        assert _config(out)["config"]["probes"] == first
        server.fault = "drop_images"
        assert _score(tmp_path, server, out, example_media, "--probes", "require", "--cache",
                      str(tmp_path / "fresh.sqlite")) == 2
        assert _config(out)["config"]["probes"] == first
        assert _score(tmp_path, server, out, example_media, "--probes", "on", "--cache",
                      str(tmp_path / "fresh2.sqlite")) == 0
        assert _config(out)["config"]["probes"]["judges"][0]["failed"] > 0
    capsys.readouterr()


def _probes_only(action: str) -> Any:
    """A server that misbehaves on the wire for the probes' requests only (the items' are answered)."""
    return lambda prompt, body: action if any(mark in prompt for mark in PROBE_MARK) else None


@pytest.mark.parametrize("action", ["500", "close", "hang", "endless"])
def test_a_judge_that_fails_only_the_probes_costs_no_item_its_record(action: str, tmp_path: Path, example_media: Path,
                                                                     capsys) -> None:
    """HTTP 500, a closed connection, no answer and a body that never ends, for the probes only: each
    probe is unanswered (said as such: it checked nothing, with the error; never what a wrong answer
    would mean, such as "the server may drop audio parts"), and the item is judged as without probes;
    with ``require`` the run stops (exit 2) and leaves nothing. The server itself ends a hung probe
    after a second (closing the connection, mid-body for ``endless``), so no client timeout is
    involved: a short ``--timeout`` would also cut the items' answers on a loaded machine."""
    out = tmp_path / "run"
    with StandIn() as server:
        server.honest, server.wire, server.hang_s = True, _probes_only(action), 1.0
        assert _score(tmp_path, server, out, example_media) == 0
    err = capsys.readouterr().err
    [record] = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert record["error"] is None and record["scores"]["murgat_s"] is not None  # judged as without probes
    report = _summary(out)["extra"]["probes"]
    assert {r["outcome"] for r in report["results"]} == {"error"} and report["judges"][0]["errors"] == 12
    assert "JUDGE PROBES FAILED: 12/12 (12 unanswered: they checked nothing)" in err
    assert "hearing [openai:m, entail] The voice says" in err and "this probe checked nothing (openai" in err
    assert "may drop audio parts" not in err and "did not hear the word" not in err
    with StandIn() as server:
        server.honest, server.wire, server.hang_s = True, _probes_only(action), 1.0
        assert _score(tmp_path, server, tmp_path / "req", example_media, "--probes", "require") == 2
        assert all(_is_probe(b) for b in server.requests)  # no item was asked
    assert not (tmp_path / "req").exists()
    capsys.readouterr()


def test_a_judge_that_says_yes_to_everything_fails_the_probes_that_expect_no(tmp_path: Path, example_media: Path,
                                                                             capsys) -> None:
    out = tmp_path / "run"
    with StandIn() as server:  # not honest: "yes" to every question
        assert _score(tmp_path, server, out, example_media) == 0
        assert _score(tmp_path, server, tmp_path / "req", example_media, "--probes", "require") == 2
    report = _summary(out)["extra"]["probes"]
    failed = {r["probe"] for r in report["results"] if r["outcome"] == "fail"}
    assert failed == {r["probe"] for r in report["results"] if r["expected"] == "no"} and len(failed) == 7
    assert "the judge confirms a word that is never said" in capsys.readouterr().err
    assert not (tmp_path / "req").exists()


def test_a_run_killed_during_its_probes_resumes(tmp_path: Path, example_media: Path) -> None:
    """``kill -9`` while the judge holds the probes' requests: the folder (its lock, cache and config)
    is resumed by the same command, which asks the probes again and judges the item."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "murgat", "score", str(_input(tmp_path)), "--media-root", str(example_media),
           "--judge", "openai:m", "--retries", "0", "--out", str(out), "--quiet", "--json", "--probes", "on"]
    with StandIn() as server:
        server.honest, server.wire, server.hang_s = True, _probes_only("hang"), 60
        proc = subprocess.Popen([*cmd, "-J", f"base_url={server.base_url}"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):  # bounded: at most a minute for the probes to reach the server
                if server.requests or proc.poll() is not None:
                    break
                time.sleep(0.1)
            assert server.requests and all(_is_probe(b) for b in server.requests)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        assert not (out / "results.jsonl").exists()
        server.wire = None
        done = subprocess.run([*cmd, "-J", f"base_url={server.base_url}"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert record["error"] is None and record["scores"]["murgat_s"] is not None
    assert _summary(out)["extra"]["probes"]["judges"][0]["passed"] == 12


def test_judge_identity_warnings_are_printed_not_only_kept(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: a floating alias (or a model that changed mid-run) was said in summary.json only."""
    out = tmp_path / "run"
    with StandIn() as server:
        server.honest = True
        code = main(["score", str(_input(tmp_path)), "--media-root", str(example_media), "--judge", "openai:m-latest",
                     "-J", f"base_url={server.base_url}", "--retries", "0", "--out", str(out), "--quiet", "--json",
                     "--probes", "off"])
    assert code == 0
    err = capsys.readouterr().err
    kept = [w for i in _summary(out)["extra"]["judge_identity"] for w in i["warnings"]]
    assert kept and any("floating alias" in w for w in kept)
    assert all(f"warning: {w}" in err for w in kept) and err.count("is a floating alias") == 1
