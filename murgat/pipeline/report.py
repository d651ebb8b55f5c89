"""Reports for people: the console tables and run comparisons (``report.html`` is :mod:`murgat.viewer`)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from murgat.metric import METRICS, paired_bootstrap_diff
from murgat.schema import Interval, ResponseResult, RunSummary


def fmt(iv: Interval | dict | None, spec: str = ".3f") -> str:
    """``value [low, high]`` for an interval, given as an :class:`Interval` or its JSON dict."""
    if isinstance(iv, dict):  # a dumped Interval, possibly inside a richer row (extra keys ignored)
        iv = Interval.model_validate({k: iv[k] for k in ("value", "ci_low", "ci_high", "n") if k in iv})
    if iv is None or iv.value is None:
        return "–"
    if iv.ci_low is None:
        return f"{iv.value:{spec}}"
    return f"{iv.value:{spec}} [{iv.ci_low:{spec}}, {iv.ci_high:{spec}}]"


def summary_table(summary: RunSummary, title: str) -> Table:
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


def compare(runs: Sequence[tuple[str, list[ResponseResult], RunSummary]], n_resamples: int = 2000, seed: int = 0) -> dict:
    """Side-by-side means and, against the first run, paired bootstrap CIs of differences."""
    base_name, base_results, _ = runs[0]
    base = {r.id: r for r in base_results if r.error is None}
    out: dict = {"runs": [], "differences": []}
    for name, _results, summary in runs:
        out["runs"].append({"run": name, **{m: getattr(summary, m).model_dump() for m in METRICS},
                            "accuracy": summary.accuracy.model_dump() if summary.accuracy else None,
                            "n_items": summary.n_items, "n_errors": summary.n_errors})
    for name, results, _ in runs[1:]:
        other = {r.id: r for r in results if r.error is None}
        diff: dict = {"run": name, "against": base_name, "n_common": len(set(base) & set(other))}
        if not diff["n_common"]:
            diff["note"] = f"{name} and {base_name} have no scored item ids in common: no paired difference"
        for m in METRICS:
            pairs = [(getattr(base[i].scores, m), getattr(other[i].scores, m)) for i in sorted(set(base) & set(other))]
            pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
            diff[m] = paired_bootstrap_diff([a for a, _ in pairs], [b for _, b in pairs], n_resamples, seed).model_dump()
        out["differences"].append(diff)
    return out


def comparison_table(doc: dict) -> Table:
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
