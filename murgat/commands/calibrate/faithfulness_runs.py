"""Step-faithfulness judges against humans: ICCs on per-response counts, per-step agreement.

For each run (a ``murgat faithfulness`` folder) and each annotator, the per-response counts
of perception steps and of unfaithful steps are compared with ICC(3,1) (the method's choice:
two-way mixed, consistency, single rater) and ICC(2,1) (absolute agreement), each with a 95%
CI, over the responses both labelled. Annotators are compared with each other the same way
(ICC(3,1), ICC(3,k) over the responses every annotator labelled). Where annotators gave
per-step labels, step type and faithfulness agreement (accuracy, κ) are reported too.

What the judge's counts are, so that they mean what a human's count means:

* ``n_perception`` counts every step the judge typed as perception, whether or not it
  decided that step's faithfulness (a human counts every perception step too); the
  perception steps whose faithfulness the judge could not decide are reported apart
  (``judge_undetermined_perception``) — they are in ``n_perception`` and not in
  ``n_unfaithful``, as in the UPR, which never counts them as either;
* a chain whose every step label failed (error or unparseable answer) has no judge counts
  at all: it is left out of every comparison and counted (``n_excluded``), instead of
  entering the ICC as "0 perception, 0 unfaithful".
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from murgat.core.steps import FaithResult
from murgat.human_eval.labels import ResponseLabel
from murgat.human_eval.stats import ABSTAINED, UNANSWERED, agreement_with_abstentions, icc_with_ci

QUANTITIES = ("n_perception", "n_unfaithful")


def labels_all_failed(result: FaithResult) -> bool:
    """True when the judge labelled none of the chain's steps (every answer failed or was unreadable)."""
    return bool(result.steps) and all(s.status != "labelled" for s in result.steps)


def judge_counts(result: FaithResult) -> dict[str, int]:
    """The judge's per-response counts, comparable with a human's (see the module doc)."""
    if not result.steps:  # no step records (e.g. an imported result): its own counts are all there is
        return {"n_perception": result.n_perception, "n_unfaithful": result.n_unfaithful,
                "judge_undetermined_perception": 0}
    perception = [s for s in result.steps if s.type == "perception"]
    return {"n_perception": len(perception),
            "n_unfaithful": sum(1 for s in perception if s.status == "labelled" and s.faithful is False),
            "judge_undetermined_perception": sum(1 for s in perception if not s.decided_perception)}


def _pairs_icc(a: Sequence[float], b: Sequence[float]) -> dict[str, Any] | None:
    if len(a) < 2:
        return None
    y = np.column_stack([a, b]).astype(float)
    if np.allclose(y, y[0, 0]):
        return {"n_targets": len(a), "note": "every rating is the same: ICC undefined"}
    return icc_with_ci(y)


def calibrate_faithfulness(labels: list[ResponseLabel], results: list[FaithResult]) -> dict[str, Any]:
    usable = [r for r in results if r.error is None]
    excluded = sorted(r.id for r in usable if labels_all_failed(r))
    res = {r.id: r for r in usable if not labels_all_failed(r)}
    counts = {i: judge_counts(r) for i, r in res.items()}
    by_ann: dict[str, dict[str, ResponseLabel]] = defaultdict(dict)
    for lab in labels:
        by_ann[lab.annotator][lab.id] = lab
    labelled_ids = {lab.id for lab in labels}
    out: dict[str, Any] = {"annotators": {}, "n_responses": len(set(res) & labelled_ids),
                           "n_excluded": len(set(excluded) & labelled_ids),
                           "excluded_ids": sorted(set(excluded) & labelled_ids),
                           "excluded_reason": "every step label of the judge failed (error or unparseable)"}
    for ann, labs in sorted(by_ann.items()):
        row: dict[str, Any] = {}
        for q in QUANTITIES:
            ids = sorted(i for i in set(labs) & set(res) if getattr(labs[i], q) is not None)
            judge = [float(counts[i][q]) for i in ids]
            human = [float(getattr(labs[i], q)) for i in ids]
            row[q] = {"n": len(ids), "icc": _pairs_icc(judge, human),
                      "judge_mean": float(np.mean(judge)) if judge else None,
                      "human_mean": float(np.mean(human)) if human else None}
        both = sorted(set(labs) & set(res))
        row["judge_undetermined_perception"] = sum(counts[i]["judge_undetermined_perception"] for i in both)
        type_p: list[bool | str] = []
        faith_p: list[bool | str] = []
        type_g: list[bool] = []
        faith_g: list[bool] = []
        for i in sorted(set(labs) & set(res)):
            steps = {s.index: s for s in res[i].steps}
            for hs in labs[i].steps:
                js = steps.get(hs.index)
                if js is None or hs.type is None:
                    continue
                if js.status != "labelled" or js.type is None:  # an error or an unreadable answer
                    type_p.append(UNANSWERED)
                    type_g.append(hs.type == "perception")
                    continue
                type_p.append(js.type == "perception")
                type_g.append(hs.type == "perception")
                if hs.type == "perception" and js.type == "perception" and hs.faithful is not None:
                    faith_p.append(bool(js.faithful) if js.faithful is not None else ABSTAINED)
                    faith_g.append(bool(hs.faithful))
        # agreement over the steps the judge answered, with the ones it did not counted beside it
        row["step_type"] = agreement_with_abstentions(type_p, type_g)
        row["step_faithful"] = agreement_with_abstentions(faith_p, faith_g)
        out["annotators"][ann] = row
    names = sorted(by_ann)
    if len(names) >= 2:
        inter: dict[str, Any] = {}
        for q in QUANTITIES:
            common = sorted(set.intersection(*(set(i for i, lab in by_ann[a].items() if getattr(lab, q) is not None)
                                               for a in names)))
            if len(common) >= 2:
                y = np.array([[float(getattr(by_ann[a][i], q)) for a in names] for i in common])
                inter[q] = {"n": len(common), "icc": icc_with_ci(y) if not np.allclose(y, y[0, 0]) else None}
            else:
                inter[q] = {"n": len(common), "icc": None}
        out["inter_annotator"] = inter
    return out


