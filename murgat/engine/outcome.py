"""How an item fails and how a finished run ends: the one rule every command uses to decide that
a run failed.

An item that cannot be done gets an error record: its ``error`` is one line, ``KIND: detail``, and
its ``error_kind`` the kind alone (``missing_media``, ``corrupt_media``, ``internal_error``, …) —
an :class:`ItemFailure`, made where the failure is found. Records of earlier versions have only
the line; :func:`error_kind` reads their kind from it.

A run fails (exit 1) when any item ended in an error record, or when the share of undetermined
items passes ``--max-undetermined`` (``None``: only when every item is undetermined — a run in
which nothing could be judged is never a success). The line says what failed and how many; it
is the last line a command prints on stderr.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ItemFailure:
    """Why one item could not be done: its kind (what summaries count) and the detail."""

    kind: str
    detail: str

    @property
    def line(self) -> str:
        """The record's ``error``: ``KIND: detail``."""
        return f"{self.kind}: {self.detail}"


def error_kind(record: Any) -> str | None:
    """The kind of an error record: its ``error_kind``, else (records of earlier versions) the text
    of its error line before the first colon; ``None`` for a record without an error."""
    get = record.get if isinstance(record, dict) else lambda k, d=None: getattr(record, k, d)
    line = get("error") or get("generation_error")
    if not line:
        return None
    return str(get("error_kind") or str(line).split(":", 1)[0])


def _first_cause(r: Any) -> str | None:
    """An undetermined item's first judge failure: ``judge_failure`` of a score record, or the
    reason of the first step a faithfulness record could not label."""
    if getattr(r, "judge_failure", None):
        return str(r.judge_failure)
    for s in getattr(r, "steps", None) or []:
        if getattr(s, "status", "labelled") != "labelled" and s.reason:
            reason = str(s.reason)
            return reason if len(reason) <= 500 else reason[:499] + "…"
    return None


def failure_line(results: list[Any], max_undetermined: float | None) -> str | None:
    """What failed in a finished run, in one line, or ``None`` when the run succeeded.

    A run fails when any item ended in an error record, or when the share of undetermined
    items passes ``max_undetermined`` (``None``: only when every item is undetermined — a
    run in which nothing could be judged is never a success).
    """
    n = len(results)
    if n == 0:
        return None
    errors = [r for r in results if r.error]
    if errors:
        kinds: dict[str, int] = {}
        for r in errors:
            k = error_kind(r) or "error"
            kinds[k] = kinds.get(k, 0) + 1
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items()))
        return f"FAILED: {len(errors)} of {n} item(s) ended in an error ({detail}); see the error field in results.jsonl"
    undet = [r for r in results if r.case == "undetermined"]
    share = len(undet) / n
    limit_hit = (len(undet) == n) if max_undetermined is None else share > max_undetermined
    if undet and limit_hit:
        judge_errors = sum(r.n_judge_errors for r in undet)
        unreadable = sum((r.undetermined_causes or {}).get("unparseable", 0) for r in undet)
        # a decomposition answer that could not be used (not JSON, no facts) is unreadable too: asked again
        undecomposed = sum((r.undetermined_causes or {}).get("decomposition", 0) for r in undet)
        over = sum((r.undetermined_causes or {}).get("over_limit", 0) for r in undet)
        lim = "every item" if max_undetermined is None else f"--max-undetermined {max_undetermined:g}"
        cause = next((f"; first cause: {c}" for r in undet if (c := _first_cause(r))), "")
        capped = (f"; {over} fact(s) over --max-citations-per-fact / --max-evidence-s were not judged (raise the cap "
                  "in a new --out to judge them)") if over else ""
        if over and not (judge_errors or unreadable or undecomposed):
            return f"FAILED: {len(undet)} of {n} item(s) undetermined ({share:.0%}; limit: {lim}){capped}"
        if not (judge_errors or unreadable or undecomposed):
            # every request was answered: the judge abstained ('unknown'), which a rerun would not change
            return (f"FAILED: {len(undet)} of {n} item(s) undetermined ({share:.0%}; limit: {lim}); every request was "
                    "answered — the judge abstained (unknown) on what it could not check; a judge that can see the "
                    f"cited media, or a higher --max-undetermined, decides them{capped}")
        split = (f", {undecomposed} sentence(s) could not be split into facts (the decomposer's answer was not a "
                 "list of facts)") if undecomposed else ""
        return (f"FAILED: {len(undet)} of {n} item(s) undetermined ({share:.0%}; limit: {lim}); "
                f"{judge_errors} judge request(s) got no answer, {unreadable} answer(s) could not be read{split} — fix "
                f"the judge, then rerun with --retry-errors{capped}{cause}")
    return None
