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

``--strata FIELD`` draws within each value of an item field instead (a stratified sample: in
proportion to the strata's sizes, two or more labels each, or each stratum's count given with
``--allocation``, e.g. the Neyman allocation ``murgat calibrate --plan`` prints); the design records
every stratum's size and weight, and ``calibrate`` then estimates stratified
(``murgat.human_eval.stratified``). ``--by video`` and ``--strata`` are two designs (whole videos
drawn, versus items drawn within each stratum), so they are not combined.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from murgat.engine.options import add_command
from murgat.settings.annotate import AnnotateSettings


def _arg_error(args: AnnotateSettings) -> str | None:
    """What is wrong with the sampling options as given (None when nothing is): each one said alone."""
    drawn = args.sample is not None or args.allocation is not None
    if not args.annotator.strip():
        return "--annotator must name the person labelling"
    if args.by is not None and args.sample is None:
        return "--by video draws a sample: give its size with --sample N (videos)"
    if args.by is not None and args.strata is not None:
        return "--by video (whole videos) and --strata (within each stratum) are two designs: choose one"
    if args.allocation is not None and args.strata is None:
        return "--allocation gives each stratum's count: name the strata with --strata FIELD"
    if args.allocation is not None and args.sample is not None:
        return "--allocation gives every stratum's count, so the sample's size is theirs: leave out --sample"
    if args.strata is not None and not drawn:
        return "--strata draws a sample: give its size with --sample N (or each stratum's with --allocation)"
    if args.seed is not None and not drawn:
        return "--seed is the seed of a sample: give its size with --sample N"
    if args.sample is not None and args.sample < 1:
        return f"--sample must be 1 or more (got {args.sample})"
    return None


def _run_error(run: Path, kind: str | None, args: AnnotateSettings) -> str | None:
    """Why ``run`` cannot be annotated as asked (None when it can)."""
    from murgat.engine.folder import absent_folder

    if kind not in (None, "score", "faithfulness"):
        return (f"{run} holds a '{kind}' run; murgat annotate labels score runs (sentences and facts) and "
                "faithfulness runs (steps)")
    if absent_folder(run):
        return absent_folder(run)
    if not (run / "summary.json").exists():
        return f"{run} has no summary.json (run murgat {kind or 'score'} first)"
    if kind == "faithfulness" and args.strata is not None:
        return ("--strata: a stratified sample is estimated for score runs' figures; a faithfulness run's UPR is not "
                "(draw --sample N, or --by video)")
    return None


def _cmd_annotate(args: AnnotateSettings) -> int:
    """Check the options and the run, draw the sample (if any), write the page and say what next."""
    from murgat.engine.folder import RunFolder, read_kind

    run = Path(args.run)
    kind = read_kind(run)
    error = _arg_error(args) or _run_error(run, kind, args)
    if error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    name = args.annotator.strip()
    out = Path(args.out) if args.out else run / f"annotate-{re.sub(r'[^A-Za-z0-9_-]+', '_', name)}.html"
    if kind == "faithfulness":
        from murgat.core.steps import FaithResult

        results = RunFolder(run, repair=False, record=FaithResult).latest_results()
    else:
        results = RunFolder(run, repair=False).latest_results(slim=True)
    sample = _draw(args, run, results)
    if sample is None:
        return 2
    path = _write_page(args, run, kind, out, name, results, sample)
    if sample:
        print(_drawn_line(sample["design"]))
    task = " --task faithfulness" if kind == "faithfulness" else ""
    print(f"wrote {path}: open it in a browser, label, then 'export labels' and run "
          f"murgat calibrate --human LABELS.jsonl --run {run}{task}")
    return 0


def _write_page(args: AnnotateSettings, run: Path, kind: str | None, out: Path, name: str, results: list[Any],
                sample: dict[str, Any]) -> Path:
    """The labelling page: the viewer's for a score run, the steps page for a faithfulness run."""
    from murgat.report.pages import build_report

    if kind != "faithfulness":
        return build_report([run], out, copy_media=args.copy_media, media_root=args.media_root, annotator=name,
                            sample=sample or None)
    from murgat.engine.runs import read_summary
    from murgat.report.pages import run_media_root
    from murgat.report.steps import faithfulness_report

    summary = read_summary(run)  # a damaged summary.json: RunUnreadable, named (exit 2), not a traceback
    if sample:
        results = [r for r in results if r.id in set(sample["ids"])]
    return faithfulness_report(out, results, summary, run_media_root(run, args.media_root), annotator=name,
                               sample_design=sample["design"] if sample else None)


def _drawn_line(d: dict[str, Any]) -> str:
    """The line that says what was drawn and how another annotator draws the same."""
    if d["method"] == "video":
        what = f"{d['sample_videos']} of {d['n_videos']} videos ({d['sample_size']} of {d['population_size']} items)"
    elif d["method"] == "stratified":
        counts = ", ".join(f"{h} {s['drawn']}/{s['population']}" for h, s in d["strata"].items())
        what = (f"{d['sample_size']} of {d['population_size']} items stratified by {d['strata_field']} "
                f"({len(d['strata'])} strata: {counts})")
    else:
        what = f"{d['sample_size']} of {d['population_size']} items"
    return (f"drew a random sample: {what}, seed {d['seed']} (recorded in the page and in every exported label "
            f"line; another annotator labels the same sample with --seed {d['seed']})")


def parse_allocation(spec: str) -> dict[str, int]:
    """``--allocation``: ``LABEL=N,LABEL=N`` or a JSON object of counts (for labels with ``,`` or ``=``);
    ``ValueError`` saying what is wrong."""
    import json

    pairs: list[tuple[Any, ...]]
    if spec.lstrip().startswith("{"):
        raw = json.loads(spec)
        pairs = list(raw.items()) if isinstance(raw, dict) else []
    else:
        pairs = [tuple(p.rsplit("=", 1)) for p in spec.split(",") if p.strip()]
    out: dict[str, int] = {}
    for pair in pairs:
        if len(pair) != 2 or isinstance(pair[1], bool) or not str(pair[1]).strip().isdigit():
            raise ValueError(f"{spec[:80]!r}: each stratum is LABEL=N with N a whole number (or give a JSON object)")
        out[str(pair[0]).strip()] = int(str(pair[1]).strip())
    if not out:
        raise ValueError("--allocation names no stratum")
    return out


def _draw(args: AnnotateSettings, run: Path, results: list[Any]) -> dict[str, Any] | None:
    """``{}`` without a sample; else ``{"ids", "design"}``; None (after the error) when it cannot be drawn."""
    if args.sample is None and args.allocation is None:
        return {}
    from murgat.core.corrected import population, strata_of
    from murgat.human_eval.sampling import check_seed, draw_sample, draw_stratified, new_seed

    ids, videos = population(results)
    if not ids:
        print(f"error: {run} has no item without an error to sample from", file=sys.stderr)
        return None
    seed = new_seed() if args.seed is None else args.seed
    try:
        check_seed(seed)
        if args.strata is not None:
            n: int | dict[str, int] = parse_allocation(args.allocation) if args.allocation else int(args.sample or 0)
            drawn, design = draw_stratified(ids, strata_of(results, args.strata), n, seed=seed, field=args.strata,
                                            run=str(run))
        else:
            drawn, design = draw_sample(ids, int(args.sample or 0), seed=seed,
                                        videos=videos if args.by == "video" else None, run=str(run))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    return {"ids": drawn, "design": design.model_dump()}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_command(sub, AnnotateSettings, _cmd_annotate,
                help="write a page for labelling a score run by hand (for murgat calibrate --human)")