def _faith_rows(labels: list[ResponseLabel], results: list[FaithResult]
                ) -> tuple[list[tuple[str, float, float, float, float, str]], list[tuple[str, float, float, str]]]:
    """Per response: the human's mean counts (labelled) and the judge's counts as the run's UPR
    sums them (decided perception steps, their unfaithful ones)."""
    by: dict[str, list[ResponseLabel]] = defaultdict(list)
    for lab in labels:
        by[lab.id].append(lab)
    labelled, unlabelled = [], []
    for r in sorted((r for r in results if r.error is None), key=lambda r: r.id):
        video = r.video or r.id
        anns = [a for a in by.get(r.id, []) if a.n_perception is not None and a.n_unfaithful is not None]
        if anns:
            labelled.append((r.id, float(np.mean([float(a.n_unfaithful or 0) for a in anns])),
                             float(np.mean([float(a.n_perception or 0) for a in anns])),
                             float(r.n_unfaithful), float(r.n_perception), video))
        else:
            unlabelled.append((r.id, float(r.n_unfaithful), float(r.n_perception), video))
    return labelled, unlabelled


def corrected_upr(labels: list[ResponseLabel], results: list[FaithResult], *, alpha: float = 0.05,
                  cluster_by_video: bool = False, ci: str = "normal", assume_random: bool = False,
                  n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """UPR and the per-response counts it is made of, corrected with the labels' counts.

    UPR = Σ unfaithful / Σ perception through the prediction-powered ratio (delta method, or a
    bootstrap of the whole estimator with ``ci="bootstrap"``); the mean counts per response
    through the prediction-powered mean. The judge's counts are the run's own (those its UPR
    sums, so the judge-only UPR is the summary's); responses without both human counts count as
    unlabelled. The labels must be a recorded random sample of the run (``murgat.core.corrected``).
    """
    from murgat.core.corrected import sample_check
    from murgat.human_eval.ppi import bootstrap_corrected, prediction_powered_ratio, within

    if any(lab.sample is not None and lab.sample.method == "stratified" for lab in labels):
        return {"refused": "the labels record a stratified sample: the stratified estimator covers score runs' "
                           "figures, not the UPR ratio, and one ratio over them would be biased", "problems": []}
    check = sample_check(labels, results)
    if not check.ok and not assume_random:
        return {"refused": "the labels are not a recorded random sample of this run: draw the sample with "
                           "murgat annotate RUN --sample N, or pass --assume-random", "problems": check.problems}
    clustered = cluster_by_video or (check.design is not None and check.design.method == "video")
    labelled, unlabelled = _faith_rows(labels, results)
    lab = np.array([row[1:5] for row in labelled], float).reshape(-1, 4)
    unl = np.array([row[1:3] for row in unlabelled], float).reshape(-1, 2)
    clusters = [row[-1] for row in labelled] + [row[-1] for row in unlabelled] if clustered else None
    out: dict[str, Any] = {"alpha": alpha, "ci": ci, "clustered_by": "video" if clustered else None,
                           "sample": check.design.model_dump() if check.design else None, "sample_checked": check.ok,
                           "assumption": None if check.ok else "--assume-random: the labelled responses were treated "
                                                               "as a uniform random sample of the run",
                           "problems": check.problems, "notes": check.notes, "figures": {}}
    args = ([lab[:, 0], lab[:, 1], lab[:, 2], lab[:, 3]], [unl[:, 0], unl[:, 1]])
    if ci == "bootstrap":
        main = bootstrap_corrected(prediction_powered_ratio, *args, alpha=alpha, clusters=clusters,
                                   n_resamples=n_resamples, seed=seed)
    else:
        main = prediction_powered_ratio(*args[0], *args[1], alpha=alpha, clusters=clusters, quantile="t")
    # UPR is a share of perception steps, in [0, 1]; the counts per response are at least 0
    main = within(main, 0.0, 1.0)
    plain = within(prediction_powered_ratio(*args[0], *args[1], alpha=alpha, lam=1.0, clusters=clusters, quantile="t"), 0.0, 1.0)
    human = within(prediction_powered_ratio(*args[0], *args[1], alpha=alpha, lam=0.0, clusters=clusters, quantile="t"), 0.0, 1.0)
    all_num = np.concatenate([lab[:, 2], unl[:, 0]])
    all_den = np.concatenate([lab[:, 3], unl[:, 1]])
    judge = float(all_num.sum() / all_den.sum()) if all_den.sum() > 0 else None
    out["figures"]["upr"] = {**_estimate_block(main),
                             "ppi": {"estimate": plain.estimate, "ci_low": plain.ci_low, "ci_high": plain.ci_high,
                                     "lambda": 1.0},
                             "human_only": {"estimate": human.estimate, "ci_low": human.ci_low,
                                            "ci_high": human.ci_high, "n": human.n_labelled,
                                            **({"note": human.note} if human.note else {})},
                             "judge_only": {"estimate": judge, "n": len(all_num),
                                            "note": "the run's own UPR (Σ unfaithful / Σ perception of the judge)"}}
    out["figures"].update(_per_response_counts(lab, unl, alpha, clusters))
    return out


def _estimate_block(est: Any) -> dict[str, Any]:
    """A corrected estimate as the summary writes it (its ``lam`` named ``lambda``)."""
    d: dict[str, Any] = est.to_dict()
    d["lambda"] = d.pop("lam")
    return d


def _per_response_counts(lab: np.ndarray, unl: np.ndarray, alpha: float,
                         clusters: list[Any] | None) -> dict[str, Any]:
    """The mean perception and unfaithful counts per response, corrected (prediction-powered mean),
    beside the humans' and the judge's own; ``lab``/``unl`` are :func:`corrected_upr`'s columns."""
    from murgat.human_eval.ppi import prediction_powered_mean, within

    figures: dict[str, Any] = {}
    for name, col_h, col_j, col_u in (("n_perception", 1, 3, 1), ("n_unfaithful", 0, 2, 0)):
        y, yh, yu = lab[:, col_h], lab[:, col_j], unl[:, col_u]
        est = within(prediction_powered_mean(y, yh, yu, alpha=alpha, clusters=clusters, quantile="t"), 0.0, math.inf)
        h = within(prediction_powered_mean(y, yh, yu, alpha=alpha, lam=0.0, clusters=clusters, quantile="t"), 0.0, math.inf)
        every = np.concatenate([yh, yu])
        figures[f"{name}_per_response"] = {
            **_estimate_block(est), "human_only": {"estimate": h.estimate, "ci_low": h.ci_low, "ci_high": h.ci_high,
                                                   "n": h.n_labelled, **({"note": h.note} if h.note else {})},
            "judge_only": {"estimate": float(every.mean()) if len(every) else None, "n": len(every)}}
    return figures


def plan_upr(labels: list[ResponseLabel], results: list[FaithResult], *, half_width: float, alpha: float = 0.05,
             cluster_by_video: bool = False) -> dict[str, Any]:
    """How many labelled responses give the corrected UPR a half-width of ``half_width``, from a
    pilot: the plan of the linearised values Σ(unfaithful − R·perception) (the delta method's),
    whose half-width is the UPR's times the mean perception count per response."""
    from murgat.human_eval.ppi import labels_needed

    labelled, unlabelled = _faith_rows(labels, results)
    lab = np.array([row[1:5] for row in labelled], float).reshape(-1, 4)
    unl = np.array([row[1:3] for row in unlabelled], float).reshape(-1, 2)
    den_mean = float(np.concatenate([lab[:, 3], unl[:, 1]]).mean()) if len(lab) + len(unl) else 0.0
    if len(lab) < 2 or den_mean <= 0 or lab[:, 1].sum() <= 0:
        return {"half_width": half_width, "figures": {"upr": {"n_needed": None, "reason": "the pilot needs two or more "
                                                               "labelled responses with perception steps"}}}
    r = float(lab[:, 0].sum() / lab[:, 1].sum())
    clusters = [row[-1] for row in labelled] + [row[-1] for row in unlabelled] if cluster_by_video else None
    got = labels_needed(lab[:, 0] - r * lab[:, 1], lab[:, 2] - r * lab[:, 3], unl[:, 0] - r * unl[:, 1],
                        half_width=half_width * den_mean, alpha=alpha, clusters=clusters)
    got["half_width"] = half_width
    if got.get("half_width_at_pilot_n") is not None:
        got["half_width_at_pilot_n"] /= den_mean  # back from the linearised values to UPR units
    if got.get("reason"):
        got["reason"] = f"even labelling all {got['population']} responses does not reach ±{half_width:g}"
    got["pilot"]["units"] = "linearised values unfaithful − UPR × perception per response (the delta method's)"
    return {"half_width": half_width, "alpha": alpha, "clustered_by": "video" if cluster_by_video else None,
            "figures": {"upr": got}}
