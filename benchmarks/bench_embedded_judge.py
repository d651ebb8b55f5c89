"""Agreement of the offline ``embedded`` judge with the labelled claim set.

For each claim in ``tests/data/embedded_claims/claims.jsonl`` (real media, labels from the
captions, known texts and MANIFEST notes — see that folder's README) the judge is asked
exactly as ``murgat score`` asks it (:func:`murgat.judges.embedded_check.check_claim`). Reported
per claim type and overall: abstention rate (unknown, or evidence unavailable), accuracy and
balanced accuracy on the answered claims, Cohen's κ, and the share of false claims the judge
credited ("yes") — for substituted claims the goal is 0.

The sound thresholds (``sound_yes``, ``sound_no``) are chosen on the odd-numbered claims only
and reported on the even-numbered ones (held out) as well as on all. The meaning thresholds
of rules v3 (``meaning_yes``, ``meaning_no``: MiniLM similarity of a reported clause to what
is heard) are chosen on the development half — the v3 claims marked ``"v3": "dev"`` and the
odd-numbered older claims — and reported per kind on the v3 hold-out half (claims nobody read
while writing the v3 rules) as well as on all. Also reported: the share of true claims
answered "no" (``true_said_no``) — a wrong "no" is as bad as a wrong "yes".

The v4 claims (issue #37: adjacency, speaker, question, quantifier, mixed, meta words, quoted
names, hedges) are measured per half (``v4_dev``: read while writing the v4 rules and part of the
development half for the thresholds; ``v4_holdout``: only measured). Each v4 claim also says
whether its sentence is verifiable; the verifier (:func:`murgat.core.rules.rule_verifiable`) is
scored on those (``verifier``). ``sets`` gives, per labelled set, the counts that matter most:
true claims answered "no", false claims credited "yes", abstentions.

Run: ``python benchmarks/bench_embedded_judge.py [--before] [--fixed]``; ``--before`` runs the
judge of the commit named by ``--before-ref`` (default: 31873db, the last commit with the v3
judge; b5ff0d2 is the last v2 judge, c1d2918 the v1 judge, which runs with the ASR setting it
used, int8) from a temporary git worktree, for the before/after table; ``--fixed`` skips the
threshold searches and uses the judge's defaults (quicker; the figures of a run with the
shipped settings). Writes ``benchmarks/results/embedded_judge.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
V1_JUDGE_COMMIT = "c1d2918"
V2_JUDGE_COMMIT = "b5ff0d2"
V3_JUDGE_COMMIT = "31873db"
CLAIMS = ROOT / "tests" / "data" / "embedded_claims" / "claims.jsonl"
sys.path.insert(0, str(HERE))
from realdata import real_media  # noqa: E402  (bundled media first; a missing file stops with its name)


def load_claims() -> list[dict[str, Any]]:
    return [json.loads(x) for x in CLAIMS.read_text(encoding="utf-8").split("\n") if x.strip()]


def run_judge(claims: list[dict[str, Any]], options: dict[str, str]) -> list[dict[str, Any]]:
    """Verdicts of the judge in *this* checkout (or the one on ``sys.path``)."""
    from murgat.judges import make_judge

    judge = make_judge("embedded", options)
    check: Any
    try:
        from murgat.judges.embedded_check import check_claim as check
    except ImportError:  # an older checkout (the "before" run): the same steps, inlined
        check = _old_check_claim
    out = []
    for c in claims:
        v = check(c["claim"], real_media(c["media"]), judge)
        out.append({"id": c["id"], "verdict": v.label, "reason": v.reason})
    return out


def _old_check_claim(fact: str, media: Path, judge: Any) -> Any:
    import asyncio
    from types import SimpleNamespace

    from murgat.core.citations import parse_citations, strip_citations
    from murgat.judges.evidence import evidence_parts
    from murgat.judges.parsing import parse_verdict
    from murgat.judges.types import JudgeRequest, TextPart
    from murgat.media.evidence import EvidenceConfig, build_evidence
    from murgat.media.streams import probe

    info = probe(media)
    cites = [c for c in parse_citations(fact) if c.valid]
    tr = sc = None
    if info.has_audio:
        from murgat.media.asr import transcribe

        tr = transcribe(media)
    if info.has_video:
        from murgat.media.ocr import lazy_screen

        sc = lazy_screen(media)
    ev = build_evidence(media, cites, EvidenceConfig(text=True), transcript=tr, screen=sc)
    if any(not s.available for s in ev.segments):
        return SimpleNamespace(label="unavailable", reason="evidence unavailable")
    claim = strip_citations(fact)
    req = JudgeRequest(parts=[TextPart(claim), *evidence_parts(ev, True)], task="entail",
                       inputs={"fact": claim, "evidence": [s.label for s in ev.segments]})
    out = asyncio.run(judge.generate(req))
    return SimpleNamespace(label=str(parse_verdict(out.text)[0]), reason=out.text)


def metrics(rows: list[tuple[bool, str]]) -> dict[str, Any]:
    """``rows`` = (label, verdict). Decided = yes/no; the rest are abstentions."""
    from murgat.human_eval.stats import binary_agreement

    n = len(rows)
    decided = [(lab, v == "yes") for lab, v in rows if v in ("yes", "no")]
    false_n = sum(1 for lab, _ in rows if not lab)
    true_n = n - false_n
    credited = sum(1 for lab, v in rows if not lab and v == "yes")
    refused = sum(1 for lab, v in rows if lab and v == "no")
    out: dict[str, Any] = {"n": n, "abstention_rate": round(1 - len(decided) / n, 3) if n else None,
                           "false_credited": round(credited / false_n, 3) if false_n else None,
                           "true_said_no": round(refused / true_n, 3) if true_n else None}
    if decided:
        agg = binary_agreement([p for _, p in decided], [g for g, _ in decided])
        out.update({"answered": len(decided), "accuracy": _r(agg["accuracy"]),
                    "balanced_accuracy": _r(agg["balanced_accuracy"]), "kappa": _r(agg["kappa"])})
    return out


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def table(claims: list[dict[str, Any]], verdicts: list[dict[str, Any]], subset: set[str] | None = None) -> dict[str, Any]:
    by = {v["id"]: v["verdict"] for v in verdicts}
    kinds: dict[str, list[tuple[bool, str]]] = {}
    for c in claims:
        if subset is not None and c["id"] not in subset:
            continue
        kinds.setdefault(c["type"], []).append((c["label"], by[c["id"]]))
    out = {k: metrics(v) for k, v in sorted(kinds.items())}
    out["all"] = metrics([x for v in kinds.values() for x in v])
    out["all except visual_only"] = metrics([x for k, v in kinds.items() if k != "visual_only" for x in v])
    return out


def choose_sound_thresholds(claims: list[dict[str, Any]]) -> dict[str, float]:
    """Grid search on the odd-numbered sound claims: the most balanced accuracy, then the
    fewest abstentions, then the widest gap between the thresholds (the most cautious)."""
    dev = [c for c in claims if c["type"] == "sound" and int(c["id"][1:]) % 2 == 1]
    best: tuple[Any, ...] | None = None
    for y in (0.2, 0.3, 0.4, 0.5, 0.6):
        for n in (0.01, 0.02, 0.05, 0.1):
            m = metrics([(c["label"], v["verdict"]) for c, v in
                         zip(dev, run_judge(dev, {"sound_yes": str(y), "sound_no": str(n)}), strict=True)])
            key = (m.get("balanced_accuracy") or 0, -(m["abstention_rate"] or 0), y - n)
            if best is None or key > best[0]:
                best = (key, y, n)
    assert best is not None
    return {"sound_yes": best[1], "sound_no": best[2]}


def is_dev(c: dict[str, Any]) -> bool:
    """The development half for the meaning thresholds: v3 and v4 "dev" claims and odd-numbered older ones."""
    if "v3" in c or "v4" in c:
        return c.get("v3", c.get("v4")) == "dev"
    return int(c["id"][1:]) % 2 == 1


def choose_meaning_thresholds(claims: list[dict[str, Any]], sound: dict[str, float]) -> dict[str, float]:
    """Grid search on the development half (:func:`is_dev`), non-visual claims: the most
    balanced accuracy, then the fewest true claims answered "no", then the fewest abstentions,
    then the widest gap between the thresholds."""
    dev = [c for c in claims if is_dev(c) and c["type"] not in ("visual_only", "sound")]
    best: tuple[Any, ...] | None = None
    for y in (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8):
        for n in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35):
            opts = {**{k: str(v) for k, v in sound.items()}, "meaning_yes": str(y), "meaning_no": str(n)}
            m = metrics([(c["label"], v["verdict"]) for c, v in zip(dev, run_judge(dev, opts), strict=True)])
            key = (m.get("balanced_accuracy") or 0, -(m["true_said_no"] or 0), -(m["abstention_rate"] or 0), y - n)
            if best is None or key > best[0]:
                best = (key, y, n)
    assert best is not None
    return {"meaning_yes": best[1], "meaning_no": best[2]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", action="store_true", help="also measure the judge of --before-ref")
    ap.add_argument("--before-ref", default=None)
    ap.add_argument("--fixed", action="store_true", help="use the judge's default thresholds (no search)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    claims = load_claims()
    if a.child:  # inside the old worktree: print verdicts only
        print(json.dumps(run_judge(claims, {})))
        return
    res: dict[str, Any] = {"claims": len(claims)}
    if a.fixed:
        chosen: dict[str, float] = {}
        meaning: dict[str, float] = {}
        res["thresholds"] = "the judge's defaults (--fixed)"
    else:
        chosen = choose_sound_thresholds(claims)
        res["sound_thresholds_chosen_on_odd_ids"] = chosen
        meaning = choose_meaning_thresholds(claims, chosen)
        res["meaning_thresholds_chosen_on_dev_half"] = meaning
    after = run_judge(claims, {k: str(v) for k, v in {**chosen, **meaning}.items()})
    subsets = claim_sets(claims)

    def tables(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
        out = {name: table(claims, verdicts, ids) for name, ids in subsets.items()}
        out["sets"] = {name: counts(claims, verdicts, ids) for name, ids in subsets.items()}
        return out

    res["after"] = tables(after)
    res["verifier"] = verifier_figures(claims)
    res["verifier_vs_faithscore_stage1"] = faithscore_figures()
    if a.before:
        ref = a.before_ref or V3_JUDGE_COMMIT
        with tempfile.TemporaryDirectory() as d:
            wt = Path(d) / "before"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(wt), ref], check=True,
                           capture_output=True)
            try:
                env = {**os.environ, "PYTHONPATH": str(wt)}
                if ref == V1_JUDGE_COMMIT:
                    env["MURGAT_ASR_COMPUTE"] = "int8"  # the v1 judge's ASR setting
                cp = subprocess.run([sys.executable, str(HERE / "bench_embedded_judge.py"), "--child"], cwd=wt,
                                    capture_output=True, text=True, env=env)
                if cp.returncode != 0:
                    raise RuntimeError(cp.stderr[-2000:])
                before = json.loads(cp.stdout.strip().split("\n")[-1])
            finally:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(wt)], capture_output=True)
        res["before_ref"] = ref
        res["before"] = tables(before)
    res["verdicts"] = after
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "embedded_judge.json").write_text(json.dumps(res, indent=2))
    print_table(res)


def claim_sets(claims: list[dict[str, Any]]) -> dict[str, set[str] | None]:
    """The labelled sets, kept apart: the older claims (and their even-numbered and fresh parts),
    the v3 halves and the v4 halves; ``None`` is every claim."""
    older = [c for c in claims if "v3" not in c and "v4" not in c]
    return {"all_claims": None, "older_claims": {c["id"] for c in older},
            "held_out_even_ids": {c["id"] for c in older if int(c["id"][1:]) % 2 == 0},
            "written_after_rules_frozen": {c["id"] for c in claims if c.get("fresh")},
            "v3_dev": {c["id"] for c in claims if c.get("v3") == "dev"},
            "v3_holdout": {c["id"] for c in claims if c.get("v3") == "holdout"},
            "v4_dev": {c["id"] for c in claims if c.get("v4") == "dev"},
            "v4_holdout": {c["id"] for c in claims if c.get("v4") == "holdout"}}


def counts(claims: list[dict[str, Any]], verdicts: list[dict[str, Any]], subset: set[str] | None) -> dict[str, int]:
    """Counts, not rates: true claims answered "no", false claims credited "yes", abstentions."""
    by = {v["id"]: v["verdict"] for v in verdicts}
    rows = [(c["label"], by[c["id"]]) for c in claims if subset is None or c["id"] in subset]
    return {"n": len(rows), "true": sum(1 for lab, _ in rows if lab), "false": sum(1 for lab, _ in rows if not lab),
            "true_said_no": sum(1 for lab, v in rows if lab and v == "no"),
            "false_credited": sum(1 for lab, v in rows if not lab and v == "yes"),
            "abstained": sum(1 for _, v in rows if v not in ("yes", "no")),
            "right": sum(1 for lab, v in rows if v == ("yes" if lab else "no"))}


def verifier_figures(claims: list[dict[str, Any]]) -> dict[str, Any]:
    """The verifier on the claims that say whether their sentence is verifiable (the v4 set)."""
    from murgat.core.rules import rule_verifiable

    out: dict[str, Any] = {}
    for half in ("dev", "holdout"):
        rows = [(c["verifiable"], rule_verifiable(c["claim"])) for c in claims if "verifiable" in c and c.get("v4") == half]
        out[half] = {"n": len(rows), "hedged_passed": sum(1 for want, (got, _) in rows if not want and got),
                     "hedged": sum(1 for want, _ in rows if not want),
                     "plain_refused": sum(1 for want, (got, _) in rows if want and not got),
                     "plain": sum(1 for want, _ in rows if want)}
    return out


def faithscore_figures() -> dict[str, Any] | None:
    """The verifier against FaithScore's stage-1 human labels (1 = a descriptive sub-sentence), when
    the annotation file is beside the media (``../shared/data/real/annotations/faithscore``)."""
    from murgat.core.rules import rule_verifiable
    from murgat.human_eval.stats import binary_agreement

    path = ROOT / "tests" / "data" / "real" / "annotations" / "faithscore" / "annotation.jsonl"
    if not path.exists():
        return None
    pred, gold = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        for sub, lab in json.loads(line)["stage 1"].items():
            if sub.strip():
                pred.append(rule_verifiable(sub.strip())[0])
                gold.append(bool(lab))
    agg = binary_agreement(pred, gold)
    return {"n": len(pred), "balanced_accuracy": _r(agg["balanced_accuracy"]), "kappa": _r(agg["kappa"])}


def print_table(res: dict[str, Any]) -> None:
    print(f"{'set':28s}" + "".join(f"{c:>15s}" for c in ("when", "n", "true→no", "false→yes", "abstained", "right")))
    for name in res["after"]["sets"]:
        for when in ("before", "after"):
            if when in res and "sets" in res[when]:
                m = res[when]["sets"][name]
                print(f"{name:28s}{when:>15s}{m['n']:>15}{m['true_said_no']:>15}{m['false_credited']:>15}"
                      f"{m['abstained']:>15}{m['right']:>15}")
    print("verifier:", json.dumps(res["verifier"]), "vs FaithScore stage 1:", json.dumps(res["verifier_vs_faithscore_stage1"]))
    cols = ("n", "abstention_rate", "accuracy", "balanced_accuracy", "kappa", "false_credited", "true_said_no")
    for part in ("older_claims", "v3_holdout", "v4_holdout"):
        for when in ("before", "after"):
            if when not in res:
                continue
            print(f"\n{when}: {part}")
            print(f"{'type':24s}" + "".join(f"{c:>18s}" for c in cols))
            for k, m in res[when][part].items():
                print(f"{k:24s}" + "".join(f"{'' if m.get(c) is None else m.get(c):>18}" for c in cols))


if __name__ == "__main__":
    main()
