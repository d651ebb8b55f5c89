"""Judge runs against human labels: how far can each stage of a judge be trusted?

For each run: verifiability agreement (balanced accuracy, P/R/F1, κ), decomposition
(fact-level P/R/F1 by optimal matching, and citation accuracy of matched facts),
attribution (agreement of support and necessity on matched facts), and response-level
correlations of coverage, precision, recall and MURGAT-S with bootstrap CIs and p-values,
plus ICC(3,1)/ICC(2,1) of judge vs mean-human MURGAT-S. Across annotators: Fleiss' κ,
mean pairwise κ and ICCs. Across runs: a ranking for judge selection.

Human response-level scores use the same formula as the judge (murgat.metric): V from
the human verifiability labels, Vc = those sentences that carry citations, facts with
citations; a fact's recall is its "supported" label and its precision the mean of
"supported and necessary" over its citations (recall itself when necessity is not labelled)
(``murgat.corrected.human_scores``).

Abstentions are figures too: for each stage, the human-labelled items the judge abstained on
(``unknown``) or could not answer (an error, an unparseable answer, no verdict) are counted
beside the agreement over the answered ones, with the accuracy when every such silence counts
as a disagreement (``human_eval.stats.agreement_with_abstentions``). The agreement over answered
items is exactly what it was before they were counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from human_eval.labels import ResponseLabel, by_id
from human_eval.matching import lexical_similarity, match_facts
from human_eval.stats import (
    ABSTAINED,
    UNANSWERED,
    agreement_with_abstentions,
    binary_agreement,
    correlations,
    fleiss_kappa,
    icc,
    pairwise_kappa,
    ranking_tau,
)
from murgat.citations import parse_citations
from murgat.corrected import METRICS, human_scores, majority, reference_sentence
from murgat.schema import ResponseResult

__all__ = ["METRICS", "calibrate_run", "human_scores", "inter_annotator", "plot_run", "rules_baseline", "select_judges"]

Progress = Callable[[int], None]


def _silence(verdict: str | None) -> str:
    """How the judge failed to decide: it abstained (``unknown``) or gave no readable answer."""
    return ABSTAINED if verdict == "unknown" else UNANSWERED


def _offset(progress: Progress, done: int) -> Progress:
    return lambda k: progress(done + k)


def _citation_keys(raws: Sequence[str]) -> set[tuple[Any, ...]]:
    out = set()
    for raw in raws:
        for c in parse_citations(f"({raw})"):
            out.add(c.key())
    return out


def calibrate_run(labels: list[ResponseLabel], results: list[ResponseResult], *, n_resamples: int = 10_000, seed: int = 0,
                  similarity: Callable[[str, str], float] = lexical_similarity, threshold: float = 0.5,
                  progress: Progress | None = None) -> dict[str, Any]:
    """All statistics for one judge run against the labels (joined by response id).

    ``progress`` is called with the bootstrap resamples done, out of ``len(METRICS) × 3 ×
    n_resamples`` (the response-level correlations are most of the time this takes)."""
    lab = by_id(labels)
    res = {r.id: r for r in results if r.error is None}
    shared = sorted(set(lab) & set(res))
    v_pred: list[bool | str] = []
    v_gold: list[bool] = []
    n_pred = n_gold = n_match = cite_ok = cite_n = 0
    sup_pred: list[bool | str] = []
    sup_gold: list[bool] = []
    nec_pred: list[bool | str] = []
    nec_gold: list[bool] = []
    per_resp: dict[str, dict[str, list[float]]] = {m: {"judge": [], "human": []} for m in METRICS}
    resp_ids: list[str] = []
    for rid in shared:
        r, anns = res[rid], lab[rid]
        sents = {sr.sentence.index: sr for sr in r.sentences}
        human_sent: dict[int, list[Any]] = defaultdict(list)
        for a in anns:
            for s in a.sentences:
                human_sent[s.index].append(s)
        for idx, hs in human_sent.items():
            sr = sents.get(idx)
            if sr is None:
                continue
            gold = majority([s.verifiable for s in hs])
            if gold is not None:
                v_pred.append(sr.verifiable if sr.verifiable is not None else _silence(sr.verify_verdict))
                v_gold.append(gold)
            ref = reference_sentence(hs)  # first annotator who decomposed this sentence
            if ref is None or not sr.facts:
                continue
            m = match_facts([f.text for f in sr.facts], [f.text for f in ref.facts], similarity, threshold)
            n_pred += m.n_pred
            n_gold += m.n_gold
            n_match += len(m.pairs)
            verdicts = {v.fact_index: v for v in sr.verdicts}
            for pi, gi, _ in m.pairs:
                jf, hf = sr.facts[pi], ref.facts[gi]
                same = {c.key() for c in jf.citations} == _citation_keys(hf.citations)
                cite_n += 1
                cite_ok += same
                v = verdicts.get(jf.index)
                if hf.supported is not None:
                    sup_pred.append(v.joint == "yes" if v is not None and v.joint in ("yes", "no")
                                    else _silence(v.joint if v is not None else None))
                    sup_gold.append(bool(hf.supported))
                if v is not None and same and hf.necessary is not None and len(v.precise) == len(hf.necessary):
                    for jp, hn in zip(v.precise, hf.necessary, strict=True):
                        if hn is not None:
                            nec_pred.append(bool(jp) if jp is not None else _silence(v.joint))
                            nec_gold.append(bool(hn))
        humans = [human_scores(a, r) for a in anns]
        ok = True
        for m_ in METRICS:
            j = getattr(r.scores, m_)
            hv = [h[m_] for h in humans if h[m_] is not None]
            if j is None or not hv:
                ok = False
                break
        if ok:
            resp_ids.append(rid)
            for m_ in METRICS:
                per_resp[m_]["judge"].append(getattr(r.scores, m_))
                per_resp[m_]["human"].append(float(np.mean([h[m_] for h in humans if h[m_] is not None])))
    n_dropped = len(shared) - len(resp_ids)
    # labelled responses that cannot enter: said out loud, not silently left out of every statistic
    all_ids = {r.id for r in results}
    not_in_run = sorted(set(lab) - all_ids)
    error_records = sorted(set(lab) & (all_ids - set(res)))
    dec_p = n_match / n_pred if n_pred else None
    dec_r = n_match / n_gold if n_gold else None
    out: dict[str, Any] = {
        "n_responses": len(shared),
        "n_dropped_for_missing_ratings": n_dropped,
        "n_labelled_not_in_run": len(not_in_run), "labelled_not_in_run": not_in_run[:20],
        "n_labelled_with_error_records": len(error_records), "labelled_with_error_records": error_records[:20],
        "verifiability": agreement_with_abstentions(v_pred, v_gold),
        "decomposition": {
            "n_pred": n_pred, "n_gold": n_gold, "n_matched": n_match, "precision": dec_p, "recall": dec_r,
            "f1": 2 * dec_p * dec_r / (dec_p + dec_r) if dec_p and dec_r else (0.0 if n_pred and n_gold else None),
            "citation_accuracy": cite_ok / cite_n if cite_n else None, "threshold": threshold,
        },
        "support": agreement_with_abstentions(sup_pred, sup_gold),
        "necessity": agreement_with_abstentions(nec_pred, nec_gold),
        "response": {m: correlations(per_resp[m]["judge"], per_resp[m]["human"], n_resamples, seed,
                                     progress=None if progress is None else _offset(progress, k * 3 * n_resamples))
                     for k, m in enumerate(METRICS)},
        "response_points": {"ids": resp_ids, **{m: per_resp[m] for m in METRICS}},
    }
    js, hs_ = per_resp["murgat_s"]["judge"], per_resp["murgat_s"]["human"]
    out["icc_murgat_s"] = icc(np.column_stack([js, hs_])) if len(js) >= 2 else None
    systems: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"judge": [], "human": []})
    for k, rid in enumerate(resp_ids):
        sysname = next((a.system for a in lab[rid] if a.system), None) or res[rid].meta.get("system")
        if sysname:
            systems[sysname]["judge"].append(js[k])
            systems[sysname]["human"].append(hs_[k])
    if len(systems) >= 2:
        out["system_ranking"] = ranking_tau({s: float(np.mean(v["judge"])) for s, v in systems.items()},
                                            {s: float(np.mean(v["human"])) for s, v in systems.items()})
    return out


def inter_annotator(labels: list[ResponseLabel], results: dict[str, ResponseResult] | None = None) -> dict[str, Any]:
    """Agreement between people: Fleiss' κ and mean pairwise κ on verifiability and support,
    ICCs of per-annotator MURGAT-S on responses every annotator labelled."""
    lab = by_id(labels)
    annotators = sorted({a.annotator for a in labels})
    out: dict[str, Any] = {"annotators": annotators}
    if len(annotators) < 2:
        return out
    ver_items: list[list[bool]] = []
    ver_by_ann: dict[str, dict[Any, bool]] = defaultdict(dict)
    sup_by_ann: dict[str, dict[Any, bool]] = defaultdict(dict)
    sup_items: dict[Any, list[bool]] = defaultdict(list)
    for rid, anns in lab.items():
        per_sent: dict[int, list[bool]] = defaultdict(list)
        for a in anns:
            for s in a.sentences:
                if s.verifiable is not None:
                    per_sent[s.index].append(s.verifiable)
                    ver_by_ann[a.annotator][(rid, s.index)] = s.verifiable
                for f in s.facts:
                    if f.supported is not None:
                        key = (rid, s.index, f.text.strip().lower())
                        sup_by_ann[a.annotator][key] = f.supported
                        sup_items[key].append(f.supported)
        ver_items.extend(v for v in per_sent.values() if len(v) == len(anns))
    out["verifiability_fleiss_kappa"] = fleiss_kappa(ver_items)
    out["verifiability_pairwise_kappa"] = pairwise_kappa(ver_by_ann)
    out["support_fleiss_kappa"] = fleiss_kappa([v for v in sup_items.values() if len(v) >= 2])
    out["support_pairwise_kappa"] = pairwise_kappa(sup_by_ann)
    rows: list[list[float]] = []
    for rid, anns in lab.items():
        by_ann = {a.annotator: human_scores(a, (results or {}).get(rid))["murgat_s"] for a in anns}
        vals = [by_ann.get(x) for x in annotators]
        if all(v is not None for v in vals):
            rows.append([float(v) for v in vals if v is not None])
    out["murgat_s_icc"] = icc(rows) if len(rows) >= 2 else None
    return out


def select_judges(per_run: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Rank runs by mean rank over verifiability κ, support κ and MURGAT-S Pearson r."""
    keys = {
        "verifiability_kappa": lambda d: (d.get("verifiability") or {}).get("kappa"),
        "support_kappa": lambda d: (d.get("support") or {}).get("kappa"),
        "murgat_s_pearson": lambda d: d["response"]["murgat_s"]["pearson"]["value"],
    }
    names = list(per_run)
    ranks: dict[str, list[float]] = {n: [] for n in names}
    table = {n: {k: f(per_run[n]) for k, f in keys.items()} for n in names}
    for k in keys:
        # an undefined statistic (e.g. κ when one class fills both sides) ranks nobody: it is skipped
        vals = sorted((table[n][k], n) for n in names if table[n][k] is not None)
        for pos, (_, n) in enumerate(reversed(vals), 1):
            ranks[n].append(pos)
    rows = [{"run": n, **table[n], "mean_rank": float(np.mean(ranks[n])) if ranks[n] else None,
             "ranked_on": len(ranks[n])} for n in names]
    return sorted(rows, key=lambda r: (r["mean_rank"] is None, r["mean_rank"] or 0.0))


