"""How a finished run ends: the one rule every command uses to decide that a run failed.

A run fails (exit 1) when any item ended in an error record, or when the share of undetermined
items passes ``--max-undetermined`` (``None``: only when every item is undetermined — a run in
which nothing could be judged is never a success). The line says what failed and how many; it
is the last line a command prints on stderr.
"""

from __future__ import annotations

from typing import Any


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
            k = r.error.split(":", 1)[0]
            kinds[k] = kinds.get(k, 0) + 1
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items()))
        return f"FAILED: {len(errors)} of {n} item(s) ended in an error ({detail}); see the error field in results.jsonl"
    undet = [r for r in results if r.case == "undetermined"]
    share = len(undet) / n
    limit_hit = (len(undet) == n) if max_undetermined is None else share > max_undetermined
    if undet and limit_hit:
        judge_errors = sum(r.n_judge_errors for r in undet)
        lim = "every item" if max_undetermined is None else f"--max-undetermined {max_undetermined:g}"
        return (f"FAILED: {len(undet)} of {n} item(s) undetermined ({share:.0%}; limit: {lim}); "
                f"{judge_errors} judge request(s) got no answer — fix the judge, then rerun with --retry-errors")
    return None
