"""Judge stability: how far a judge's verdicts hold when the same question is asked again.

``murgat score --repeats K`` asks every judge question K times (at the run's temperature, or
with K seeds); these are the pure statistics of those answers, kept here so that the scoring
code only gathers verdicts.

* :func:`majority` — the verdict used for a fact: the answer given most often; a tie for the
  top is ``unknown`` (the judge did not make up its mind, so murgat does not either). An
  abstention (``unknown``) is a vote; a failed call (``error``, ``unparseable``) is not — it is
  no answer at all. Nothing but failures gives ``error``.
* :func:`repeat_agreement` — per fact, the share of its answered repeats that equal its
  majority; over facts, that share's mean, the share of facts whose verdict *flips* (two
  different answers among its repeats) and Fleiss' κ of the repeats as raters.
* :func:`spread` — the spread of a run-level figure (MURGAT-S) over the K repeats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from murgat.human_eval.stats import fleiss_kappa

VOTES = frozenset({"yes", "no", "unknown"})


def majority(verdicts: Sequence[str | None]) -> str:
    """The majority verdict of one question's repeats (module docstring); ties → ``unknown``."""
    votes = Counter(v for v in verdicts if v in VOTES)
    if not votes:
        return "error"
    (top, k), *rest = votes.most_common()
    if rest and rest[0][1] == k:
        return "unknown"
    return str(top)


def repeat_agreement(verdicts: Mapping[Hashable, Sequence[str | None]]) -> dict[str, Any]:
    """Agreement of each fact's repeats with themselves (module docstring).

    ``verdicts``: fact → its K answers in repeat order. Facts with fewer than two answered
    repeats cannot flip or agree and are counted apart (``n_facts_unrepeated``).
    """
    per_fact: dict[Hashable, dict[str, Any]] = {}
    flips = 0
    agree = []
    for fact, vs in verdicts.items():
        answered = [v for v in vs if v in VOTES]
        maj = majority(vs)
        if len(answered) < 2:
            per_fact[fact] = {"majority": maj, "answered": len(answered), "agreement": None, "flips": None}
            continue
        share = sum(v == maj for v in answered) / len(answered)
        flip = len(set(answered)) > 1
        flips += flip
        agree.append(share)
        per_fact[fact] = {"majority": maj, "answered": len(answered), "agreement": share, "flips": flip,
                          "counts": dict(Counter(answered))}
    k_sizes = {len([v for v in vs if v in VOTES]) for vs in verdicts.values()}
    same_k = [list(v for v in vs if v in VOTES) for vs in verdicts.values()]
    kappa = None
    if len(k_sizes) == 1 and next(iter(k_sizes)) >= 2:
        kappa = fleiss_kappa(same_k)
    n_rep = len(agree)
    return {
        "n_facts": len(verdicts), "n_facts_repeated": n_rep, "n_facts_unrepeated": len(verdicts) - n_rep,
        "mean_agreement": float(np.mean(agree)) if agree else None,
        "flip_share": flips / n_rep if n_rep else None, "n_flipped": flips,
        "fleiss_kappa": kappa,
        "majority_counts": dict(Counter(d["majority"] for d in per_fact.values())),
        "per_fact": per_fact,
    }


def spread(values: Sequence[float | None]) -> dict[str, Any]:
    """Mean, standard deviation (divisor K − 1), min, max and range of one figure over K repeats;
    repeats whose figure is undefined are counted, not averaged in."""
    xs = np.asarray([v for v in values if v is not None], float)
    out: dict[str, Any] = {"k": len(values), "n_defined": len(xs)}
    if not len(xs):
        return {**out, "mean": None, "sd": None, "min": None, "max": None, "range": None}
    return {**out, "mean": float(xs.mean()), "sd": float(xs.std(ddof=1)) if len(xs) > 1 else None,
            "min": float(xs.min()), "max": float(xs.max()), "range": float(np.ptp(xs))}
