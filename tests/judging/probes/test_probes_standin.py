"""The probes against the stand-in OpenAI-compatible server (real HTTP, murgat's real client).

With ``honest = True`` the stand-in perceives: it reads the numbers in the images it receives and
hears the words in the audio it receives (:class:`tests.standin.Senses`). Each fault of a serving
stack it can play (audio dropped, images dropped, frames reordered, media dropped altogether) must be
caught by the probes that check for it and by no other; a judge that says "yes" to everything is
caught by the "no" probes; an honest one passes all.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest

from murgat.commands.judge_check.check import entail_config
from murgat.judges import make_judge
from murgat.judges.cache import ResponseCache
from murgat.judging.probes.paths import EntailPath, FaithPath
from murgat.judging.probes.runner import gate_exit, probes_before_run, require_message, run_probes
from murgat.settings.judge_check import JudgeCheckSettings
from tests.standin import StandIn, prompt_of

ALL = {"hearing", "hearing_other", "seeing", "seeing_other", "time_seeing", "time_seeing_elsewhere", "time_hearing",
       "time_hearing_elsewhere", "modality_visual", "modality_audio", "order", "order_reversed"}
AUDIO_CITED = {"hearing", "hearing_other", "time_hearing", "time_hearing_elsewhere", "modality_audio"}


def _judge(server: StandIn, cache: Any = None, **opts: str) -> Any:
    return make_judge("openai:probe-model", {"base_url": server.base_url, **opts}, cache=cache)


def _probe(server: StandIn, cache: Any = None, **opts: str) -> Any:
    cfg = entail_config(JudgeCheckSettings(judge="openai:probe-model"))
    judge = _judge(server, cache, **opts)

    async def go() -> Any:
        try:
            return await run_probes([EntailPath(judge, cfg)])
        finally:
            await judge.aclose()

    return asyncio.run(go()), judge


def _failed(report: Any) -> set[str]:
    return {r.probe for r in report.failures()}


def test_an_honest_judge_passes_every_probe_and_the_account_matches_the_wire() -> None:
    with StandIn() as server:
        server.honest = True
        report, judge = _probe(server)
    assert report.ok and {r.probe for r in report.results if r.outcome == "pass"} == ALL
    # the 12 probes and the token account's two twins (hearing and seeing without their media, text only)
    assert len(server.requests) == 14 and report.judges[0].calls == 14
    twins = [b for b in server.requests if all(p["type"] == "text" for p in b["messages"][-1]["content"])]
    assert len(twins) == 2 and all(b["max_tokens"] == 1 for b in twins)
    acc = {a.modality: a for a in report.judges[0].tokens}
    assert acc["audio"].counted is True and acc["image"].counted is True and not report.judges[0].dropped
    assert acc["audio"].with_media - acc["audio"].without_media == 25  # the stand-in's count of one audio part
    by = {r.probe: r for r in report.results}
    assert by["hearing"].sent.audio_parts == 1 and by["hearing"].sent.audio_s == pytest.approx(2.0)
    assert by["hearing"].sent.images == 0
    assert by["seeing"].sent.image_sizes == [(320, 180)] and by["seeing"].sent.frame_labels == ["[visual 0:02]"]
    assert by["order"].sent.images == 8
    assert by["order"].sent.frame_labels == [f"(frame at {t}.00 s)" for t in range(8)]
    # the lean client's body size is the body the server read, byte for byte
    from collections import Counter

    sizes = Counter(r.sent.request_bytes for r in report.results)
    assert not sizes - Counter(server.body_sizes) and len(server.body_sizes) == 14  # the probes' bodies, and two twins
    assert all(r.sent.bytes_exact for r in report.results)
    totals = judge.sent_totals
    assert totals.requests == 14 and totals.audio_parts == 5 and totals.audio_s == pytest.approx(10.0)
    assert totals.images == 1 * 4 + 3 + 8 * 2 and totals.image_sizes == {"320x180": 23}
    ident = report.judges[0].identity
    assert ident.reported == {"probe-model": 14} and ident.system_fingerprints == {"fp_standin": 14}
    assert not ident.warnings


FAULTS = {
    "drop_audio": {"hearing", "time_hearing"},
    "drop_images": {"seeing", "time_seeing", "order"},
    "shuffle_frames": {"order", "order_reversed"},
    "text_only": {"hearing", "seeing", "time_seeing", "time_hearing", "order"},
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_of_a_server_is_caught_by_its_probes(fault: str) -> None:
    with StandIn() as server:
        server.honest, server.fault = True, fault
        report, _ = _probe(server)
    assert not report.ok
    assert _failed(report) == FAULTS[fault]
    assert gate_exit(report.model_copy(update={"setting": "require"})) == 2
    # the server's own prompt-token counts name what it dropped, whatever the model answered
    said = " ".join(report.judges[0].dropped)
    assert ("deaf (audio parts not counted)" in said) is (fault in DEAF)
    assert ("blind (images not counted)" in said) is (fault in BLIND)
    assert ("MEDIA DROPPED BY THE SERVER" in report.headline()) is (fault in DEAF | BLIND)


DEAF, BLIND = {"drop_audio", "text_only"}, {"drop_images", "text_only"}


@pytest.mark.parametrize(("fault", "word"), [("drop_audio", "deaf"), ("drop_images", "blind")])
def test_a_server_that_drops_media_is_named_by_its_token_counts_whatever_the_model_answers(fault: str,
                                                                                            word: str) -> None:
    """A model that answers nothing readable (a tiny random checkpoint) leaves every probe unanswered,
    so no answer can tell deaf from blind; the server's prompt-token counts can, and the gate refuses."""
    with StandIn() as server:
        server.fault, server.script = fault, lambda prompt, body: "\u2581\u2581 lorem"
        report, _ = _probe(server)
    j = report.judges[0]
    assert j.errors == 12 and j.passed == 0  # every probe unanswered
    assert len(j.dropped) == 1 and j.dropped[0].startswith(word), j.dropped
    assert f"MEDIA DROPPED BY THE SERVER: openai:probe-model (entail): {word}" in report.headline()
    assert gate_exit(report.model_copy(update={"setting": "require"})) == 2


