"""``murgat annotate RUN --annotator NAME``: a page for labelling a score run by hand, for calibration.

The page is the viewer in a blind labelling mode (no judge verdicts or scores): for each item the
annotator plays the citations and marks each sentence's verifiability and each fact's support by
its citations (and, for a fact with several, whether each citation is needed); in a faithfulness
run, each step's type and, for perception steps, its faithfulness. Labels are kept in
the browser's storage as they are made (a reload loses nothing) and exported as the JSONL that
``murgat calibrate --human`` reads (``human_eval/labels.py``). Loading other annotators' files
shows where they disagree. No server: the page opens from ``file://``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path


def _cmd_annotate(args: argparse.Namespace) -> int:
    from murgat.engine.folder import read_kind
    from murgat.viewer.report import build_report

    run = Path(args.run)
    kind = read_kind(run)
    if kind not in (None, "score", "faithfulness"):
        print(f"error: {run} holds a '{kind}' run; murgat annotate labels score runs (sentences and facts) and "
              "faithfulness runs (steps)", file=sys.stderr)
        return 2
    if not (run / "summary.json").exists():
        print(f"error: {run} has no summary.json (run murgat {kind or 'score'} first)", file=sys.stderr)
        return 2
    name = args.annotator.strip()
    if not name:
        print("error: --annotator must name the person labelling", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else run / f"annotate-{re.sub(r'[^A-Za-z0-9_-]+', '_', name)}.html"
    if kind == "faithfulness":
        import json

        from murgat.engine.folder import RunFolder
        from murgat.faithfulness.records import FaithResult
        from murgat.viewer.steps import faithfulness_report

        summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
        results = RunFolder(run, repair=False, record=FaithResult).latest_results()
        path = faithfulness_report(out, results, summary, args.media_root, annotator=name)
        task = " --task faithfulness"
    else:
        path = build_report([run], out, copy_media=args.copy_media, media_root=args.media_root, annotator=name)
        task = ""
    print(f"wrote {path}: open it in a browser, label, then 'export labels' and run "
          f"murgat calibrate --human LABELS.jsonl --run {run}{task}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("annotate", help="write a page for labelling a score run by hand (for murgat calibrate --human)")
    p.add_argument("run", help="a murgat score run folder")
    p.add_argument("--annotator", required=True, help="the name written into every exported label line")
    p.add_argument("--out", default=None, help="HTML file to write (default: RUN/annotate-NAME.html)")
    p.add_argument("--media-root", default=None, help="where the media are (default: the one the run was scored with)")
    p.add_argument("--copy-media", action="store_true", help="copy the media next to the page so the folder is portable")
    p.set_defaults(func=_cmd_annotate)
