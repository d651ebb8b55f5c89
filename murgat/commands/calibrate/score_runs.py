"""Judge runs against human labels: how far can each stage of a judge be trusted?

For each run: verifiability agreement (balanced accuracy, P/R/F1, κ), decomposition
(fact-level P/R/F1 by optimal matching, and citation accuracy of matched facts),
attribution (agreement of support and necessity on matched facts), and response-level
correlations of coverage, precision, recall and MURGAT-S with bootstrap CIs and p-values,
plus ICC(3,1)/ICC(2,1) of judge vs mean-human MURGAT-S. Across annotators: Fleiss' κ,
mean pairwise κ and ICCs. Across runs: a ranking for judge selection.

Human response-level scores use the same formula as the judge (murgat.core.metric): V from
the human verifiability labels, Vc = those sentences that carry citations, facts with
citations; a fact's recall is its "supported" label and its precision the mean of
"supported and necessary" over its citations (recall itself when necessity is not labelled)
(``murgat.core.corrected.human_scores``).

Abstentions are figures too: for each stage, the human-labelled items the judge abstained on
(``unknown``) or could not answer (an error, an unparseable answer, no verdict) are counted
beside the agreement over the answered ones, with the accuracy when every such silence counts
as a disagreement (``murgat.human_eval.stats.agreement_with_abstentions``). The agreement over answered
items is exactly what it was before they were counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from murgat.core.citations import parse_citations
from murgat.core.corrected import METRICS, human_scores, majority, reference_sentence
from murgat.core.schema import ResponseResult, SentenceResult
from murgat.human_eval.labels import ResponseLabel, by_id
from murgat.human_eval.matching import lexical_similarity, match_facts
from murgat.human_eval.stats import (
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


@dataclass
class _Pairs:
    """The judge's decisions paired with the people's, stage by stage, as :func:`calibrate_run`
    walks the labelled responses (``pred`` entries are the judge's decision or its abstention)."""

    similarity: Callable[[str, str], float]
    threshold: float
    v_pred: list[bool | str] = field(default_factory=list)
    v_gold: list[bool] = field(default_factory=list)
    sup_pred: list[bool | str] = field(default_factory=list)
    sup_gold: list[bool] = field(default_factory=list)
    nec_pred: list[bool | str] = field(default_factory=list)
    nec_gold: list[bool] = field(default_factory=list)
    n_pred: int = 0
    n_gold: int = 0
    n_match: int = 0
    cite_ok: int = 0
    cite_n: int = 0
    per_resp: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: {m: {"judge": [], "human": []} for m in METRICS})
    resp_ids: list[str] = field(default_factory=list)

    def add_response(self, r: ResponseResult, anns: Sequence[ResponseLabel]) -> None:
        sents = {sr.sentence.index: sr for sr in r.sentences}
        human_sent: dict[int, list[Any]] = defaultdict(list)
        for a in anns:
            for s in a.sentences:
                human_sent[s.index].append(s)
        for idx, hs in human_sent.items():
            sr = sents.get(idx)
            if sr is not None:
                self._add_sentence(sr, hs)
        humans = [human_scores(a, r) for a in anns]
        rated: dict[str, list[float]] = {m: [v for h in humans if (v := h[m]) is not None] for m in METRICS}
        if all(getattr(r.scores, m) is not None and rated[m] for m in METRICS):
            self.resp_ids.append(r.id)
            for m in METRICS:
                self.per_resp[m]["judge"].append(getattr(r.scores, m))
                self.per_resp[m]["human"].append(float(np.mean(rated[m])))

    def _add_sentence(self, sr: SentenceResult, hs: list[Any]) -> None:
        gold = majority([s.verifiable for s in hs])
        if gold is not None:
            self.v_pred.append(sr.verifiable if sr.verifiable is not None else _silence(sr.verify_verdict))
            self.v_gold.append(gold)
        ref = reference_sentence(hs)  # first annotator who decomposed this sentence
        if ref is None or not sr.facts:
            return
        m = match_facts([f.text for f in sr.facts], [f.text for f in ref.facts], self.similarity, self.threshold)
        self.n_pred += m.n_pred
        self.n_gold += m.n_gold
        self.n_match += len(m.pairs)
        verdicts = {v.fact_index: v for v in sr.verdicts}
        for pi, gi, _ in m.pairs:
            jf, hf = sr.facts[pi], ref.facts[gi]
            same = {c.key() for c in jf.citations} == _citation_keys(hf.citations)
            self.cite_n += 1
            self.cite_ok += same
            v = verdicts.get(jf.index)
            if hf.supported is not None:
                self.sup_pred.append(v.joint == "yes" if v is not None and v.joint in ("yes", "no")
                                     else _silence(v.joint if v is not None else None))
                self.sup_gold.append(bool(hf.supported))
            if v is not None and same and hf.necessary is not None and len(v.precise) == len(hf.necessary):
                for jp, hn in zip(v.precise, hf.necessary, strict=True):
                    if hn is not None:
                        self.nec_pred.append(bool(jp) if jp is not None else _silence(v.joint))
                        self.nec_gold.append(bool(hn))

    def decomposition(self) -> dict[str, Any]:
        dec_p = self.n_match / self.n_pred if self.n_pred else None
        dec_r = self.n_match / self.n_gold if self.n_gold else None
        return {"n_pred": self.n_pred, "n_gold": self.n_gold, "n_matched": self.n_match, "precision": dec_p,
                "recall": dec_r,
                "f1": 2 * dec_p * dec_r / (dec_p + dec_r) if dec_p and dec_r else (
                    0.0 if self.n_pred and self.n_gold else None),
                "citation_accuracy": self.cite_ok / self.cite_n if self.cite_n else None, "threshold": self.threshold}


