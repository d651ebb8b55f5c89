"""Every option of every command says what it does, and shows its default."""

from __future__ import annotations

import argparse

import pytest

from murgat.cli import build_parser, main


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    out = []

    def walk(prefix: str, p: argparse.ArgumentParser) -> None:
        out.append((prefix, p))
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    walk(f"{prefix} {name}".strip(), sp)

    walk("", build_parser())
    return out


def test_every_option_has_help() -> None:
    missing = [f"{name}: {a.option_strings or a.dest}" for name, p in _parsers() for a in p._actions
               if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction) and not a.help]
    assert not missing, missing


def test_defaults_are_shown(capsys) -> None:
    try:
        main(["score", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    assert "alce (default)" in text and "(default: 8)" in text and "(default: 120.0)" in text


def test_top_level_help_says_what_murgat_is(capsys) -> None:
    try:
        main(["--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert "grounded in the exact video" in out and out.count("  murgat ") >= 3


def test_bad_effort_is_an_error_naming_the_choices(tmp_path, example_media, capsys) -> None:
    inp = tmp_path / "i.jsonl"
    inp.write_text('{"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}\n')
    for extra in ([], ["--dry-run"]):
        try:
            code = main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--effort", "hgih",
                         "--out", str(tmp_path / "r"), *extra])
        except SystemExit as exc:  # argparse's own usage error
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and "hgih" in err and "minimal" in err and "high" in err


def test_progress_bar_readable_at_80_columns() -> None:
    import io

    from rich.console import Console

    from murgat.engine.progress import item_progress

    buf = io.StringIO()
    con = Console(file=buf, width=80, force_terminal=True, color_system=None)
    prog = item_progress("score", disable=False, con=con)
    task = prog.add_task("items", total=500, completed=123,
                         stats="calls 4012 · hits 37 · retries 3 · errors 0 · tokens 1234567 · $0.1234")
    prog.update(task)
    con.print(prog.get_renderable())
    line = next(ln for ln in buf.getvalue().splitlines() if "score" in ln)
    assert len(line) <= 80 and "123/500" in line and "0:00:0" in line


def test_citations_table_shows_bracketed_citations(capsys) -> None:
    assert main(["citations", "The man waves [visual, 00:01:02.5]."]) == 0
    out = capsys.readouterr().out
    assert "[visual, 00:01:02.5]" in out and "62.5" in out


def test_every_command_parser_is_made_from_its_settings_model() -> None:
    """Each command's parser (every one that runs something, nested ones such as ``media probe``
    and ``gold import nextgqa`` too) was made from a settings model, and offers exactly its fields:
    no option declared beside the model, no field left off the command line."""
    from murgat.engine.options import Settings, flag_of

    checked = []
    for name, p in _parsers():
        if p._defaults.get("func") is None or any(isinstance(a, argparse._SubParsersAction) for a in p._actions):
            continue  # the top level, and a parent such as `murgat judge` that only lists its subcommands
        model = p._defaults.get("settings_model")
        assert isinstance(model, type) and issubclass(model, Settings), f"murgat {name}: parser built by hand"
        assert model.command == name, (name, model.command)
        fields = model.model_fields.items()
        options = {n: flag_of(n, i) for n, i in fields if not (i.json_schema_extra or {}).get("positional")}
        positionals = [n for n, i in fields if (i.json_schema_extra or {}).get("positional")]
        offered = {a.dest: a.option_strings for a in p._actions  # the hidden old --executor spelling aside
                   if a.option_strings and a.help != argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)}
        assert set(offered) == set(options), (name, set(offered) ^ set(options))
        assert all(flag in offered[n] for n, flag in options.items()), name
        assert [a.dest for a in p._actions if not a.option_strings] == positionals, name
        checked.append(name)
    assert len(checked) >= 24 and {"citations", "media evidence", "gold import rextime", "calibrate"} <= set(checked)


def test_help_of_a_model_made_parser_keeps_percent_signs_and_defaults(capsys) -> None:
    """A field's description is its help: a ``%`` in it is shown as written (argparse would read it
    as a format), and a default worth saying is appended once."""
    try:
        main(["calibrate", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    assert "(0.05: 95%) (default: 0.05)" in text and "(default: 10000)" in text


@pytest.mark.parametrize("argv", [
    ["summarize", "r", "--bootstrap", "0"], ["summarize", "r", "--seed", "-1"], ["summarize", "r", "--bootstrap", "1000000"],
    ["ground", "r.jsonl", "--gold", "g", "--attributed-threshold", "1.5"],
    ["ground", "r.jsonl", "--gold", "g", "--recall-threshold", "nan"],
    ["ground", "r.jsonl", "--gold", "g", "--end-tolerance", "inf"],
    ["calibrate", "--human", "h", "--bootstrap", "0"], ["calibrate", "--human", "h", "--alpha", "nan"],
    ["calibrate", "--human", "h", "--attributed-threshold", "2"], ["calibrate", "--human", "h", "--task", "steps"],
    ["media", "evidence", "f", "(visual, 0:01)", "--out", "o", "--max-frames", "0"],
    ["media", "evidence", "f", "(visual, 0:01)", "--out", "o", "--pad", "nan"], ["media", "ocr", "f", "--fps", "x"],
    ["annotate", "r", "--annotator", "a", "--sample", "2", "--seed", "a b"], ["validate", "i", "--max-response-chars", "0"],
    ["export", "r", "--format", "xlsx"], ["view", "r", "--by"], ["gold", "import", "rextime", "--items", "i"],
])
def test_a_bad_value_of_any_command_is_argparses_exit_2(argv: list[str], capsys) -> None:
    """The bounds, choices and required options the hand-built parsers had (some patched in by name)
    are the fields' now: still refused by argparse before any work, exit 2, naming the option."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert exc.value.code == 2 and "error: " in last and ("argument" in last or "required" in last), last