def test_a_judge_that_answers_yes_to_everything_is_caught_by_the_no_probes() -> None:
    with StandIn() as server:  # the plain stand-in: "yes" to any question, whatever it is sent
        report, _ = _probe(server)
    assert _failed(report) == {"hearing_other", "seeing_other", "time_seeing_elsewhere", "time_hearing_elsewhere",
                               "modality_visual", "modality_audio", "order_reversed"}


def test_a_server_that_counts_no_audio_tokens_is_warned_about(capsys: pytest.CaptureFixture[str]) -> None:
    with StandIn() as server:
        server.honest, server.fault, server.audio_tokens = True, "drop_audio", True
        report, judge = _probe(server)
    err = capsys.readouterr().err
    assert err.count("the server may have dropped the audio") == 1  # once per judge, every case counted
    assert judge.stats.media_warnings == len(AUDIO_CITED) == judge.sent_totals.media_warnings
    assert {r.probe for r in report.results if r.sent is not None and r.sent.audio_parts} == AUDIO_CITED
    with StandIn() as server:
        server.honest, server.audio_tokens = True, True
        _, judge = _probe(server)
    assert judge.stats.media_warnings == 0 and "dropped" not in capsys.readouterr().err


def test_a_rerun_asks_the_judge_nothing(tmp_path: Path) -> None:
    with StandIn() as server:
        server.honest = True
        cache = ResponseCache(tmp_path / "cache.sqlite")
        first, _ = _probe(server, cache)
        cache.close()
        cache = ResponseCache(tmp_path / "cache.sqlite")
        again, judge = _probe(server, cache)
        cache.close()
    assert len(server.requests) == 14  # all from the first run (the 12 probes and the two twins)
    assert again.judges[0].calls == 0 and again.judges[0].cache_hits == 12
    assert [r.outcome for r in again.results] == [r.outcome for r in first.results]
    assert judge.identity().from_cache == {"probe-model": 14}
    # the cached answers keep their token counts: the account is decided again, without a request
    assert [(a.modality, a.counted, a.twin_calls) for a in again.judges[0].tokens] == [("audio", True, 0),
                                                                                       ("image", True, 0)]


