"""``murgat judge check``: the table and exit status, and the probes of the embedded and replay judges.

The embedded judge reads what Whisper hears and what OCR reads in the probe clip (real ASR, real
OCR): it passes every hearing, seeing and time probe and abstains on the one-modality and order
probes (it cannot tell a modality's absence from a claim it cannot check, and it reads no order from
on-screen text). Replay cassettes recorded from the stand-in serve the probes back: the honest
stand-in's pass, the faulty ones' are caught the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.commands.judge_check.check import run_judge_check
from murgat.settings.judge_check import JudgeCheckSettings
from tests.standin import StandIn


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    code = main(["judge", "check", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def test_the_embedded_judge_hears_and_reads_and_abstains_where_it_cannot(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, _ = _check(capsys, "--judge", "embedded")
    outcome = {r["probe"]: r["outcome"] for r in doc["results"]}
    assert code == 0
    assert {p for p, o in outcome.items() if o == "pass"} == {
        "hearing", "hearing_other", "seeing", "seeing_other", "time_seeing", "time_seeing_elsewhere", "time_hearing",
        "time_hearing_elsewhere"}
    assert {p for p, o in outcome.items() if o == "abstain"} == {"modality_visual", "modality_audio", "order",
                                                                 "order_reversed"}
    # the table names every probe; a second check is served from the cache
    assert main(["judge", "check", "--judge", "embedded"]) == 0
    table = capsys.readouterr().out
    assert "time_hearing_elsewhere" in table and "8 passed, 0 failed, 4 abstained" in table
    assert "12 from the cache" in table


def test_a_judge_that_cannot_label_steps_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", "check", "--judge", "embedded", "--stage", "faith-step"]) == 2
    assert "cannot answer faith_step" in capsys.readouterr().err


def test_cassettes_recorded_from_the_stand_in_are_judged_like_it(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    honest, deaf = tmp_path / "honest.jsonl", tmp_path / "deaf.jsonl"
    with StandIn() as server:
        server.honest = True
        url = f"base_url={server.base_url}"
        assert main(["judge", "check", "--judge", "openai:probe-model", "-J", url, "--record", str(honest),
                     "--cache", str(tmp_path / "a.sqlite")]) == 0
        server.fault = "drop_audio"
        assert main(["judge", "check", "--judge", "openai:probe-model", "-J", url, "--record", str(deaf),
                     "--cache", str(tmp_path / "b.sqlite")]) == 1
    capsys.readouterr()
    code, doc, _ = _check(capsys, "--judge", f"replay:{honest}", "--cache", str(tmp_path / "c.sqlite"))
    assert code == 0 and all(r["outcome"] == "pass" for r in doc["results"])
    code, doc, _ = _check(capsys, "--judge", f"replay:{deaf}", "--cache", str(tmp_path / "d.sqlite"))
    assert code == 1
    assert {r["probe"] for r in doc["results"] if r["outcome"] == "fail"} == {"hearing", "time_hearing"}


def test_a_cassette_without_probes_leaves_them_unanswered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, doc, _ = _check(capsys, "--judge", f"replay:{empty}", "--cache", str(tmp_path / "c.sqlite"))
    assert code == 1
    assert {r["outcome"] for r in doc["results"]} == {"error"}
    assert all("no recorded answer" in r["error"] for r in doc["results"])
    # the table's lines say nothing was checked, not what a wrong answer would mean ("the server may drop audio")
    assert main(["judge", "check", "--judge", f"replay:{empty}", "--cache", str(tmp_path / "c.sqlite")]) == 1
    out = capsys.readouterr().out
    assert "hearing: no readable answer: this probe checked nothing (replay:" in " ".join(out.split())
    assert "may drop audio" not in out


def test_an_unreachable_judge_exits_4(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["judge", "check", "--judge", "openai:m", "-J", "base_url=http://127.0.0.1:9/v1", "--retries", "1",
                 "--cache", str(tmp_path / "c.sqlite")])
    assert code == 4
    assert "cannot be reached" in capsys.readouterr().err


def test_the_python_api_returns_the_report(tmp_path: Path) -> None:
    with StandIn() as server:
        server.honest = True
        sink: dict = {}
        s = JudgeCheckSettings(judge="openai:probe-model", judge_option=[f"base_url={server.base_url}"],
                               cache=str(tmp_path / "c.sqlite"), probe_seed=4)
        assert run_judge_check(s, echo=False, sink=sink) == 0
    report = sink["report"]
    assert report.seed == 4 and report.ok and len(report.results) == 12
    # another seed is another clip: other numbers and words, other cache keys
    from murgat.judging.probes.store import probe_clip

    assert report.clip_sha256 == probe_clip(4).sha256 != probe_clip(0).sha256


def test_judge_check_builds_the_configuration_score_would() -> None:
    """The entail path is score's: the same builder, so the same evidence, prompts and requests."""
    from murgat.commands.judge_check.check import entail_config, faith_settings
    from murgat.commands.score.command import score_config
    from murgat.engine.options import judging_config
    from murgat.settings.score import ScoreSettings

    opts = {"fps": 2.0, "max_frames": 4, "pad": 0.5, "visual_as": "clip", "entail_variant": "json",
            "judge_option": ["video=clip"], "max_tokens": 77, "effort": "low", "retries": 2}
    mine = entail_config(JudgeCheckSettings(judge="openai:m", **opts))
    score = score_config(ScoreSettings(input="x.jsonl", out="o", judge="openai:m", **opts))
    assert mine.model_dump(exclude={"versions"}) == score.model_dump(exclude={"versions"})
    default = entail_config(JudgeCheckSettings(judge="openai:m"))
    scored = score_config(ScoreSettings(input="x", out="o", judge="openai:m"))
    # the one difference: a probe is asked once (one attempt) unless --retries says otherwise
    assert default.generate.retries == 0 and scored.generate.retries > 0
    assert default.sized_answers  # and its answer budget is sized to each probe's question
    assert default.model_dump(exclude={"versions", "generate", "sized_answers"}) == scored.model_dump(
        exclude={"versions", "generate", "sized_answers"})
    assert default.generate.model_dump(exclude={"retries"}) == scored.generate.model_dump(exclude={"retries"})
    faith = judging_config(faith_settings(JudgeCheckSettings(judge="openai:m", stage="faith-step")))
    assert faith.evidence.max_frames == 16  # faithfulness' own defaults for its requests
    assert (faith.generate.max_tokens, faith.generate.timeout_s) == (2048, 300.0)
    assert (default.generate.max_tokens, default.generate.timeout_s) == (1024, 120.0)


