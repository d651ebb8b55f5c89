"""``murgat validate INPUT``: parse citations and check them against the media's stream durations, and warn about
time-like text that is not a citation — no judge calls (:mod:`murgat.commands.validate.check`)."""

from __future__ import annotations

import argparse
import json
import sys

from murgat.commands.validate.check import exit_status, report_lines, validate_selection
from murgat.core.cells import Cell
from murgat.core.inputs import InputError
from murgat.core.terminal import for_terminal
from murgat.engine.errors import SettingsError
from murgat.engine.options import add_command
from murgat.settings.validate import ValidateSettings


def _cmd_validate(args: ValidateSettings) -> int:
    try:
        reports, missing = validate_selection(args.input, args.media_root, args.allow_media_outside_root, args.ids,
                                              args.max_response_chars)
    except (InputError, ValueError) as exc:
        raise SettingsError(str(exc)) from None
    if missing:
        print(for_terminal(f"warning: --ids not in {args.input}: {', '.join(missing[:20])}"), file=sys.stderr)
    n_bad = sum(1 for r in reports if not r.ok)
    n_warn = sum(1 for r in reports if r.time_like)
    if args.print_json:
        print(json.dumps({"n_items": len(reports), "n_with_problems": n_bad, "n_with_warnings": n_warn,
                          "missing_ids": missing,
                          "items": [r.model_dump() | {"ok": r.ok} for r in reports]}, ensure_ascii=False))
    else:
        from rich.table import Table
        from rich.text import Text

        from murgat.core.console import console

        table = Table(title=Text(for_terminal(f"validate {args.input}")))
        for col in ("id", "media", "sentences", "cited", "citations", "invalid", "problems"):
            table.add_column(col)
        for r in reports:
            # ids, media names and the quoted response text are the input's: control characters shown as
            # escapes, line by line (the newlines between the lines are the table's own)
            table.add_row(Cell(r.id), Cell(r.media or "-"), str(r.n_sentences),
                          str(r.n_cited_sentences), str(r.n_citations), str(r.n_invalid),
                          Text("\n".join(for_terminal(line) for line in report_lines(r)) or "ok"))
        con = console()
        con.print(table)
        con.print(f"{len(reports)} items, {n_bad} with problems, {n_warn} with warnings")
    return exit_status(reports, args.strict)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_command(sub, ValidateSettings, _cmd_validate,
                help="check a response file's citations against its media (no judge)")
