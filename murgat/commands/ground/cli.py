"""``murgat ground``: parse options, call the grounding run (:mod:`murgat.commands.ground.run`), print."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from murgat.engine.options import add_command
from murgat.settings.ground import GroundCommandSettings


def _fmt(iv: Any, scale: float) -> str:
    """An interval on the table's one scale (percent); a CI that cannot be estimated is said."""
    if not isinstance(iv, dict) or iv.get("value") is None:
        return "-"
    v = f"{iv['value'] * scale:.1f}"
    if iv.get("ci_low") is None or iv.get("ci_high") is None:
        return f"{v} [no CI] n={iv['n']}"
    return f"{v} [{iv['ci_low'] * scale:.1f}, {iv['ci_high'] * scale:.1f}] n={iv['n']}"


#: the families of figures of the tables, each at its one scale (percent, as the papers report NExT-GQA and ReXTime)
FAMILIES = (("nextgqa", 1.0), ("rextime", 1.0), ("overlap", 100.0), ("evidence", 100.0), ("boxes", 100.0),
            ("answers", 100.0))


def _group_cell(group: dict[str, Any], family: str, figure: str, scale: float) -> str:
    """A group's figure; one it has not (no response of the group has what the figure needs) is
    "undefined", never 0 or a dash (the reason is the group's ``undefined`` in the JSON)."""
    v = (group.get(family) or {}).get(figure)
    return _fmt(v, scale) if isinstance(v, dict) and v.get("value") is not None else "undefined"


#: at most this many groups (columns) in the ``ground --by`` table: the largest, every group in the JSON
GROUP_COLUMNS = 8


def _group_table(bd: dict[str, Any]) -> Any:
    """``ground --by``: one row per figure, one column per group (its label and n; the largest
    :data:`GROUP_COLUMNS` groups, the table's caption says how many more the JSON holds)."""
    from rich.table import Table

    from murgat.core.breakdown import drawn, short_label

    table = Table(title=f"grounding by {' × '.join(bd['by'])} (value % [95% CI] n; undefined: no response of the "
                        "group has the figure)")
    groups, table.caption = drawn(bd["groups"], GROUP_COLUMNS)
    table.add_column("family")
    table.add_column("figure")
    for g in groups:
        table.add_column(f"{short_label(g['label'])} (n={g['n_items']})")
    for family, scale in FAMILIES:
        names = list(dict.fromkeys(k for g in groups for k, v in (g.get(family) or {}).items()
                                   if isinstance(v, dict) or v is None))
        for name in names:
            table.add_row(family, name, *(_group_cell(g, family, name, scale) for g in groups))
    return table


def _cmd_ground(args: GroundCommandSettings) -> int:
    from murgat.commands.ground.run import GroundSettings, ground
    from murgat.core.breakdown import UnknownField
    from murgat.core.gold import GoldFormatError
    from murgat.core.inputs import InputError
    from murgat.engine.folder import NotWritable
    from murgat.engine.runlock import RunLocked

    settings = GroundSettings(
        citevqa_compat=args.citevqa_compat, attributed_threshold=args.attributed_threshold,
        recall_threshold=args.recall_threshold, end_tolerance_s=args.end_tolerance,
        cluster_by_video=args.cluster_by_video, n_resamples=args.bootstrap, seed=args.seed, score_run=args.score_run,
        max_response_chars=args.max_response_chars)
    try:
        result = ground(args.responses, args.gold, args.out, settings, by=args.by)
    except (GoldFormatError, InputError, NotWritable, RunLocked, FileNotFoundError, UnknownField) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    doc = result.summary.model_dump()
    failed = (f"FAILED: {doc['n_errors']} of {doc['n_responses']} response(s) ended in an error (e.g. no gold for "
              "the id); see the error field of the records") if doc["n_errors"] else None
    if args.print_json:
        print(json.dumps(doc if result.breakdown is None else result.document(), ensure_ascii=False))
        if failed:
            print(failed, file=sys.stderr)
        return 1 if failed else 0
    from rich.table import Table

    from murgat.core.console import console

    # one scale for every figure: percent, as the papers report NExT-GQA and ReXTime (summary.json keeps
    # those in percent and murgat's own figures as 0-1 fractions; the table says which it shows)
    table = Table(title=f"grounding of {args.responses} against {args.gold}")
    for col in ("family", "figure", "value % [95% CI]"):
        table.add_column(col)
    for family, scale in FAMILIES:
        for k, v in doc[family].items():
            if isinstance(v, dict) or v is None:
                table.add_row(family, k, _fmt(v, scale))
            elif k.endswith("_threshold") and isinstance(v, int | float):
                table.add_row(family, k, f"{v:g} (a 0-1 setting)")
            else:
                table.add_row(family, k, str(v))
    con = console()
    con.print(table)
    for note in doc.get("notes") or []:
        con.print(f"note: {note}", soft_wrap=True)
    con.print(f"{doc['n_responses']} responses ({doc['n_errors']} errors); {doc['n_gold_without_response']} gold "
              f"questions without a response" + (f"; wrote {args.out}" if args.out else ""))
    if result.breakdown is not None:
        con.print(_group_table(result.breakdown))
        if result.breakdown.get("note"):
            con.print(result.breakdown["note"], soft_wrap=True)
    if failed:
        print(failed, file=sys.stderr)
        return 1
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # --by: the grounding figures per group of an item field
    add_command(sub, GroundCommandSettings, _cmd_ground,
                help="grounding figures of cited responses against gold evidence (no media, no judge)")
