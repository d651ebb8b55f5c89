"""``murgat view RUN [RUN ...]``: (re)write the viewer for a run, or compare 2..N runs item by item."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from murgat.engine.options import add_command
from murgat.report.pages import build_report, run_media_root
from murgat.settings.view import ViewSettings


def _view_other_kind(run: Path, kind: str, args: ViewSettings) -> int:
    """``murgat view`` on a folder that is not a score run: its own page, or where to find one."""
    from murgat.engine.folder import RunFolder
    from murgat.engine.outputs import claim_output
    from murgat.engine.runs import read_summary

    out = Path(args.out) if args.out else run / "report.html"
    if kind in ("faithfulness", "reflect", "program"):
        claim_output(out, role="file", what=f"the report {out}")  # refused before any work; written by the page
        args = args.model_copy(update={"media_root": run_media_root(run, args.media_root)})
    if kind == "faithfulness":
        from murgat.core.steps import FaithResult
        from murgat.report.steps import faithfulness_report

        summary = read_summary(run)
        results = RunFolder(run, repair=False, record=FaithResult).latest_results()
        _wrote(faithfulness_report(out, results, summary, args.media_root))
        return 0
    if kind == "reflect":
        from murgat.report.steps import reflect_report

        summary = read_summary(run)
        traces = RunFolder(run, repair=False, record=None, results="traces.jsonl").latest_results()
        recs = {r["id"]: r for r in RunFolder(run, repair=False, record=None, results="responses.jsonl").latest_results()}
        _wrote(reflect_report(out, traces, recs, summary, args.media_root))
        return 0
    if kind == "program":
        from murgat.report.steps import rewrite_program_report

        _wrote(rewrite_program_report(run, out, args.media_root))
        return 0
    where = {"program-variant": "it is one variant of a program run: murgat view the folder above (all variants), "
                                "or, with --score, this folder's run/",
             "generate": "score its responses.jsonl with murgat score, then view that run",
             "sweep": "view one effort's score run: OUT/effort-LEVEL/run",
             "ground": "print its figures with murgat summarize; score with --gold shows them in the score run's report"}.get(kind, "")
    print(f"error: {run} holds a '{kind}' run, which has no item viewer of its own; {where}", file=sys.stderr)
    return 2


def _corrected(args: ViewSettings, run: Path, human: str) -> dict[str, Any] | None:
    """``--human LABELS``: the first run's figures corrected with the labels (``murgat.core.corrected``), for
    its run panel; None after an error is printed."""
    from murgat.core.corrected import corrected_figures
    from murgat.engine.folder import RunFolder
    from murgat.human_eval.labels import LabelError, load_labels

    try:
        labels = load_labels(human)
    except LabelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    rd = RunFolder(run, repair=False)
    return corrected_figures(labels, rd.latest_results(), assume_random=args.assume_random,
                             cluster_by_video=args.cluster_by_video,
                             attributed_threshold=rd.summary().attributed_threshold)


def _cmd_view(args: ViewSettings) -> int:
    from murgat.engine.folder import absent_folder, read_kind

    runs = [Path(r) for r in args.runs]
    for r in runs:  # before anything is read from it
        if absent_folder(r):
            print(f"error: {absent_folder(r)}", file=sys.stderr)
            return 2
    kinds = [read_kind(r) for r in runs]
    if any(k not in (None, "score") for k in kinds):
        if len(runs) > 1:
            print(f"error: murgat view compares score runs; these are: {', '.join(str(k) for k in kinds)}",
                  file=sys.stderr)
            return 2
        if args.human:
            print(f"error: --human corrects a score run's figures; for a '{kinds[0]}' run use murgat calibrate "
                  "(--task faithfulness for step faithfulness)", file=sys.stderr)
            return 2
        if args.by:
            print(f"error: --by groups a score run's figures; a '{kinds[0]}' run's page has no breakdown",
                  file=sys.stderr)
            return 2
        return _view_other_kind(runs[0], str(kinds[0]), args)
    from murgat.core.breakdown import UnknownField
    from murgat.engine.outputs import OutputRefused
    from murgat.engine.runs import RunUnreadable

    out = Path(args.out) if args.out else runs[0] / ("report.html" if len(runs) == 1 else "compare.html")
    corrected = None
    if args.human:
        corrected = _corrected(args, runs[0], args.human)
        if corrected is None:
            return 2
    try:
        path = build_report(runs, out, copy_media=args.copy_media, media_root=args.media_root,
                            with_evidence=args.save_evidence, allow_outside_root=args.allow_media_outside_root,
                            corrected=corrected, by=args.by)
    except (OutputRefused, RunUnreadable, UnknownField) as exc:  # a damaged summary, an output not the viewer's to
        # write, --by a field no item has
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _wrote(path)
    return 0


def _wrote(path: Path) -> None:
    """The status line: on stderr when the page went to a stream (``--out /dev/stdout``)."""
    from murgat.engine.outputs import is_stream

    print(f"wrote {path}", file=sys.stderr if is_stream(path) else sys.stdout)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # --by: the run panel's figures per group (score runs)
    add_command(sub, ViewSettings, _cmd_view,
                help="write the offline viewer (report.html) for a run, or compare 2..N runs item by item")
