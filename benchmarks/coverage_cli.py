"""The command line and the result file of the coverage simulations (``bench_ppi_small_n.py``,
``bench_ppi_strata.py``): both take the same three numbers and write one JSON document, so the
options, their meaning and where the result goes are said once here."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def coverage_args(doc: str | None, labelled: int) -> argparse.Namespace:
    """``--draws`` (simulated samples), ``--n`` (labels per sample, ``labelled`` by default) and
    ``--alpha`` (1 − the nominal coverage), described by the first line of the benchmark's docstring."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--n", type=int, default=labelled)
    ap.add_argument("--alpha", type=float, default=0.1)
    return ap.parse_args()


def mc_standard_error(alpha: float, draws: int) -> float:
    """The Monte Carlo standard error of a coverage estimated over ``draws`` at nominal ``1 - alpha``:
    how far a measured coverage may stray from the nominal one by chance alone."""
    return math.sqrt(alpha * (1 - alpha) / draws)


def write_result(name: str, doc: dict[str, Any]) -> None:
    """``benchmarks/results/NAME.json`` (indented, as the docs quote it), and the same on stdout."""
    text = json.dumps(doc, indent=2)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(text)
    print(text)