def test_probes_off_send_nothing_and_on_warns_loudly(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = entail_config(JudgeCheckSettings(judge="openai:probe-model"))
    with StandIn() as server:
        judge = _judge(server)
        assert asyncio.run(probes_before_run("off", [EntailPath(judge, cfg)])) is None
        assert server.requests == []
        server.honest, server.fault = True, "drop_audio"
        report = asyncio.run(probes_before_run("on", [EntailPath(judge, cfg)]))
    err = capsys.readouterr().err
    assert "WARNING: JUDGE PROBES FAILED: 2/12" in err and "hearing" in err
    assert gate_exit(report) is None  # on: the run goes on
    assert report.warning_lines()[0].startswith("WARNING")


def test_require_stops_a_run_whose_judge_fails(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = entail_config(JudgeCheckSettings(judge="openai:probe-model"))
    with StandIn() as server:
        server.honest, server.fault = True, "drop_images"
        report = asyncio.run(probes_before_run("require", [EntailPath(_judge(server), cfg)]))
        assert gate_exit(report) == 2
        # the details at once; the headline is the error the run stops with, printed last (require_message)
        err = capsys.readouterr().err
        assert "  seeing [openai:probe-model, entail]" in err and "JUDGE PROBES FAILED" not in err
        assert require_message(report).startswith("JUDGE PROBES FAILED: 3/12")
        server.fault = None
        report = asyncio.run(probes_before_run("require", [EntailPath(_judge(server), cfg)]))
        assert gate_exit(report) is None and report.ok


def test_sound_leaking_into_a_visual_citation_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-modality probe checks murgat's own isolation: evidence that carried the sound track of a
    visual segment (what a clip cut with its audio would do) is caught."""
    import murgat.judging.entail as stages
    from murgat.judges.types import AudioPart
    from murgat.media.audio import load_audio

    real = stages.evidence_parts

    def leaky(ev: Any, with_text: bool, box_view: Any = "both") -> list[Any]:
        parts = real(ev, with_text, box_view)
        for s in ev.segments:
            if s.modality == "visual" and s.end > s.start:
                track = load_audio(ev.media_path)
                parts.append(AudioPart(samples=track.slice(s.start, s.end), start=s.start, end=s.end))
        return parts

    monkeypatch.setattr(stages, "evidence_parts", leaky)
    with StandIn() as server:
        server.honest = True
        report, _ = _probe(server)
    assert _failed(report) == {"modality_visual"}


def test_visual_ranges_sent_as_clips_are_probed_too() -> None:
    with StandIn() as server:
        server.honest = True
        report, _ = _probe(server, video="clip")
    by = {r.probe: r for r in report.results}
    assert by["order"].sent.video_clips == 1 and by["order"].sent.images == 0
    assert report.ok, report.headline()


@pytest.mark.parametrize("granularity", ["step", "chain"])
def test_step_labelling_is_probed_through_the_labeller(granularity: str) -> None:
    from murgat.core.steps import StepLabel
    from murgat.judging.pool import CallPool
    from murgat.judging.steps import Labeller

    cfg = entail_config(JudgeCheckSettings(judge="openai:probe-model"))
    with StandIn() as server:
        server.honest = True
        judge = _judge(server)
        path = FaithPath(Labeller(judge=judge, pool=CallPool(), granularity=granularity), cfg, StepLabel)
        report = asyncio.run(run_probes([path]))
        server.fault = "drop_audio"
        dropped = asyncio.run(run_probes([FaithPath(Labeller(judge=_judge(server), pool=CallPool(),
                                                             granularity=granularity), cfg, StepLabel)]))
    assert report.judges[0].stage == f"faith_{granularity}"
    assert report.ok, report.headline()
    skipped = {r.probe for r in report.results if r.outcome == "skipped"}
    if granularity == "step":
        assert not skipped
    else:  # the whole clip is shown: time and one-modality probes mean nothing there
        assert skipped == {"time_seeing", "time_seeing_elsewhere", "time_hearing", "time_hearing_elsewhere",
                           "modality_visual", "modality_audio"}
    assert "hearing" in _failed(dropped)


def _chain_rows(prompt: str) -> list[tuple[int, str]]:
    import re

    m = re.search(r"Steps:\n(.*?)\n\n", prompt, re.S)
    if not m:
        return []
    return [(int(k), text) for k, _, text in (line.partition(". ") for line in m.group(1).split("\n"))]


def _blind(rule: Any) -> Any:
    """A chain labeller that never looks at the media: each step's faithfulness is ``rule(position, text)``."""
    import json

    def script(prompt: str, body: dict[str, Any]) -> str:
        if not _chain_rows(prompt):
            return "yes"
        return json.dumps({"steps": [{"index": k, "type": "perception", "modality": "visual", "faithful": rule(k, text),
                                      "reason": "blind"} for k, text in _chain_rows(prompt)]})

    return script


BLIND_RULES = {
    "by position (yes, no, yes, …)": lambda k, text: k % 2 == 0,
    "by position (no, yes, no, …)": lambda k, text: k % 2 == 1,
    "by length (short is yes)": lambda k, text: len(text) < 45,
    "by length (long is yes)": lambda k, text: len(text) >= 45,
    "always yes": lambda k, text: True,
    "always no": lambda k, text: False,
}


@pytest.mark.parametrize("rule", sorted(BLIND_RULES))
def test_a_chain_labeller_that_answers_without_looking_fails_the_chain_probes(rule: str) -> None:
    """The chain probes are several chains whose expected answers are in orders drawn from the probe
    seed: a labeller that answers by position, by length or always the same fails some probe, at any seed."""
    from murgat.core.steps import StepLabel
    from murgat.judging.pool import CallPool
    from murgat.judging.probes.probeset import N_CHAINS
    from murgat.judging.steps import Labeller

    cfg = entail_config(JudgeCheckSettings(judge="openai:probe-model"))
    for seed in (0, 1, 7):
        with StandIn() as server:
            server.script = _blind(BLIND_RULES[rule])
            path = FaithPath(Labeller(judge=_judge(server), pool=CallPool(), granularity="chain"), cfg, StepLabel)
            report = asyncio.run(run_probes([path], seed=seed))
        chains = [r for r in server.requests if _chain_rows(prompt_of(r))]
        assert len(chains) == N_CHAINS >= 2, len(server.requests)  # one request per chain
        assert not report.ok and _failed(report), (rule, seed, report.headline())


def test_chain_orders_are_seeded_balanced_and_not_alternating() -> None:
    from murgat.judging.probes.probeset import chain_orders, probe_set
    from murgat.judging.probes.store import probe_clip

    probes = [p for p in probe_set(probe_clip(0)) if p.whole_media]
    seen = set()
    for seed in range(20):
        orders = chain_orders(probes, seed)
        assert orders == chain_orders(probes, seed) and len(orders) >= 2
        for o in orders:
            assert sorted(o) == list(range(len(probes)))  # every probe in every chain: as many yes as no
            pat = [probes[i].expected for i in o]
            assert any(a == b for a, b in itertools.pairwise(pat))  # not yes, no, yes, no
        a, b = ([probes[i].expected for i in o] for o in orders[:2])
        assert sum(x != y for x, y in zip(a, b, strict=True)) >= 2
        seen.add(tuple(map(tuple, orders)))
    assert len(seen) > 10  # the orders depend on the seed
