"""``murgat annotate RUN --annotator NAME``: a page for labelling a score run by hand, for calibration.

The page is the viewer in a blind labelling mode (no judge verdicts or scores): for each item the
annotator plays the citations and marks each sentence's verifiability and each fact's support by
its citations (and, for a fact with several, whether each citation is needed); in a faithfulness
run, each step's type and, for perception steps, its faithfulness. Labels are kept in
the browser's storage as they are made (a reload loses nothing) and exported as the JSONL that
``murgat calibrate --human`` reads (``human_eval/labels.py``). Loading other annotators' files
shows where they disagree. No server: the page opens from ``file://``.

``--sample N`` makes the labelled items a random sample, so that ``murgat calibrate`` can turn
the judge's figures into human-valid ones (prediction-powered inference needs a random sample;
hand-picked items can carry any bias): N items drawn uniformly, or with ``--by video`` N videos
and every item of each (``murgat.human_eval.sampling``). The page then holds the sampled items only and
states the design, and every exported label line records it; ``calibrate`` redraws the sample
from the run and the design to check the labels are it. Without ``--seed`` the seed is drawn at
random (and recorded): nobody chooses the sample. Several annotators label one sample by giving
the same ``--seed``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from murgat.engine.options import add_command
from murgat.settings.annotate import AnnotateSettings


def _cmd_annotate(args: AnnotateSettings) -> int:
    from murgat.engine.folder import read_kind
    from murgat.report.pages import build_report

    run = Path(args.run)
    kind = read_kind(run)
    if kind not in (None, "score", "faithfulness"):
        print(f"error: {run} holds a '{kind}' run; murgat annotate labels score runs (sentences and facts) and "
              "faithfulness runs (steps)", file=sys.stderr)
        return 2
    from murgat.engine.folder import absent_folder

    if absent_folder(run):
        print(f"error: {absent_folder(run)}", file=sys.stderr)
        return 2
    if not (run / "summary.json").exists():
        print(f"error: {run} has no summary.json (run murgat {kind or 'score'} first)", file=sys.stderr)
        return 2
    name = args.annotator.strip()
    if not name:
        print("error: --annotator must name the person labelling", file=sys.stderr)
        return 2
    if args.by is not None and args.sample is None:
        print("error: --by video draws a sample: give its size with --sample N (videos)", file=sys.stderr)
        return 2
    if args.seed is not None and args.sample is None:
        print("error: --seed is the seed of a sample: give its size with --sample N", file=sys.stderr)
        return 2
    if args.sample is not None and args.sample < 1:
        print(f"error: --sample must be 1 or more (got {args.sample})", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else run / f"annotate-{re.sub(r'[^A-Za-z0-9_-]+', '_', name)}.html"
    from murgat.engine.folder import RunFolder

    if kind == "faithfulness":
        from murgat.core.steps import FaithResult

        results = RunFolder(run, repair=False, record=FaithResult).latest_results()
    else:
        results = RunFolder(run, repair=False).latest_results(slim=True)
    sample = _draw(args, run, results)
    if sample is None:
        return 2
    if kind == "faithfulness":
        from murgat.engine.runs import read_summary
        from murgat.report.pages import run_media_root
        from murgat.report.steps import faithfulness_report

        summary = read_summary(run)  # a damaged summary.json: RunUnreadable, named (exit 2), not a traceback
        if sample:
            results = [r for r in results if r.id in set(sample["ids"])]
        path = faithfulness_report(out, results, summary, run_media_root(run, args.media_root), annotator=name,
                                   sample_design=sample["design"] if sample else None)
        task = " --task faithfulness"
    else:
        path = build_report([run], out, copy_media=args.copy_media, media_root=args.media_root, annotator=name,
                            sample=sample or None)
        task = ""
    if sample:
        d = sample["design"]
        what = (f"{d['sample_videos']} of {d['n_videos']} videos ({d['sample_size']} of {d['population_size']} items)"
                if d["method"] == "video" else f"{d['sample_size']} of {d['population_size']} items")
        print(f"drew a random sample: {what}, seed {d['seed']} (recorded in the page and in every exported label "
              f"line; another annotator labels the same sample with --seed {d['seed']})")
    print(f"wrote {path}: open it in a browser, label, then 'export labels' and run "
          f"murgat calibrate --human LABELS.jsonl --run {run}{task}")
    return 0


def _draw(args: AnnotateSettings, run: Path, results: list[Any]) -> dict[str, Any] | None:
    """``{}`` without ``--sample``; else ``{"ids", "design"}``; None (after the error) when it cannot be drawn."""
    if args.sample is None:
        return {}
    from murgat.core.corrected import population
    from murgat.human_eval.sampling import check_seed, draw_sample, new_seed

    ids, videos = population(results)
    if not ids:
        print(f"error: {run} has no item without an error to sample from", file=sys.stderr)
        return None
    seed = new_seed() if args.seed is None else args.seed
    try:
        check_seed(seed)
    except ValueError as exc:
        print(f"error: --seed: {exc}", file=sys.stderr)
        return None
    drawn, design = draw_sample(ids, args.sample, seed=seed, videos=videos if args.by == "video" else None,
                                run=str(run))
    return {"ids": drawn, "design": design.model_dump()}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_command(sub, AnnotateSettings, _cmd_annotate,
                help="write a page for labelling a score run by hand (for murgat calibrate --human)")
