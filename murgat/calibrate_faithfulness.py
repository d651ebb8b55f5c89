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

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from human_eval.labels import ResponseLabel
from human_eval.stats import binary_agreement, icc_with_ci
from murgat.faithfulness.records import FaithResult

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
        type_p, type_g, faith_p, faith_g = [], [], [], []
        for i in sorted(set(labs) & set(res)):
            steps = {s.index: s for s in res[i].steps}
            for hs in labs[i].steps:
                js = steps.get(hs.index)
                if js is None or js.status != "labelled" or hs.type is None:
                    continue
                type_p.append(js.type == "perception")
                type_g.append(hs.type == "perception")
                if hs.type == "perception" and js.type == "perception" and hs.faithful is not None and js.faithful is not None:
                    faith_p.append(bool(js.faithful))
                    faith_g.append(bool(hs.faithful))
        row["step_type"] = binary_agreement(type_p, type_g) if type_p else None
        row["step_faithful"] = binary_agreement(faith_p, faith_g) if faith_p else None
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
