"""``murgat summarize RUN [RUN …]``: runs side by side, with paired bootstrap CIs of differences against the
first; for runs over the same responses, how far their judges agree; ground runs through
:mod:`murgat.commands.summarize.ground_runs`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from murgat.commands.summarize.ground_runs import is_ground_run, summarize_ground_runs
from murgat.core.breakdown import (
    UnknownField,
    breakdown,
    check_by,
    drawn,
    fields_available,
    group_differences,
    record_fields,
    short_label,
    summary_options,
)
from murgat.core.comparison import compare
from murgat.core.schema import ResponseResult, RunSummary
from murgat.engine.differences import print_diff, run_differences
from murgat.engine.errors import SettingsError
from murgat.engine.folder import RunFolder, read_kind, read_summary, score_summary
from murgat.engine.options import add_command
from murgat.human_eval.labels import LabelError, ResponseLabel, load_labels
from murgat.report.groups import differences_table, print_breakdown
from murgat.report.tables import agreement_table, comparison_table, summary_table
from murgat.settings.summarize import SummarizeSettings


def _other_kind(runs: list[str]) -> int:
    """``summarize`` of folders that are not score runs: one folder's summary as it is, else refused."""
    kinds = {str(p): read_kind(p) for p in runs}
    others = {p: k for p, k in kinds.items() if k not in (None, "score")}
    if len(runs) != 1:
        raise SettingsError("murgat summarize compares score runs; " + ", ".join(f"{p} is a '{k}' run"
                                                                                 for p, k in others.items()))
    kind = others[str(runs[0])]
    name = "sweep.json" if kind == "sweep" else "summary.json"
    summary = read_summary(runs[0], name)  # a damaged file: RunUnreadable, named (exit 2)
    if not summary:
        raise SettingsError(f"{runs[0]} is a '{kind}' folder without {name}"
                            + (" (summarize the program run above it)" if kind == "program-variant" else ""))
    print(json.dumps({"kind": kind, "summary": summary}, indent=2, ensure_ascii=False))
    return 0


def _score_runs(paths: list[str]) -> list[tuple[str, list[ResponseResult], RunSummary]]:
    runs = []
    for path in paths:
        summary = score_summary(path)  # missing, cut short or not a score summary: RunUnreadable (exit 2)
        folder = RunFolder(path, repair=False)
        for note in folder.notices:
            print(f"warning: {note}", file=sys.stderr)
        runs.append((str(path), folder.latest_results(), summary))
    return runs


def _labels(args: SummarizeSettings) -> list[ResponseLabel] | None:
    """``--human LABELS``: the people's labels the judges' errors are measured against (needs two runs)."""
    if not args.human:
        return None
    if len(args.runs) < 2:
        raise SettingsError("--human measures how alike the judges' errors are: give two or more runs over the same "
                            "responses (one judge against people is murgat calibrate --human LABELS --run RUN)")
    try:
        return load_labels(args.human)
    except LabelError as exc:
        raise SettingsError(str(exc)) from None


def _agreement(runs: list[tuple[str, list[ResponseResult], RunSummary]],
               labels: list[ResponseLabel] | None) -> dict[str, Any] | None:
    """Agreement between the runs' judges on the responses they share (two or more runs), the
    separate block of ``summarize``'s document: :func:`murgat.core.agreement.agreement_on_shared`."""
    if len(runs) < 2:
        return None
    from murgat.core.agreement import agreement_on_shared  # numpy: only when two runs are compared

    return agreement_on_shared({path: results for path, results, _ in runs}, labels)


def _show_agreement(con: Any, ag: dict[str, Any] | None) -> None:
    if ag is None:
        return
    if ag.get("n_responses"):
        con.print(agreement_table(ag))
    differing = ag.get("n_different_responses")
    line = ag.get("note") if not ag.get("n_responses") else (
        f"judges compared on the {ag['n_responses']} response(s) every run scored"
        + (f"; {differing} shared id(s) hold different responses and are left out" if differing else ""))
    if line and (ag.get("n_responses") or ag.get("n_common_ids")):
        con.print(line, soft_wrap=True)


