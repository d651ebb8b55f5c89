"""Reports for people: ``score``'s console tables (``report.html`` is :mod:`murgat.report.viewer`; runs side by side
are :mod:`murgat.core.comparison`). rich is imported when a table is drawn, not with the module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from murgat.core.cells import Cell
from murgat.core.comparison import fmt
from murgat.core.metric import METRICS, MODALITY_GROUPS, items_covered
from murgat.core.schema import ResponseResult, RunSummary
from murgat.core.terminal import for_terminal

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def summary_table(summary: RunSummary, title: str) -> Table:
    from rich.table import Table
    from rich.text import Text

    t = Table(title=Text(for_terminal(title)))
    t.add_column("metric")
    t.add_column("mean [95% CI]")
    t.add_column("n")
    for m in METRICS:
        iv = getattr(summary, m)
        t.add_row(f"{m} ({items_covered(iv.n, summary.n_items)})" if m == "murgat_s" else m, fmt(iv), str(iv.n))
    if summary.accuracy:
        t.add_row("accuracy (an answer not read counts as not correct)", fmt(summary.accuracy), str(summary.accuracy.n))
    if summary.attributed_accuracy:
        t.add_row(f"attributed acc. (MURGAT-S ≥ {summary.attributed_threshold:g})", fmt(summary.attributed_accuracy),
                  str(summary.attributed_accuracy.n))
    if summary.accuracy:
        t.add_row("answers not read", str(summary.n_answer_unknown), "")
        if summary.n_answer_unknown and summary.accuracy_answered:
            t.add_row("accuracy over the answers read", fmt(summary.accuracy_answered), str(summary.accuracy_answered.n))
    t.add_row("time-like texts not read as citations", str(summary.n_time_like), "")
    return t


def items_table(results: Sequence[ResponseResult], limit: int = 50) -> Table:
    """The first ``limit`` responses, one row each. Ids, answers and error messages come from the input:
    each is a :class:`murgat.core.cells.Cell` (plain text, no markup read in it, control characters shown
    as escapes by :func:`murgat.core.terminal.for_terminal`; wrapped at spaces and path separators, never
    inside a word)."""
    from rich.table import Table

    t = Table(title="per response")
    for col in ("id", "case", "V", "Vc", "facts", "undet.", "cov", "P", "R", "F1", "MURGAT-S", "ans"):
        t.add_column(col)

    def f(x: float | None) -> str:
        return "–" if x is None else f"{x:.2f}"

    for r in list(results)[:limit]:
        if r.error:
            t.add_row(Cell(r.id), "[red]error[/red]", "", "", "", "", "", "", "", "", "", Cell(r.error[:60]))
            continue
        s = r.scores
        ans = ("? not read" if r.answer_problem else "") if r.correct is None else (
            ("✓" if r.correct else "✗") + f" {r.predicted_option or '-'}")
        t.add_row(Cell(r.id), r.case, str(r.n_verifiable), str(r.n_verifiable_cited), str(r.n_facts),
                  str(r.n_facts_undetermined), f(s.coverage), f(s.precision), f(s.recall), f(s.f1), f(s.murgat_s), Cell(ans))
    return t


def modality_table(by: dict[str, Any], blind: dict[str, Any] | None = None) -> Table:
    """Facts' precision, recall and F1 per modality of their citations (fact-level means; see
    :func:`murgat.core.metric.modality_figures`), and the modality check's blindness rate when it ran."""
    from rich.table import Table

    t = Table(title="facts by the modality of their citations (means over judged facts)")
    for c in ("citations", "facts judged", "undetermined", "precision", "recall", "F1"):
        t.add_column(c)
    for g in (*MODALITY_GROUPS, "all"):
        row = by.get(g) or {}
        if g != "all" and not row.get("n_facts") and not row.get("n_undetermined"):
            continue
        t.add_row(g, str(row.get("n_facts", 0)), str(row.get("n_undetermined", 0)), _num(row.get("precision")),
                  _num(row.get("recall")), _num(row.get("f1")))
    if blind:
        t.caption = blindness_line(blind)
    return t


def blindness_line(b: dict[str, Any]) -> str:
    """The modality check in one line: the share of supported facts still judged supported with the
    cited time in the other modality."""
    if b.get("rate") is None:
        return f"modality check: {b.get('reason') or 'no fact could be rechecked'}"
    return (f"modality check: {b['n_still_supported']} of {b['n']} supported facts still judged supported with the "
            f"other modality → blindness rate {b['rate']:.3f} [{b['ci_low']:.3f}, {b['ci_high']:.3f}] "
            f"(near 0: the judge tells sound from picture; near 1: it does not)")


def print_summary(summary: RunSummary, results: Sequence[ResponseResult], title: str, console: Console | None = None) -> None:
    from rich.console import Console
    from rich.text import Text

    con = console or Console()
    con.print(items_table(results))
    con.print(summary_table(summary, title))
    if summary.extra.get("by_modality"):
        con.print(modality_table(summary.extra["by_modality"], summary.extra.get("modality_check")))
    cases = ", ".join(f"{k}: {v}" for k, v in sorted(summary.cases.items()))
    con.print(f"items {summary.n_items} · errors {summary.n_errors} · cases {cases}")
    if summary.n_answer_unknown:
        con.print(f"[yellow]{summary.n_answer_unknown} answer(s) could not be read (answer_problem in results.jsonl): "
                  "counted as not correct in accuracy and attributed accuracy[/yellow]")
    if summary.n_time_like:
        con.print(f"[yellow]{summary.n_time_like} time-like text(s) were not read as citations (they support nothing; "
                  "each sentence's time_like lists them with the nearest accepted spelling; murgat validate shows "
                  "them)[/yellow]")
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
        con.print(Text(for_terminal(ex["judge_notes"]), style="yellow"))
    if ex.get("repeats"):
        con.print(repeats_line(ex["repeats"]), soft_wrap=True)


