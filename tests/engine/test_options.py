"""Options declared once (#21): each command's settings are one pydantic model, its parser is made
from the fields, and an option that appears in several commands has one name, help, default and
check everywhere; only the documented role defaults and per-command meanings differ."""

from __future__ import annotations

import argparse

import pytest

from murgat.cli import build_parser
from murgat.engine import options

COMMANDS = ("score", "faithfulness", "reflect", "program", "generate", "sweep")


def _actions() -> dict[str, dict[str, argparse.Action]]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {c: {f: a for a in sub.choices[c]._actions for f in a.option_strings} for c in COMMANDS}


def _settings() -> dict[str, type[options.Settings]]:
    from murgat.settings.faithfulness import FaithfulnessSettings
    from murgat.settings.generate import GenerateSettings
    from murgat.settings.program import ProgramSettings
    from murgat.settings.reflect import ReflectSettings
    from murgat.settings.score import ScoreSettings
    from murgat.settings.sweep import SweepSettings

    return {m.command: m for m in (ScoreSettings, FaithfulnessSettings, ReflectSettings, ProgramSettings,
                                   GenerateSettings, SweepSettings)}


def _shared_flags() -> dict[str, str]:
    out = {}
    for model in (options.Requests, options.Effort, options.Selection, options.Place, options.Folder, options.Pace,
                  options.Undetermined, options.Output, options.Stats, options.RunOn):
        for name, info in model.model_fields.items():
            out[options.flag_of(name, info)] = name
    return out


def test_every_command_is_its_settings_model() -> None:
    """Each parser offers exactly its settings' fields (nothing declared beside the model), and
    parsing gives back a settings object with the parsed values."""
    acts = _actions()
    for command, model in _settings().items():
        flags = {options.flag_of(n, i) for n, i in model.model_fields.items() if not (i.json_schema_extra or {})
                 .get("positional")}
        offered = {f for f in acts[command] if f.startswith("--")} - {"--help"}
        assert offered - {"--executor"} == flags - {"--executor"}, (command, offered ^ flags)  # hidden old spelling


def test_one_option_one_meaning_across_commands() -> None:
    """Any field two commands share: the same flag, help and default (role defaults and the
    per-command fields of options.PER_COMMAND excepted)."""
    seen: dict[str, tuple[str, object, str, str]] = {}
    for command, model in _settings().items():
        for name, info in model.model_fields.items():
            mine = (options.flag_of(name, info), info.get_default(call_default_factory=True), info.description or "",
                    command)
            if name in seen and name not in options.PER_COMMAND:
                other = seen[name]
                assert mine[0] == other[0], (name, command, other[3])
                if name not in options.ROLE_DEFAULTS:
                    assert mine[1:3] == other[1:3], (name, command, other[3], mine[1:3], other[1:3])
            seen.setdefault(name, mine)


def test_parsed_arguments_and_keyword_settings_agree(tmp_path) -> None:
    """The command line and the Python API make the same settings object from the same values."""
    from murgat.settings.score import ScoreSettings

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    args = sub.choices["score"].parse_args(["in.jsonl", "--judge", "embedded", "--out", "o", "-J", "a=b", "--json",
                                            "--no-sound-events", "--max-tokens", "77", "--run-on", "ray"])
    from_cli = ScoreSettings.from_args(args)
    from_api = ScoreSettings(input="in.jsonl", judge="embedded", out="o", judge_option=["a=b"], print_json=True,
                             sound_events=False, max_tokens=77, run_on="ray")
    assert from_cli == from_api
    with pytest.raises(ValueError, match="max_tokenz"):  # a typo is refused, not ignored
        ScoreSettings(input="in.jsonl", judge="embedded", out="o", max_tokenz=5)
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        ScoreSettings(input="in.jsonl", judge="embedded", out="o", ray_group_size=0)


def test_a_shared_option_is_the_same_everywhere() -> None:
    acts = _actions()
    for flag, name in _shared_flags().items():
        seen = {c: a[flag] for c, a in acts.items() if flag in a}
        helps = {(a.help or "").replace(" (default: %(default)s)", "") for a in seen.values()}
        if name not in options.ROLE_DEFAULTS:  # a role default says which role it is for
            assert len(helps) == 1, (flag, helps)
            assert len({repr(a.default) for a in seen.values()}) == 1, (flag, {c: a.default for c, a in seen.items()})


def test_the_old_inconsistencies_are_gone() -> None:
    acts = _actions()
    assert {acts[c]["--max-retry-time"].default for c in COMMANDS if "--max-retry-time" in acts[c]} == {600.0}
    assert "--run-on" in acts["program"] and "--run-on" in acts["reflect"] and "--run-on" in acts["score"]
    assert acts["reflect"]["--from"].metavar == "RESPONSES"
    assert "--segmentation" not in acts["reflect"]  # reflect walks sentences; it no longer accepts and ignores it


def test_help_never_says_default_none(capsys) -> None:
    for c in COMMANDS:
        with pytest.raises(SystemExit):
            build_parser().parse_args([c, "--help"])
        out = capsys.readouterr().out
        assert "(default: None)" not in out and "FROM_" not in out, c