def plot_run(name: str, calib: dict[str, Any], out: Path) -> Path:
    """Judge vs human scatter with a least-squares line, one panel per metric."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = calib["response_points"]
    fig, axes = plt.subplots(2, 2, figsize=(8, 8))
    for ax, m in zip(axes.ravel(), METRICS, strict=True):
        x, y = np.asarray(pts[m]["human"]), np.asarray(pts[m]["judge"])
        ax.scatter(x, y, alpha=0.7)
        ax.plot([0, 1], [0, 1], color="#bbb", lw=1, ls="--")
        if len(x) >= 2 and np.ptp(x) > 0:
            a, b = np.polyfit(x, y, 1)
            ax.plot([0, 1], [b, a + b], color="C3", lw=1.5)
        r = calib["response"][m]["pearson"]["value"]
        ax.set_title(f"{m}  (r = {r:.2f})" if r is not None else m)
        ax.set_xlabel("human")
        ax.set_ylabel("judge")
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.05)
    fig.suptitle(f"judge vs human — {name}")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def rules_baseline(labels: list[ResponseLabel]) -> dict[str, Any]:
    """murgat's rule-based verifiability (the offline judge's) against human sentence labels."""
    from murgat.rules import rule_verifiable

    pred, gold = [], []
    for a in labels:
        for s in a.sentences:
            if s.verifiable is not None and s.text:
                pred.append(rule_verifiable(s.text)[0])
                gold.append(s.verifiable)
    facts = [f.supported for a in labels for s in a.sentences for f in s.facts if f.supported is not None]
    return {"verifiability": binary_agreement(pred, gold),
            "facts": {"n": len(facts), "supported_rate": float(np.mean(facts)) if facts else None}}
