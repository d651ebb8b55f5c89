"""Agreement between judges that scored the same responses (two or more runs), and, where human
labels exist, how correlated their mistakes are.

Units compared (decided verdicts only: an abstention or failure is absent, not a "no"):

* ``verifiability``: each sentence (response id, sentence index) → the judge's verifiable flag;
* ``support``: each fact → its joint verdict (yes/no). Between judges a fact is identified by
  its text (normalised case and spaces), so judges that decomposed alike are compared on every
  fact and others on the facts they share; against people each judge's facts are matched to the
  annotators' facts (``murgat.human_eval.matching``, as ``murgat calibrate`` matches them) and the unit
  is the human fact, so judges that split a sentence differently are still compared.
* ``murgat_s``: the response's MURGAT-S (errors against people only: judge − mean human).

Per stage: Cohen's κ of every pair, Krippendorff's α (nominal) across all runs, and with labels
the correlation of the judges' errors and the effective number of independent judges
(``murgat.human_eval.agreement``). ``murgat calibrate`` prints it for two or more runs; ``summarize``
can call :func:`judge_agreement` the same way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from murgat.core.corrected import human_figures, majority, reference_sentence
from murgat.core.schema import ResponseResult
from murgat.human_eval.agreement import alpha_across, error_correlation
from murgat.human_eval.labels import ResponseLabel, by_id
from murgat.human_eval.matching import lexical_similarity, match_facts
from murgat.human_eval.stats import pairwise_cohen_kappa


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _judge_units(results: Sequence[ResponseResult]) -> dict[str, dict[Hashable, Any]]:
    ver: dict[Hashable, Any] = {}
    sup: dict[Hashable, Any] = {}
    for r in results:
        if r.error is not None:
            continue
        for sr in r.sentences:
            if sr.verifiable is not None:
                ver[(r.id, sr.sentence.index)] = sr.verifiable
            verdicts = {v.fact_index: v for v in sr.verdicts}
            for f in sr.facts:
                v = verdicts.get(f.index)
                if v is not None and v.joint in ("yes", "no"):
                    sup[(r.id, sr.sentence.index, _norm(f.text))] = v.joint == "yes"
    return {"verifiability": ver, "support": sup}


def _human_units(labels: Sequence[ResponseLabel], results: Mapping[str, Sequence[ResponseResult]],
                 similarity: Callable[[str, str], float], threshold: float
                 ) -> tuple[dict[str, dict[Hashable, Any]], dict[str, dict[str, dict[Hashable, Any]]]]:
    """Human labels per unit, and each run's decided verdicts on those same (human) units."""
    lab = by_id(list(labels))
    ok = {run: {r.id: r for r in rs if r.error is None} for run, rs in results.items()}
    human: dict[str, dict[Hashable, Any]] = {"verifiability": {}, "support": {}, "murgat_s": {}}
    judged: dict[str, dict[str, dict[Hashable, Any]]] = {
        run: {"verifiability": {}, "support": {}, "murgat_s": {}} for run in results}
    for rid, anns in lab.items():
        per_sent: dict[int, list[Any]] = defaultdict(list)
        for a in anns:
            for s in a.sentences:
                per_sent[s.index].append(s)
        for idx, hs in per_sent.items():
            gold = majority([s.verifiable for s in hs])
            if gold is not None:
                human["verifiability"][(rid, idx)] = gold
            ref = reference_sentence(hs)
            if ref is not None:
                for k, f in enumerate(ref.facts):
                    if f.supported is not None:
                        human["support"][(rid, idx, k)] = bool(f.supported)
        for run, by_rid in ok.items():
            r = by_rid.get(rid)
            if r is None:
                continue
            if r.scores.murgat_s is not None:
                judged[run]["murgat_s"][rid] = r.scores.murgat_s
            hm = human_figures(anns, r)["murgat_s"]
            if hm is not None:
                human["murgat_s"][rid] = hm
            for sr in r.sentences:
                if sr.verifiable is not None:
                    judged[run]["verifiability"][(rid, sr.sentence.index)] = sr.verifiable
                ref = reference_sentence(per_sent.get(sr.sentence.index, []))
                if ref is None or not sr.facts:
                    continue
                m = match_facts([f.text for f in sr.facts], [f.text for f in ref.facts], similarity, threshold)
                verdicts = {v.fact_index: v for v in sr.verdicts}
                for pi, gi, _ in m.pairs:
                    v = verdicts.get(sr.facts[pi].index)
                    if v is not None and v.joint in ("yes", "no"):
                        judged[run]["support"][(rid, sr.sentence.index, gi)] = v.joint == "yes"
    return human, judged


def judge_agreement(runs: Mapping[str, Sequence[ResponseResult]], labels: Sequence[ResponseLabel] | None = None, *,
                    similarity: Callable[[str, str], float] = lexical_similarity,
                    threshold: float = 0.5) -> dict[str, Any]:
    """Agreement between the runs' judges per stage, and with ``labels`` their error correlation."""
    units = {run: _judge_units(rs) for run, rs in runs.items()}
    out: dict[str, Any] = {"runs": list(runs)}
    for stage in ("verifiability", "support"):
        ratings = {run: u[stage] for run, u in units.items()}
        out[stage] = {"pairwise_kappa": pairwise_cohen_kappa(ratings), "krippendorff_alpha": alpha_across(ratings)}
    if labels:
        human, judged = _human_units(labels, runs, similarity, threshold)
        for stage in ("verifiability", "support"):
            out[stage]["errors"] = error_correlation({run: j[stage] for run, j in judged.items()}, human[stage])
        out["murgat_s"] = {"errors": error_correlation({run: j["murgat_s"] for run, j in judged.items()},
                                                       human["murgat_s"], numeric=True)}
    return out


def _identity(r: ResponseResult) -> tuple[str, str]:
    """What says two runs' records are of the same response: the input digest the engine stamps (the
    item and its media's content, never the judge), else — records from before digests — the text
    of its sentences."""
    if r.input_digest:
        return "digest", r.input_digest
    return "text", "\n".join(sr.sentence.text for sr in r.sentences)


def agreement_on_shared(runs: Mapping[str, Sequence[ResponseResult]], labels: Sequence[ResponseLabel] | None = None,
                        **kw: Any) -> dict[str, Any]:
    """:func:`judge_agreement` over the responses every run scored (what ``murgat summarize`` shows for
    two or more runs): an id counts only when its response is the same in every run (same input
    digest; legacy records by their sentences' text) and no run's record is an error. Runs of other
    models over the same questions share ids, not responses: they are counted apart
    (``n_different_responses``), and with nothing shared the block says so instead of a κ of nothing."""
    ok = {run: {r.id: r for r in rs if r.error is None} for run, rs in runs.items()}
    common = set.intersection(*(set(by_id) for by_id in ok.values())) if ok else set()
    same = sorted(i for i in common if len({_identity(ok[run][i]) for run in ok}) == 1)
    out: dict[str, Any] = {"n_common_ids": len(common), "n_responses": len(same),
                           "n_different_responses": len(common) - len(same)}
    if len(runs) < 2 or not same:
        why = "fewer than two runs" if len(runs) < 2 else (
            "the runs share no response (the same ids with other responses are other models' answers)" if common
            else "the runs share no item id")
        return {**out, "note": f"no agreement between judges: {why}"}
    keep = set(same)
    return {**out, **judge_agreement({run: [r for r in rs if r.id in keep] for run, rs in runs.items()}, labels, **kw)}
