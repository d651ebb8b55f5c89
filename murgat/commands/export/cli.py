"""``murgat export RUN``: a score run's results as a flat table (CSV, Parquet or JSONL) for analysis."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from murgat.engine.options import add_command
from murgat.settings.export import ExportSettings


def _cmd_export(args: ExportSettings) -> int:
    from murgat.core.export import ExportError, export_results
    from murgat.engine.folder import RunFolder, read_kind
    from murgat.engine.outputs import claim_output

    run = Path(args.run)
    kind = read_kind(run)
    if kind not in (None, "score"):
        print(f"error: {run} holds a '{kind}' run; murgat export flattens score runs (results.jsonl of murgat score)",
              file=sys.stderr)
        return 2
    folder = RunFolder(run, repair=False)
    if not folder.results_path.exists():
        print(f"error: {run} has no {folder.results_path.name} (run murgat score first)", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else run / f"export_{args.level}.{args.format}"
    # the one output rule: not the run's own files, not a device replaced, not a link out of its folder
    claim = claim_output(out, role="file", inputs=[folder.results_path], what=f"--out {out}")
    try:
        n = export_results(folder.latest_results(), claim, args.format, args.level)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for note in folder.notices:  # lines of results.jsonl that are not records: said, not dropped silently
        print(f"warning: {note}; those items are not in the export", file=sys.stderr)
    # streamed into /dev/stdout (or a pipe): the table owns stdout, the status line goes to stderr
    print(f"wrote {n} {args.level} rows to {out}", file=sys.stderr if claim.stream else sys.stdout)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_command(sub, ExportSettings, _cmd_export,
                help="write a score run's results as a flat table: one row per item, sentence or fact")