def _breakdowns(runs: list[tuple[str, list[ResponseResult], RunSummary]], by: list[str], n_resamples: int,
                seed: int) -> dict[str, Any]:
    """``summarize … --by``: each run's figures per group (as the run summarised them: its precision
    mode, policy, clustering and bootstrap) and, against the first run, the paired group differences
    (``--bootstrap``/``--seed``, as the run-level differences). A field no run's items have: exit 2."""
    try:
        names = list(check_by(by, fields_available(record_fields(r) for _, results, _ in runs for r in results)))
    except (UnknownField, ValueError) as exc:
        raise SettingsError(str(exc)) from None
    doc: dict[str, Any] = {"by": names, "runs": [], "differences": []}
    for path, results, summary in runs:
        doc["runs"].append({"run": path, **breakdown(results, by, **summary_options(summary)).as_dict()})
    base, base_results, _ = runs[0]
    for path, results, _ in runs[1:]:
        diffs = group_differences(base_results, results, by, n_resamples=n_resamples, seed=seed)
        doc["differences"].append({"run": path, "against": base, "by": names,
                                   "groups": [d.as_dict() for d in diffs]})
    return doc


def _show_breakdowns(con: Any, doc: dict[str, Any]) -> None:
    for run in doc["runs"]:
        print_breakdown(run, con, f"{run['run']} by {' × '.join(doc['by'])} (means; MURGAT-S and accuracy [95% CI])")
    for d in doc["differences"]:
        con.print(differences_table(d))
        for g in drawn(d["groups"])[0]:
            if g.get("note"):
                con.print(f"{short_label(g['label'])}: {g['note']}", soft_wrap=True)


def _cmd_summarize(args: SummarizeSettings) -> int:
    if args.runs and is_ground_run(args.runs[0]):
        if args.by:
            raise SettingsError("summarize --by groups score runs; a ground run's figures by group: murgat ground … --by")
        return summarize_ground_runs(args)
    if any(read_kind(p) not in (None, "score") for p in args.runs):
        if args.by:
            raise SettingsError("summarize --by groups score runs' figures; "
                                + ", ".join(f"{p} is a '{read_kind(p)}' run" for p in args.runs
                                            if read_kind(p) not in (None, "score")))
        return _other_kind(args.runs)
    labels = _labels(args)
    runs = _score_runs(args.runs)
    doc = compare(runs, n_resamples=args.bootstrap, seed=args.seed)
    agreement = _agreement(runs, labels)
    if agreement is not None:
        doc["judge_agreement"] = agreement
    if args.by:  # only when asked: the document without --by is the one it always was
        doc["breakdown"] = _breakdowns(runs, args.by, args.bootstrap, args.seed)
    diffs = _run_differences(args.runs)
    if args.print_json:
        if diffs:
            doc["run_differences"] = [d.model_dump(mode="json") for d in diffs]
        print(json.dumps(doc, indent=2, default=str))
        return 0
    from murgat.core.console import console  # rich: only when a table is drawn

    con = console()
    if len(runs) == 1:
        con.print(summary_table(runs[0][2], str(runs[0][0])))
    else:
        con.print(comparison_table(doc))
        for d in doc["differences"]:
            if d.get("note"):
                con.print(d["note"], soft_wrap=True)
    _show_agreement(con, agreement)
    if args.by:
        _show_breakdowns(con, doc["breakdown"])
    _print_run_differences(diffs, con)
    return 0


# ----- how the runs differ (issue #30 item 7): settings, prompts, judges, probes, versions (murgat.engine.differences) -----

def _run_differences(paths: list[str]) -> list[Any]:
    """What differs between the first run and each other one (``murgat diff FIRST OTHER``, verdicts
    included): the settings of ``config.json``, prompt hashes, the judges and their identities,
    probe outcomes, versions."""
    return [run_differences(paths[0], other) for other in paths[1:]]


def _print_run_differences(diffs: list[Any], con: Any) -> None:
    for d in diffs:
        print_diff(d, con)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # --by: per-run group tables; with two or more runs, paired group differences
    add_command(sub, SummarizeSettings, _cmd_summarize, help="compare runs side by side with paired bootstrap CIs")