def test_a_server_that_never_answers_some_probes_ends_at_the_deadline_and_names_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One attempt per probe and one deadline for the whole check: requests with audio hang on the
    server (it never answers them), the check still ends, and says which probes it could not finish."""

    def hang_audio(prompt: str, body: dict) -> str | None:
        return "hang" if "input_audio" in json.dumps(body) else None

    with StandIn() as server:
        server.honest, server.wire, server.hang_s = True, hang_audio, 120
        code, doc, _ = _check(capsys, "--judge", "openai:probe-model", "-J", f"base_url={server.base_url}",
                              "--cache", str(tmp_path / "c.sqlite"), "--deadline", "4", "--timeout", "100")
        audio_requests = sum(1 for b in server.requests if "input_audio" in json.dumps(b))
        server.kill()
    j = doc["judges"][0]
    assert code == 1 and sorted(j["unfinished"]) == sorted(
        ["hearing", "hearing_other", "time_hearing", "time_hearing_elsewhere", "modality_audio"])
    assert audio_requests == 5  # one attempt each, no retry
    by = {r["probe"]: r for r in doc["results"]}
    assert by["seeing"]["outcome"] == "pass" and by["hearing"]["outcome"] == "error"
    assert "deadline" in by["hearing"]["error"]
    assert [a["modality"] for a in j["tokens"]] == ["image"] and not j["dropped"]  # no audio answer to account


@pytest.mark.parametrize("stage", ["faith-step", "faith-chain"])
def test_the_faithfulness_probes_end_at_the_deadline_too(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         stage: str) -> None:
    """The step labeller's probes keep the same one deadline: with every request that carries audio
    hanging on the server, the check ends and names the probes it could not finish (the visual
    ones are still answered where their requests carry no audio)."""

    def hang_audio(prompt: str, body: dict) -> str | None:
        return "hang" if "input_audio" in json.dumps(body) else None

    with StandIn() as server:
        server.honest, server.wire, server.hang_s = True, hang_audio, 120
        code, doc, _ = _check(capsys, "--judge", "openai:probe-model", "-J", f"base_url={server.base_url}",
                              "--stage", stage, "--cache", str(tmp_path / "c.sqlite"), "--deadline", "4",
                              "--timeout", "100")
        server.kill()
    j = doc["judges"][0]
    by = {r["probe"]: r for r in doc["results"]}
    assert code == 1 and j["unfinished"], doc
    assert {p for p in j["unfinished"]} <= set(by)
    for name in j["unfinished"]:
        assert by[name]["outcome"] == "error" and "deadline" in by[name]["error"]
