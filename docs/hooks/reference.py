"""The documentation's generated parts, made at build time (an MkDocs hook, ``hooks:`` in mkdocs.yml).

Two pages hold a marker that this hook replaces when MkDocs reads them:

- ``<!-- murgat:command-reference -->`` (reference/commands.md): every subcommand and option of
  ``murgat --help``, walked from the parser the program itself builds, so the page can never list
  an option the program lacks or miss one it has. The run commands' options come from their
  pydantic settings models (the parser is made from the fields); the page names each command's
  settings class and marks the options that decide the work (a rerun that changes one is refused).
- ``<!-- murgat:score-record -->`` (reference/run-folder.md): the fields of a ``score`` record, from the
  pydantic models ``results.jsonl`` lines are written from (their names, types and descriptions).
- ``<!-- murgat:offline-examples -->`` (guide/offline-examples.md): the README's ```` ```bash offline ````
  block, which ``tests/test_readme_commands.py`` runs line by line; the docs show the same text
  instead of a copy that could drift.

Nothing here imports MkDocs, so ``tests/test_docs.py`` imports this file and checks what it makes.
The package paths this hook reads murgat through are the four names below, and nowhere else.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: where the program's parser and the run commands' settings are found (the one place naming modules)
PARSER = ("murgat.cli", "build_parser")
RUN_COMMANDS = ("murgat.api", "COMMANDS")
SCORE_RECORD = ("murgat.core.schema", "ResponseResult")

REFERENCE_MARK = "<!-- murgat:command-reference -->"
OFFLINE_MARK = "<!-- murgat:offline-examples -->"
RECORD_MARK = "<!-- murgat:score-record -->"
RULES_MARK = "<!-- murgat:embedded-rules -->"
#: the embedded judge's rule table (its verdict is the fold of these rules, in this order)
RULES = ("murgat.judges.embedded_rules", "rules_markdown")

#: what each command writes, by command path (the parser cannot say it; tests/test_docs.py checks that every
#: run command has an entry and that every entry names a real command)
WRITES: dict[str, list[tuple[str, str]]] = {
    "score": [("OUT/config.json", "resolved settings, prompt hashes, versions, the settings fingerprint, probes"),
              ("OUT/results.jsonl", "one record per item, appended and fsync'd: sentences, facts, citations, "
                                    "verdicts, the judge's raw answers; `error` when the item could not be scored"),
              ("OUT/summary.json", "means with 95% CIs, accuracy, strict attributed accuracy, cases, call/cache/cost "
                                   "counts"),
              ("OUT/cache.sqlite", "the judge answers (`--cache` to share one)"),
              ("OUT/report.html", "the offline viewer"),
              ("OUT/grounding/", "with `--gold`: a ground run of the same responses"),
              ("FILE", "with `--record FILE`: every answered request as a replay cassette")],
    "generate": [("OUT/responses.jsonl", "one answer per id in input order (the input of `murgat score`)"),
                 ("OUT/config.json, OUT/summary.json, OUT/cache.sqlite", "as every run folder"),
                 ("FILE.jsonl + FILE.run/", "with `--out FILE.jsonl`: the responses there, the rest of the folder "
                                            "beside it")],
    "sweep": [("OUT/sweep.json", "one row per effort: MURGAT-S, accuracy, … with CIs"),
              ("OUT/sweep.png", "the figures against effort"),
              ("OUT/effort-E/", "the generate run of effort E (its `responses.jsonl`)"),
              ("OUT/effort-E/run/", "the score run of those responses")],
    "program": [("OUT/VARIANT/responses.jsonl", "the answers of a variant, cited by construction"),
                ("OUT/VARIANT/traces.jsonl", "program, validation, every operation's inputs, outputs and verdicts"),
                ("OUT/summary.json, OUT/report.html, OUT/cache.sqlite", "per variant: errors, statuses, check "
                                                                       "outcomes, calls per item"),
                ("OUT/VARIANT/run/, OUT/baseline-run/", "with `--score` (and `--baseline`): score runs")],
    "faithfulness": [("OUT/config.json, OUT/results.jsonl", "every step's type, modality, label and reason"),
                     ("OUT/summary.json", "UPR with its CI, per modality, the answer × chain 2×2"),
                     ("OUT/cache.sqlite, OUT/report.html", "as every run folder")],
    "reflect": [("OUT/responses.jsonl", "the final chains (ready for `score` or `faithfulness`)"),
                ("OUT/traces.jsonl", "every attempt, verdict, reason and continuation"),
                ("OUT/summary.json", "UPR and accuracy before and after with paired CIs, the detector's view"),
                ("OUT/config.json, OUT/cache.sqlite, OUT/report.html", "as every run folder")],
    "view": [("RUN/report.html", "or `--out`"), ("media/", "with `--copy-media`"),
             ("RUN/evidence/", "with `--save-evidence`: what the judge was sent")],
    "annotate": [("RUN/annotate-NAME.html", "the blind labelling page")],
    "export": [("RUN/export_LEVEL.FORMAT", "or `--out` (a pipe or `/dev/stdout` streams it)")],
    "calibrate": [("DIR/calibration.json", "with `--out DIR`: every figure"),
                  ("DIR/scatter_K_RUN.png", "judge vs human scatter plot per run")],
    "ground": [("OUT/config.json, OUT/results.jsonl, OUT/summary.json", "with `--out`: a ground run")],
    "gold import nextgqa": [("GOLD", "murgat's gold evidence JSONL")],
    "gold import citevqa": [("GOLD", "murgat's gold evidence JSONL")],
    "gold import rextime": [("GOLD", "murgat's gold evidence JSONL")],
    "media evidence": [("DIR/", "JPEG frames, WAV audio, clips and `manifest.json`: exactly what a judge is sent")],
    "import inspect": [("DIR/responses.jsonl", "the log's answered samples"),
                       ("DIR/inspect.json", "the log, task, model, media root and each sample left out")],
    "judge check": [("FILE", "with `--record FILE`: the probes' exchanges as a replay cassette")],
}


@dataclass
class Option:
    """One argument of a command as ``--help`` lists it."""

    names: list[str]  # the flags, or the positional's metavar
    help: str
    default: str
    choices: str
    group: str
    dest: str


@dataclass
class Subcommand:
    """One ``murgat …`` command: its path, one-line help, description, usage and arguments."""

    path: list[str]
    help: str
    description: str
    usage: str
    options: list[Option]
    children: list[str]


def _load(where: tuple[str, str]) -> Any:
    if str(ROOT) not in sys.path:  # document this tree, not whichever murgat the environment installed
        sys.path.insert(0, str(ROOT))
    return getattr(importlib.import_module(where[0]), where[1])


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    if action.nargs == 0:  # a flag: its absence is the default
        return "off"
    if action.default is None or action.default == [] or action.default is argparse.SUPPRESS:
        return "—"
    return f"`{action.default}`"


def _names(action: argparse.Action) -> list[str]:
    if action.option_strings:
        return list(action.option_strings)
    return [str(action.metavar or action.dest)]  # as --help shows a positional


def _options(parser: argparse.ArgumentParser) -> list[Option]:
    formatter = parser._get_formatter()
    found: list[Option] = []
    for group in parser._action_groups:
        for action in group._group_actions:
            hidden = action.help is argparse.SUPPRESS
            if hidden or isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            text = formatter._expand_help(action) if action.help else ""
            choices = ", ".join(f"`{c}`" for c in action.choices) if action.choices else ""
            found.append(Option(_names(action), text, _default(action), choices, group.title or "", action.dest))
    return found


def _usage(parser: argparse.ArgumentParser) -> str:
    # a fixed width: the page must not depend on the terminal of whoever builds it
    formatter = argparse.HelpFormatter(prog=parser.prog, width=100)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def subcommands(parser: argparse.ArgumentParser | None = None, path: list[str] | None = None,
                help_text: str = "") -> Iterator[Subcommand]:
    """Every command under ``parser`` (default: the ``murgat`` program's), depth first, in ``--help`` order."""
    parser = parser if parser is not None else _load(PARSER)()
    path = path or []
    children: list[tuple[str, str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            children += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    if path:
        yield Subcommand(path, help_text, parser.description or "", _usage(parser), _options(parser),
                         [c[0] for c in children])
    for name, text, sub in children:
        yield from subcommands(sub, [*path, name], text)


def _cell(text: str) -> str:
    """Text for a Markdown table cell: no pipe, no line break, no raw HTML."""
    return re.sub(r"\s+", " ", text).replace("|", "\\|").replace("<", "&lt;").strip()


def anchor(path: list[str]) -> str:
    """The heading id of a command's section (set explicitly, so links need not guess a slug)."""
    return "murgat-" + "-".join(path)


def _run_settings() -> dict[str, Any]:
    return {name: cls for name, (_, cls) in _load(RUN_COMMANDS).items()}


def _settings_note(cls: Any) -> list[str]:
    doc = (cls.__doc__ or "").strip().split("\n\n")[0].replace("``", "`")
    return [f"Settings model: `{cls.__name__}` (the Python API takes the same fields as keywords). "
            f"{' '.join(doc.split())}", "",
            "Options marked **decides** are part of the run folder's settings fingerprint: rerunning into "
            "the same `--out` with another value is refused (`--overwrite` starts over).", ""]


def _decides(cls: Any | None, dest: str) -> bool:
    if cls is None or dest not in cls.model_fields:
        return False
    extra = cls.model_fields[dest].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("decides"))


def _section(cmd: Subcommand, settings: Any | None) -> list[str]:
    level = "#" * min(len(cmd.path) + 1, 4)
    out = [f"{level} `murgat {' '.join(cmd.path)}` {{#{anchor(cmd.path)}}}", ""]
    if cmd.help:
        out += [_cell(cmd.help)[:1].upper() + _cell(cmd.help)[1:] + ".", ""]
    out += ["```text", cmd.usage, "```", ""]
    if cmd.children:
        links = ", ".join(f"[`{c}`](#{anchor([*cmd.path, c])})" for c in cmd.children)
        out += [f"Subcommands: {links}.", ""]
    if settings is not None:
        out += _settings_note(settings)
    if cmd.options:
        out += ["| option | what it does | default | choices |", "|---|---|---|---|"]
        for o in cmd.options:
            names = ", ".join(f"`{n}`" for n in o.names)
            what = _cell(o.help) + (" **decides**" if _decides(settings, o.dest) else "")
            group = f" *({_cell(o.group)})*" if o.group not in ("", "options", "positional arguments") else ""
            out.append(f"| {names}{group} | {what} | {o.default} | {o.choices} |")
        out.append("")
    writes = WRITES.get(" ".join(cmd.path))
    if writes:
        out += ["Writes:", ""] + [f"- `{f}` — {what}" for f, what in writes] + [""]
    return out


def command_reference() -> str:
    """The command reference page's generated body: every subcommand and option of ``murgat --help``."""
    settings = _run_settings()
    lines: list[str] = []
    for cmd in subcommands():
        lines += _section(cmd, settings.get(" ".join(cmd.path)))
    return "\n".join(lines)


def offline_block(readme: str | None = None) -> str:
    """The README's ```` ```bash offline ```` block(s), fenced as bash."""
    text = readme if readme is not None else (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```bash offline\n(.*?)^```", text, flags=re.S | re.M)
    if not blocks:
        raise ValueError("README.md has no ```bash offline block")
    return "\n".join(f"```bash\n{b}```" for b in blocks)


def _models_in(annotation: Any) -> list[type]:
    """The pydantic models an annotation names (``list[SentenceResult]`` → ``SentenceResult``)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if not typing.get_args(annotation) else None
    text = text or re.sub(r"\b(?:[a-z_]+\.)+", "", str(annotation))
    return text.replace(" | ", " or ").replace("NoneType", "None")


def record_schema() -> str:
    """One table per model of a ``score`` record, starting at the line's own model, nested ones after."""
    todo, seen, out = [_load(SCORE_RECORD)], set(), []
    while todo:
        model = todo.pop(0)
        if model in seen:
            continue
        seen.add(model)
        doc = " ".join((model.__doc__ or "").split())
        out += [f"### `{model.__name__}`", "", *([doc, ""] if doc else []), "| field | type | what |", "|---|---|---|"]
        for name, info in model.model_fields.items():
            out.append(f"| `{name}` | `{_cell(_type_name(info.annotation))}` | {_cell(info.description or '')} |")
            todo += _models_in(info.annotation)
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs hook: fill the markers of the page being read."""
    if REFERENCE_MARK in markdown:
        markdown = markdown.replace(REFERENCE_MARK, command_reference())
    if RECORD_MARK in markdown:
        markdown = markdown.replace(RECORD_MARK, record_schema())
    if OFFLINE_MARK in markdown:
        markdown = markdown.replace(OFFLINE_MARK, offline_block())
    if RULES_MARK in markdown:
        module, name = RULES
        markdown = markdown.replace(RULES_MARK, getattr(importlib.import_module(module), name)())
    return markdown
