"""Figures as people read them and score runs side by side: :func:`fmt` writes an interval
(``value [low, high]``), :func:`compare` pairs runs item by item with paired bootstrap CIs of their
differences (``murgat summarize``, ``program --score``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from murgat.core.metric import METRICS, answer_state, paired_bootstrap_diff
from murgat.core.schema import Interval, ResponseResult, RunSummary


def fmt(iv: Interval | dict[str, Any] | None, spec: str = ".3f") -> str:
    """``value [low, high]`` for an interval, given as an :class:`Interval` or its JSON dict."""
    if isinstance(iv, dict):  # a dumped Interval, possibly inside a richer row (extra keys ignored)
        iv = Interval.model_validate({k: iv[k] for k in ("value", "ci_low", "ci_high", "n") if k in iv})
    if iv is None or iv.value is None:
        return "–"
    if iv.ci_low is None or iv.ci_high is None:
        return f"{iv.value:{spec}}"
    return f"{iv.value:{spec}} [{iv.ci_low:{spec}}, {iv.ci_high:{spec}}]"


def answers_note(doc: Any, unknown_key: str = "n_answer_unknown", answered_key: str = "accuracy_answered") -> str:
    """What every accuracy figure is shown with when some answers could not be read: ``" (2 answer(s)
    not read, counted as not correct; accuracy over the 5 read: 0.600)"``, or ``""`` when every
    answer was read. ``doc`` is a summary (a :class:`RunSummary` or a JSON dict)."""
    get = doc.get if isinstance(doc, dict) else lambda k, d=None: getattr(doc, k, d)
    n = get(unknown_key) or 0
    if not n:
        return ""
    answered = get(answered_key)
    if isinstance(answered, dict):
        value, read = answered.get("value"), answered.get("n")
    elif isinstance(answered, Interval):
        value, read = answered.value, answered.n
    else:
        value, read = answered, None
    over = "" if value is None else (f"; accuracy over the {read} read: {value:.3f}" if read is not None
                                     else f"; accuracy over the answers read: {value:.3f}")
    return f" ({n} answer(s) not read, counted as not correct{over})"


def compare(runs: Sequence[tuple[str, list[ResponseResult], RunSummary]], n_resamples: int = 2000,
            seed: int = 0) -> dict[str, Any]:
    """Side-by-side means and, against the first run, paired bootstrap CIs of differences."""
    base_name, base_results, _ = runs[0]
    base = {r.id: r for r in base_results if r.error is None}
    out: dict[str, Any] = {"runs": [], "differences": []}
    for name, results, summary in runs:
        # answers not read, counted from the records (summaries written before the count existed say 0)
        states = [answer_state(r) for r in results if r.error is None]
        out["runs"].append({"run": name, **{m: getattr(summary, m).model_dump() for m in METRICS},
                            "accuracy": summary.accuracy.model_dump() if summary.accuracy else None,
                            "attributed_accuracy": summary.attributed_accuracy.model_dump()
                            if summary.attributed_accuracy else None,
                            "n_answer_unknown": sum(1 for st in states if st == "unknown"),
                            "accuracy_answered": summary.accuracy_answered.model_dump()
                            if summary.accuracy_answered else None,
                            "n_items": summary.n_items, "n_errors": summary.n_errors})
    for name, results, _ in runs[1:]:
        other = {r.id: r for r in results if r.error is None}
        diff: dict[str, Any] = {"run": name, "against": base_name, "n_common": len(set(base) & set(other))}
        if not diff["n_common"]:
            diff["note"] = f"{name} and {base_name} have no scored item ids in common: no paired difference"
        for m in METRICS:
            pairs = [(getattr(base[i].scores, m), getattr(other[i].scores, m)) for i in sorted(set(base) & set(other))]
            pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
            diff[m] = paired_bootstrap_diff([a for a, _ in pairs], [b for _, b in pairs], n_resamples, seed).model_dump()
        out["differences"].append(diff)
    return out
