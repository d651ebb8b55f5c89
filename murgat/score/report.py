"""Reports for people: ``score``'s console tables (``report.html`` is :mod:`murgat.viewer`; runs side by side
are :mod:`murgat.comparison`). rich is imported when a table is drawn, not with the module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from murgat.comparison import fmt
from murgat.metric import METRICS
from murgat.schema import ResponseResult, RunSummary

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def summary_table(summary: RunSummary, title: str) -> Table:
    from rich.table import Table

    t = Table(title=title)
    t.add_column("metric")
    t.add_column("mean [95% CI]")
    t.add_column("n")
    for m in METRICS:
        iv = getattr(summary, m)
        t.add_row(m, fmt(iv), str(iv.n))
    if summary.accuracy:
        t.add_row("accuracy", fmt(summary.accuracy), str(summary.accuracy.n))
    if summary.attributed_accuracy:
        t.add_row(f"attributed acc. (MURGAT-S ≥ {summary.attributed_threshold:g})", fmt(summary.attributed_accuracy),
                  str(summary.attributed_accuracy.n))
    return t


def items_table(results: Sequence[ResponseResult], limit: int = 50) -> Table:
    from rich.table import Table

    t = Table(title="per response")
    for col in ("id", "case", "V", "Vc", "facts", "undet.", "cov", "P", "R", "F1", "MURGAT-S", "ans"):
        t.add_column(col)

    def f(x: float | None) -> str:
        return "–" if x is None else f"{x:.2f}"

    for r in list(results)[:limit]:
        if r.error:
            t.add_row(r.id, "[red]error[/red]", "", "", "", "", "", "", "", "", "", r.error[:60])
            continue
        s = r.scores
        ans = "" if r.correct is None else ("✓" if r.correct else "✗") + f" {r.predicted_option or '-'}"
        t.add_row(r.id, r.case, str(r.n_verifiable), str(r.n_verifiable_cited), str(r.n_facts),
                  str(r.n_facts_undetermined), f(s.coverage), f(s.precision), f(s.recall), f(s.f1), f(s.murgat_s), ans)
    return t


def print_summary(summary: RunSummary, results: Sequence[ResponseResult], title: str, console: Console | None = None) -> None:
    from rich.console import Console

    con = console or Console()
    con.print(items_table(results))
    con.print(summary_table(summary, title))
    cases = ", ".join(f"{k}: {v}" for k, v in sorted(summary.cases.items()))
    con.print(f"items {summary.n_items} · errors {summary.n_errors} · cases {cases}")
    con.print(
        f"judge requests {summary.judge_calls} (sent {summary.sent}, cache hits {summary.cache_hits}, deduplicated "
        f"{summary.deduplicated}; no answer {summary.n_judge_errors})"
        + (f" · undecided verdicts {summary.undetermined_causes}" if summary.undetermined_causes else "")
        + (f" · empty decompositions {summary.n_empty_decompositions}" if summary.n_empty_decompositions else "")
    )
    ex = summary.extra
    now = ex.get("this_invocation") or {}
    if now:
        con.print(
            f"this invocation: sent {now.get('sent', 0)}, cache hits {now.get('cache_hits', 0)}, deduplicated "
            f"{now.get('deduplicated', 0)}, retries {now.get('retries', 0)}, errors {now.get('errors', 0)}, tokens "
            f"{now.get('input_tokens', 0)}+{now.get('output_tokens', 0)}, cost ${now.get('cost_usd', 0.0):.4f}"
        )
    if ex.get("judge_notes"):
        con.print(f"[yellow]{ex['judge_notes']}[/yellow]")


def comparison_table(doc: dict[str, Any]) -> Table:
    from rich.table import Table

    t = Table(title="runs compared (differences vs the first run: paired bootstrap 95% CI)")
    t.add_column("run")
    for m in METRICS:
        t.add_column(m)
    for r in doc["runs"]:
        t.add_row(r["run"], *(fmt(r[m]) for m in METRICS))
    for d in doc["differences"]:
        if d.get("note"):
            t.add_row(f"Δ {d['run']}", "no ids in common", *([""] * (len(METRICS) - 1)))
            continue
        t.add_row(f"Δ {d['run']} (n={d.get('n_common', '?')})", *(fmt(d[m]) for m in METRICS))
    return t
