"""The documentation: the generated command reference covers the whole program, the README stays short and
its links into docs/ resolve, and the site builds offline with warnings as errors.

The reference is made by ``docs/hooks/reference.py`` when MkDocs builds the site; these tests import that
file and walk the parser ``murgat --help`` is printed from, independently of the hook's own walk.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from murgat.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("murgat_docs_reference", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


HOOK = _hook()


def _listed(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], list[str]]:
    """Every command under ``parser`` and the arguments its ``--help`` lists (flags, or a positional's name)."""
    found: dict[tuple[str, ...], list[str]] = {}
    if path:
        names: list[str] = []
        for a in parser._actions:
            if a.help is argparse.SUPPRESS or isinstance(a, argparse._HelpAction | argparse._SubParsersAction):
                continue
            names += a.option_strings or [str(a.metavar or a.dest)]
        found[path] = names
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                found.update(_listed(sub, (*path, name)))
    return found


def _sections(markdown: str) -> dict[tuple[str, ...], str]:
    """The reference's text per command, by its heading ``murgat A B``."""
    parts = re.split(r"^#+ `murgat ([^`]+)`.*$", markdown, flags=re.M)
    return {tuple(parts[i].split()): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


REFERENCE = HOOK.command_reference()
LISTED = _listed(build_parser())


def test_the_reference_has_a_section_for_every_subcommand_of_murgat_help() -> None:
    sections = _sections(REFERENCE)
    assert LISTED, "the parser lists no command"
    missing = sorted(" ".join(p) for p in LISTED if p not in sections)
    assert not missing, f"commands the reference does not name: {missing}"
    assert len(LISTED) > 20  # nested commands too (media probe, gold import nextgqa, judge check, ...)


@pytest.mark.parametrize("path", sorted(LISTED), ids=[" ".join(p) for p in sorted(LISTED)])
def test_the_reference_names_every_option_of_a_command(path: tuple[str, ...]) -> None:
    section = _sections(REFERENCE)[path]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    named = {n for row in rows for n in re.findall(r"`([^`]+)`", row.split(" | ")[0])}
    missing = [o for o in LISTED[path] if o not in named]
    assert not missing, f"murgat {' '.join(path)}: options --help lists and the reference lacks: {missing}"


def test_the_reference_gives_help_default_and_choices() -> None:
    score = _sections(REFERENCE)[("score",)]
    row = next(r for r in score.splitlines() if r.startswith("| `--precision-mode`"))
    assert "`alce`, `strict`, `individual`" in row and "| `alce` |" in row  # choices, and the default
    assert "**decides**" in row  # a setting in the run folder's fingerprint
    bootstrap = next(r for r in score.splitlines() if r.startswith("| `--bootstrap`"))
    assert "`2000`" in bootstrap


def test_every_run_command_says_what_it_writes() -> None:
    commands = {" ".join(p) for p in LISTED}
    unknown = sorted(set(HOOK.WRITES) - commands)
    assert not unknown, f"WRITES names commands murgat does not have: {unknown}"
    for name in HOOK._run_settings():
        assert name in HOOK.WRITES, f"the reference does not say what `murgat {name}` writes"
        assert "Writes:" in _sections(REFERENCE)[(name,)]


def test_the_score_record_tables_follow_the_record_model() -> None:
    schema = HOOK.record_schema()
    for field in ("input_digest", "answer_problem", "judge_calls", "sentences"):
        assert f"| `{field}` |" in schema
    assert "### `SentenceResult`" in schema and "### `Citation`" in schema  # the nested models follow


def test_the_offline_examples_page_shows_the_readmes_block() -> None:
    block = HOOK.offline_block()
    assert "murgat score examples/responses.jsonl" in block
    assert HOOK.OFFLINE_MARK in (DOCS / "guide" / "offline-examples.md").read_text(encoding="utf-8")
    with pytest.raises(ValueError):
        HOOK.offline_block("no block here")


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    head = "\n".join(text.splitlines()[:6])
    assert "make demo" in head and "make test" in head


def _slug(heading: str) -> str:
    """Python-Markdown's default heading id (the toc extension's slugify)."""
    text = re.sub(r"\{#([^}]+)\}\s*$", "", heading)
    explicit = re.search(r"\{#([^}]+)\}\s*$", heading)
    if explicit:
        return explicit.group(1)
    text = re.sub(r"[^\w\s-]", "", text.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def test_the_readmes_links_into_docs_resolve() -> None:
    """The README is not part of the site, so MkDocs' strict link check does not see its links: checked here."""
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([^)\s]+))?\)", README.read_text(encoding="utf-8"))
    assert len(links) > 20
    for target, anchor in links:
        page = ROOT / target
        assert page.is_file(), f"README links to {target}, which does not exist"
        if anchor and page.suffix == ".md":
            assert anchor in _anchors(page), f"README links to {target}#{anchor}: no such heading"


def test_the_anchor_check_reads_headings_as_mkdocs_does() -> None:
    assert _slug("Breakdowns: `--by FIELD`") == "breakdowns-by-field"
    assert _slug("From a judge's number to a human-valid number") == "from-a-judges-number-to-a-human-valid-number"
    assert _slug("`murgat score` {#murgat-score}") == "murgat-score"


def test_the_site_builds_offline_with_warnings_as_errors(tmp_path: Path) -> None:
    """``mkdocs build --strict`` (a broken link or anchor fails it), and no page loads anything from the network."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    pages = list(site.rglob("*.html"))
    assert len(pages) > 25
    for page in pages:
        html = page.read_text(encoding="utf-8")
        remote = re.findall(r"""(?:\bsrc=|<link[^>]*\bhref=)["']((?:https?:)?//[^"']+)""", html)
        assert not remote, f"{page.relative_to(site)} loads {remote[:3]} from the network"
    commands = (site / "reference" / "commands.html").read_text(encoding="utf-8")
    assert 'id="murgat-judge-check"' in commands and "murgat:command-reference" not in commands



def test_the_embedded_judges_page_shows_every_rule_of_its_table_in_order() -> None:
    """The judge's page is generated from the rule table the verdict folds over, so it cannot drift from it."""
    from murgat.judges.embedded_rules import RULES

    page = (DOCS / "guide" / "embedded-judge.md").read_text(encoding="utf-8")
    assert HOOK.RULES_MARK in page
    filled = HOOK.on_page_markdown(page)
    places = [filled.index(f"`{r.name}`") for r in RULES]
    assert places == sorted(places) and HOOK.RULES_MARK not in filled