def _num(x: float | None, pattern: str = "{:.3f}") -> str:
    return "–" if x is None else pattern.format(x)


def repeats_line(rep: dict[str, Any]) -> str:
    """``score --repeats``: how stable the judge's verdicts and MURGAT-S were over the repeats (one line)."""
    f, v, sp = rep["facts"], rep["verifiability"], rep["murgat_s"]
    text = (f"repeats {rep['k']} (seeds {rep['seeds'][0]}–{rep['seeds'][-1]}, temperature {rep['temperature']:g}): "
            f"facts flip {_num(f['flip_share'], '{:.1%}')} ({f['n_flipped']} of {f['n_facts_repeated']}), agreement "
            f"with the majority {_num(f['mean_agreement'])}, Fleiss κ {_num(f['fleiss_kappa'])}; verifiability flips "
            f"{_num(v['flip_share'], '{:.1%}')}; ties {rep['n_tied']}; MURGAT-S over repeats {_num(sp['mean'])} "
            f"(sd {_num(sp['sd'])}, {_num(sp['min'])}–{_num(sp['max'])})")
    return text + (f" — [yellow]{rep['note']}[/yellow]" if rep.get("note") else "")


def _k(x: float | None, reason: str | None = None) -> str:
    """κ or α: 'undefined' when it is (one class on both sides), not a dash that reads as missing, with
    the reason when it is known."""
    if x is None:
        return f"undefined ({reason})" if reason else "undefined"
    return f"{x:.3f}"


def agreement_table(ag: dict[str, Any]) -> Table:
    """Agreement between judges of the same responses (:mod:`murgat.core.agreement`): Cohen's κ of each
    pair, Krippendorff's α across all, and with human labels the correlation of their errors and the
    effective number of independent judges (``summarize`` and ``calibrate`` print it)."""
    from rich.table import Table

    t = Table(title="agreement between the judges (decided verdicts; errors against the human labels)")
    for col in ("stage", "pair / all", "n", "Cohen κ / Krippendorff α", "error correlation", "effective judges"):
        t.add_column(col)
    for stage in ("verifiability", "support"):
        s = ag.get(stage) or {}
        errs = {(p["a"], p["b"]): p for p in (s.get("errors") or {}).get("pairs", [])}
        for p in s.get("pairwise_kappa", []):
            e = errs.get((p["a"], p["b"]), {})
            t.add_row(stage, f"{p['a']} · {p['b']}", str(p["n"]), _k(p["kappa"], p.get("reason")),
                      _num(e.get("correlation")) + (f" (n={e['n']})" if e else ""), "")
        a = s.get("krippendorff_alpha") or {}
        e = s.get("errors") or {}
        t.add_row(stage, "all judges", str(a.get("n_units", 0)), _k(a.get("alpha"), a.get("reason")),
                  _num(e.get("mean_correlation")), _num(e.get("effective_judges")))
    ms = (ag.get("murgat_s") or {}).get("errors")
    if ms:
        t.add_row("MURGAT-S", "all judges (signed error)", "", "", _num(ms.get("mean_correlation")),
                  _num(ms.get("effective_judges")))
    return t


#: the answer columns of the runs compared: accuracy and strict attributed accuracy (an answer not read
#: counts as not correct in both), and how many answers could not be read
ANSWER_COLUMNS = (("accuracy", "accuracy"), ("attributed_accuracy", "SAA"), ("n_answer_unknown", "answers not read"))


def comparison_table(doc: dict[str, Any]) -> Table:
    from rich.table import Table

    t = Table(title="runs compared (differences vs the first run: paired bootstrap 95% CI)")
    # whole paths over lines of at most 30 characters, broken after a "/" (murgat.core.cells), not inside a
    # name: runs/sweep/effort-low/run and …/effort-high/run differ near the end (without the cap a path would
    # claim its whole length and push the other columns off a 140-column table)
    t.add_column("run", max_width=30)
    for m in METRICS:
        t.add_column(m)
    for _, head in ANSWER_COLUMNS:
        t.add_column(head, no_wrap=True)

    def answer_cells(r: dict[str, Any]) -> list[str]:
        return [fmt(r.get(k)) if k != "n_answer_unknown" else str(r.get(k) or 0) for k, _ in ANSWER_COLUMNS]

    for r in doc["runs"]:
        t.add_row(Cell(r["run"]), *(fmt(r[m]) for m in METRICS), *answer_cells(r))
    for d in doc["differences"]:
        if d.get("note"):
            t.add_row(Cell(f"Δ {d['run']}"), "no ids in common", *([""] * (len(METRICS) - 1 + len(ANSWER_COLUMNS))))
            continue
        t.add_row(Cell(f"Δ {d['run']} (n={d.get('n_common', '?')})"), *(fmt(d[m]) for m in METRICS),
                  *([""] * len(ANSWER_COLUMNS)))
    return t