def _system_ranking(pairs: _Pairs, lab: dict[str, list[ResponseLabel]],
                    res: dict[str, ResponseResult]) -> dict[str, Any] | None:
    """Kendall's τ between the systems' order by the judge and by the people (two systems or more)."""
    js, hs = pairs.per_resp["murgat_s"]["judge"], pairs.per_resp["murgat_s"]["human"]
    systems: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"judge": [], "human": []})
    for k, rid in enumerate(pairs.resp_ids):
        sysname = next((a.system for a in lab[rid] if a.system), None) or res[rid].meta.get("system")
        if sysname:
            systems[sysname]["judge"].append(js[k])
            systems[sysname]["human"].append(hs[k])
    if len(systems) < 2:
        return None
    return ranking_tau({s: float(np.mean(v["judge"])) for s, v in systems.items()},
                       {s: float(np.mean(v["human"])) for s, v in systems.items()})


def calibrate_run(labels: list[ResponseLabel], results: list[ResponseResult], *, n_resamples: int = 10_000, seed: int = 0,
                  similarity: Callable[[str, str], float] = lexical_similarity, threshold: float = 0.5,
                  progress: Progress | None = None) -> dict[str, Any]:
    """All statistics for one judge run against the labels (joined by response id).

    ``progress`` is called with the bootstrap resamples done, out of ``len(METRICS) × 3 ×
    n_resamples`` (the response-level correlations are most of the time this takes)."""
    lab = by_id(labels)
    res = {r.id: r for r in results if r.error is None}
    shared = sorted(set(lab) & set(res))
    pairs = _Pairs(similarity, threshold)
    for rid in shared:
        pairs.add_response(res[rid], lab[rid])
    # labelled responses that cannot enter: said out loud, not silently left out of every statistic
    all_ids = {r.id for r in results}
    not_in_run = sorted(set(lab) - all_ids)
    error_records = sorted(set(lab) & (all_ids - set(res)))
    per_resp = pairs.per_resp
    out: dict[str, Any] = {
        "n_responses": len(shared),
        "n_dropped_for_missing_ratings": len(shared) - len(pairs.resp_ids),
        "n_labelled_not_in_run": len(not_in_run), "labelled_not_in_run": not_in_run[:20],
        "n_labelled_with_error_records": len(error_records), "labelled_with_error_records": error_records[:20],
        "verifiability": agreement_with_abstentions(pairs.v_pred, pairs.v_gold),
        "decomposition": pairs.decomposition(),
        "support": agreement_with_abstentions(pairs.sup_pred, pairs.sup_gold),
        "necessity": agreement_with_abstentions(pairs.nec_pred, pairs.nec_gold),
        "response": {m: correlations(per_resp[m]["judge"], per_resp[m]["human"], n_resamples, seed,
                                     progress=None if progress is None else _offset(progress, k * 3 * n_resamples))
                     for k, m in enumerate(METRICS)},
        "response_points": {"ids": pairs.resp_ids, **{m: per_resp[m] for m in METRICS}},
    }
    js, hs_ = per_resp["murgat_s"]["judge"], per_resp["murgat_s"]["human"]
    out["icc_murgat_s"] = icc(np.column_stack([js, hs_])) if len(js) >= 2 else None
    ranking = _system_ranking(pairs, lab, res)
    if ranking is not None:
        out["system_ranking"] = ranking
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
    keys: dict[str, Callable[[dict[str, Any]], Any]] = {  # reads the JSON summaries
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


def plot_run(name: str, calib: dict[str, Any], out: Path | IO[bytes]) -> Path | IO[bytes]:
    """Judge vs human scatter with a least-squares line, one panel per metric (a PNG written to
    ``out``: a path, or a binary file such as an output claim's writer)."""
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
    if isinstance(out, Path):
        out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100, format="png")
    plt.close(fig)
    return out


def rules_baseline(labels: list[ResponseLabel]) -> dict[str, Any]:
    """murgat's rule-based verifiability (the offline judge's) against human sentence labels."""
    from murgat.core.rules import rule_verifiable

    pred, gold = [], []
    for a in labels:
        for s in a.sentences:
            if s.verifiable is not None and s.text:
                pred.append(rule_verifiable(s.text)[0])
                gold.append(s.verifiable)
    facts = [f.supported for a in labels for s in a.sentences for f in s.facts if f.supported is not None]
    return {"verifiability": binary_agreement(pred, gold),
            "facts": {"n": len(facts), "supported_rate": float(np.mean(facts)) if facts else None}}
