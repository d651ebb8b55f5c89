"""Options declared once (#21): a shared option has one name, help and check in every command;
only the documented role defaults differ."""

from __future__ import annotations

import argparse

import pytest

from murgat.cli import build_parser
from murgat.engine import options

COMMANDS = ("score", "faithfulness", "reflect", "program", "generate", "sweep")


def _actions() -> dict[str, dict[str, argparse.Action]]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {c: {f: a for a in sub.choices[c]._actions for f in a.option_strings} for c in COMMANDS}


def _shared_flags() -> dict[str, str]:
    out = {}
    for model in (options.Requests, options.Selection, options.Place, options.Folder):
        for name, info in model.model_fields.items():
            out[options._flag(name, info)] = name
    return out


def test_a_shared_option_is_the_same_everywhere() -> None:
    acts = _actions()
    for flag, name in _shared_flags().items():
        seen = {c: a[flag] for c, a in acts.items() if flag in a}
        helps = {(a.help or "").replace(" (default: %(default)s)", "") for a in seen.values()}
        assert len(helps) == 1, (flag, helps)
        if name not in options.ROLE_DEFAULTS:
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


def test_only_role_defaults_may_differ() -> None:
    with pytest.raises(ValueError, match="one default in every command"):
        options.add(argparse.ArgumentParser(), options.Requests, defaults={"temperature": 0.7})


def test_settings_are_built_from_the_arguments() -> None:
    p = argparse.ArgumentParser()
    options.add(p, options.Requests)
    req = options.build(options.Requests, p.parse_args(["--max-tokens", "77", "--temperature", "0.7", "--retries", "0"]))
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
