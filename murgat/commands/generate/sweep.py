"""Sweep tables and plots: accuracy and MURGAT-S against reasoning effort, with CIs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from murgat.core.comparison import fmt as _fmt


def sweep_table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = []
    for r in rows:
        s = r["summary"]
        out.append({
            "effort": r["effort"], "n_items": s["n_items"], "n_errors": s["n_errors"],
            "accuracy": s.get("accuracy"), "murgat_s": s["murgat_s"], "coverage": s["coverage"], "f1": s["f1"],
            "accuracy_text": _fmt(s.get("accuracy")), "murgat_s_text": _fmt(s["murgat_s"]),
            "coverage_text": _fmt(s["coverage"]), "f1_text": _fmt(s["f1"]),
        })
    return {"rows": out}


def plot_sweep(doc: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["rows"]
    xs = list(range(len(rows)))
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label, color in (("accuracy", "accuracy", "C0"), ("murgat_s", "MURGAT-S", "C3")):
        ys, lo, hi = [], [], []
        for r in rows:
            iv = r.get(key) or {}
            v = iv.get("value")
            ys.append(v if v is not None else float("nan"))
            lo.append((v - iv["ci_low"]) if v is not None and iv.get("ci_low") is not None else 0)
            hi.append((iv["ci_high"] - v) if v is not None and iv.get("ci_high") is not None else 0)
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=4, label=label, color=color)
    ax.set_xticks(xs, [r["effort"] for r in rows])
    ax.set_xlabel("reasoning effort")
    ax.set_ylim(-0.05, 1.05)
    ax.legend()
    ax.set_title("accuracy and MURGAT-S by effort (95% CI)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