def test_settings_are_built_from_the_arguments() -> None:
    class Probe(options.Settings, options.Requests):
        command = "probe"

    p = argparse.ArgumentParser()
    options.add_settings(p, Probe)
    req = Probe.from_args(p.parse_args(["--max-tokens", "77", "--temperature", "0.7", "--retries", "0"]))
    cfg = req.generate_config()
    assert (cfg.max_tokens, cfg.temperature, cfg.retries) == (77, 0.7, 0)
    with pytest.raises(SystemExit):
        p.parse_args(["--concurrency", "0"])


@pytest.mark.parametrize("bad", [["--attributed-threshold", "nan"], ["--attributed-threshold", "1.5"], ["--seed", "-1"],
                                 ["--bootstrap", "1000000000"], ["--fps", "nan"], ["--pad", "inf"],
                                 ["--timeout", "nan"]])
def test_values_that_only_fail_late_are_refused_at_once(tmp_path, bad, capsys) -> None:
    """Fault-finding pass: nan thresholds broke summary.json after all the work; --seed -1 a numpy
    traceback at the end; --bootstrap 10**9 never finished; nan --fps printed a pydantic dump."""
    from murgat.cli import main

    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": "a", "media": "x.mp4", "response": "r"}\n')
    with pytest.raises(SystemExit) as exc:
        main(["score", str(inp), "--judge", "embedded", "--out", str(tmp_path / "run"), *bad])
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert exc.value.code == 2 and last.startswith("murgat score: error: argument") and "pydantic" not in err


def test_help_of_a_no_flag_shows_no_default(capsys) -> None:
    """Fault-finding pass: ``--no-sound-events … (default: True)`` read as "sound events are off by default"."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["score", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--no-sound-events" in out and "cited audio (default: True)" not in out


def test_each_command_sends_its_own_request_settings() -> None:
    """The request settings of a run are the command's own settings object (its role default for
    --max-tokens, its --effort), whichever command builds them."""
    from murgat.commands.score.command import score_config
    from murgat.engine.options import judging_config
    from murgat.settings.faithfulness import FaithfulnessSettings
    from murgat.settings.generate import GenerateSettings
    from murgat.settings.program import ProgramSettings
    from murgat.settings.score import ScoreSettings

    score = score_config(ScoreSettings(input="i", judge="embedded", out="o", effort="LOW", retries=1)).generate
    assert (score.max_tokens, score.reasoning_effort, score.retries) == (1024, "low", 1)
    faith = judging_config(FaithfulnessSettings(input="i", judge="j", out="o", effort="high")).generate
    assert (faith.max_tokens, faith.reasoning_effort) == (2048, "high")
    prog = judging_config(ProgramSettings(data="d", planner="p", out="o", max_tokens=77, temperature=0.7))
    assert (prog.generate.max_tokens, prog.generate.temperature, prog.generate.reasoning_effort) == (77, 0.7, None)
    gen = GenerateSettings(data="d", model="m", out="o", effort="medium")
    assert (gen.generate_config().max_tokens, gen.generate_config().reasoning_effort) == (4096, "medium")
    assert gen.generate_config("low").reasoning_effort == "low"  # sweep: the effort of this round


def test_the_score_run_of_another_command_inherits_place_and_run_settings() -> None:
    """sweep and program --score make their score settings in one way: the parent's media place,
    where to run, --overwrite/--retry-errors and quietness; scoring's defaults otherwise."""
    from murgat.settings.score import ScoreSettings
    from murgat.settings.sweep import SweepSettings

    parent = SweepSettings(data="d", model="m", judge="j", out="o", media_root="/v", allow_media_outside_root=True,
                           run_on="ray", ray_group_size=4, overwrite=True, retry_errors=True, print_json=True,
                           max_tokens=77)
    s = ScoreSettings.scoring_of(parent, input="r.jsonl", judge="j", judge_option=["a=1"], out="o/run", cache="c")
    assert (s.media_root, s.allow_media_outside_root, s.run_on, s.ray_group_size) == ("/v", True, "ray", 4)
    assert s.overwrite and s.retry_errors and s.quiet and not s.print_json
    assert s.max_tokens == 1024 and s.judge_option == ["a=1"]  # the model's request settings are not the judge's


def test_item_concurrency_none_means_each_commands_default() -> None:
    s = _settings()
    assert s["score"](input="i", judge="j", out="o", item_concurrency=None).item_concurrency is None  # from --concurrency
    assert s["program"](data="d", planner="p", out="o", item_concurrency=None).item_concurrency == 4
    assert s["faithfulness"](input="i", judge="j", out="o", item_concurrency=None).item_concurrency == 8
    assert s["generate"](data="d", model="m", out="o", item_concurrency=2).item_concurrency == 2


def test_the_cache_of_a_run() -> None:
    from pathlib import Path

    s = _settings()
    assert s["reflect"](data="d", model="m", detector="x", out="o").cache_path() == Path("o") / "cache.sqlite"
    assert s["program"](data="d", planner="p", out="o", cache="shared.sqlite").cache_path() == Path("shared.sqlite")
