"""A score run's judge figures corrected with human labels: human-valid estimates with intervals.

``murgat score`` reports the judge's MURGAT-S, coverage, precision, recall, F1 and strict
attributed accuracy; ``murgat calibrate`` says how far the judge agrees with people. What a
paper needs is the figure *people* would give, with an interval that holds. With human labels
for a random sample of the run's responses, every run-level mean is corrected by
prediction-powered inference (``murgat.human_eval.ppi``: PPI++, equal to ppi-python):

* the **population** is the run's responses that have the judge's figure (what the run-level
  mean averages); the **labelled** ones are those with a human figure too (the mean over their
  annotators, by MURGAT-S's own formula: :func:`human_scores`); the rest are unlabelled. A
  labelled response whose judge figure is undefined (excluded, undetermined) cannot enter — it
  is counted (``dropped``), as is a sampled response whose human figure is undefined, which then
  counts as unlabelled;
* beside the corrected figure: plain PPI (λ = 1), the human-only mean of the labelled responses
  (λ = 0) and the judge-only figure (the run's own number, with an interval for the *judge's*
  mean);
* the labels must be a recorded random sample of the run (``murgat.human_eval.sampling``:
  ``murgat annotate --sample``), checked by redrawing it; otherwise the corrected figures are
  refused unless ``assume_random`` says the labels may be treated as one — and the output says
  that this was assumed;
* ``cluster_by_video`` (and any sample drawn by video) makes videos the sampling unit;
* two runs of the same items, each with its own labels (model A and model B, one judge):
  :func:`corrected_difference` gives B − A from the paired per-response differences.

Attributed accuracy: a response counts when its answer is right and its MURGAT-S reaches the
threshold — the judge's MURGAT-S for the judge figure, the human one for the human figure; the
population is the responses with a gold answer, as in ``murgat.core.metric.summarize_results``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from murgat.core.breakdown import check_by, fields_available, group_keys, label_of, record_fields
from murgat.core.metric import FactScore, ResponseFigures, answer_state, score_response
from murgat.core.schema import ResponseResult
from murgat.human_eval.labels import ResponseLabel, SentenceLabel, by_id
from murgat.human_eval.ppi import CorrectedEstimate, bootstrap_corrected, labels_needed, prediction_powered_mean, within
from murgat.human_eval.sampling import SampleCheck, check_labels
from murgat.human_eval.stratified import StratumData, plan_strata, stratified_mean

METRICS = ("coverage", "precision", "recall", "murgat_s")
FIGURES = ("coverage", "precision", "recall", "f1", "murgat_s", "attributed_accuracy")
CI_METHODS = ("normal", "bootstrap")


def majority(values: Sequence[bool | None]) -> bool | None:
    """The annotators' majority label; a tie, or nobody labelling, is no label."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    yes = sum(vals)
    if yes * 2 == len(vals):
        return None
    return yes * 2 > len(vals)


def reference_sentence(labelled: Sequence[SentenceLabel]) -> SentenceLabel | None:
    """The annotators' version of a sentence whose facts the judge's are matched with: the first
    annotator who decomposed it."""
    return next((s for s in labelled if s.facts), None)


def human_scores(label: ResponseLabel, result: ResponseResult | None) -> dict[str, float | None]:
    """One annotator's response-level figures, computed with MURGAT-S's own formula.

    V from the human verifiability labels, Vc = those sentences that carry citations (in the
    run's reading when the run is given), facts with citations; a fact's recall is its
    "supported" label and its precision the mean of "supported and necessary" over its citations
    (recall itself when necessity is not labelled). Response-level ratings given directly win.
    """
    cited_by_run = {}
    if result is not None:
        cited_by_run = {sr.sentence.index: bool(sr.sentence.citations) for sr in result.sentences}
    V = [s for s in label.sentences if s.verifiable]
    Vc = [s for s in V if cited_by_run.get(s.index, any(f.citations for f in s.facts))]
    facts: list[FactScore] = []
    for s in Vc:
        for f in s.facts:
            if not f.citations or f.supported is None:
                continue
            r = 1.0 if f.supported else 0.0
            if f.necessary is not None and all(n is not None for n in f.necessary):
                p = float(np.mean([1.0 if (f.supported and n) else 0.0 for n in f.necessary]))
            else:
                p = r
            facts.append(FactScore(r, p, [], "judged"))
    scores, _ = score_response(ResponseFigures(len(V), len(Vc), facts))
    out: dict[str, float | None] = scores.model_dump()
    if not label.sentences:
        out = {m: None for m in out}  # nothing labelled at sentence level: no computed figures
    for m in METRICS:  # response-level ratings given directly win over computed ones
        if m in label.ratings:
            out[m] = float(label.ratings[m])
    if "f1" not in label.ratings and any(m in label.ratings for m in ("precision", "recall")):
        hp, hr = out.get("precision"), out.get("recall")  # given ratings: F1 follows them
        out["f1"] = None if hp is None or hr is None else (0.0 if hp + hr == 0 else 2 * hp * hr / (hp + hr))
    return out


def human_figures(annotations: Sequence[ResponseLabel], result: ResponseResult | None,
                  attributed_threshold: float = 0.5) -> dict[str, float | None]:
    """The human figure of each run-level metric for one response: the mean over its annotators."""
    per = [human_scores(a, result) for a in annotations]
    out: dict[str, float | None] = {}
    for m in FIGURES[:-1]:
        vals = [h[m] for h in per if h.get(m) is not None]
        out[m] = float(np.mean([float(v) for v in vals if v is not None])) if vals else None
    ms = out["murgat_s"]
    state = None if result is None else answer_state(result)  # an unread answer counts as not correct
    out["attributed_accuracy"] = None if state is None or ms is None else (
        1.0 if state == "right" and ms >= attributed_threshold else 0.0)
    return out


def judge_figure(result: ResponseResult, figure: str, attributed_threshold: float = 0.5) -> float | None:
    """The judge's figure of one response, as the run-level mean counts it (None: not counted)."""
    if figure == "attributed_accuracy":
        state = answer_state(result)  # as summarize_results counts it: an unread answer is not correct
        if state is None:
            return None
        ms = result.scores.murgat_s
        return 1.0 if (state == "right" and ms is not None and ms >= attributed_threshold) else 0.0
    v = getattr(result.scores, figure)
    return None if v is None else float(v)


def population(results: Sequence[Any]) -> tuple[list[str], dict[str, str]]:
    """The items a labelling sample is drawn from — the run's records without an error — and each
    one's video (its id when it names none). ``murgat annotate --sample`` and the check here use
    this one definition."""
    ok = [r for r in results if getattr(r, "error", None) is None]
    return sorted(r.id for r in ok), {r.id: (getattr(r, "video", None) or r.id) for r in ok}


def strata_of(results: Sequence[Any], field: str) -> dict[str, str]:
    """Each item's stratum under ``field``: the label of its value (``murgat.core.breakdown.label_of``:
    a missing value is the stratum ``(missing)``), for the items :func:`population` draws from. A
    field no item has, or one with a list of values (an item in two strata), is a ``ValueError``:
    strata must split the items."""
    ok = [r for r in results if getattr(r, "error", None) is None]
    fields = {r.id: record_fields(r) for r in ok}
    check_by(field, fields_available(fields.values()))
    out: dict[str, str] = {}
    for rid, f in fields.items():
        keys = group_keys(f, (field,))
        if len(keys) != 1:
            raise ValueError(f"--strata {field}: item {rid!r} has {len(keys)} values of it (a list): strata must split "
                             "the items, each in one")
        out[rid] = label_of(keys[0])
    return out


def sample_check(labels: Sequence[ResponseLabel], results: Sequence[Any]) -> SampleCheck:
    """Are ``labels`` (those of ids in the run) a recorded random sample of the run?"""
    ids, videos = population(results)
    in_run = set(ids)
    mine = [lab for lab in labels if lab.id in in_run]
    field = next((lab.sample.strata_field for lab in mine if lab.sample is not None and lab.sample.strata_field), None)
    try:
        strata = strata_of(results, field) if field else None
    except ValueError as exc:
        return SampleCheck(ok=False, problems=[f"the labels' strata cannot be read from the run: {exc}"])
    return check_labels([lab.sample for lab in mine], {lab.id for lab in mine}, ids, videos, strata)


def _block(est: CorrectedEstimate) -> dict[str, Any]:
    d = est.to_dict()
    d["lambda"] = d.pop("lam")
    return d


def _brief(est: CorrectedEstimate, n_key: str = "n") -> dict[str, Any]:
    return {"estimate": est.estimate, "ci_low": est.ci_low, "ci_high": est.ci_high, n_key: est.n_labelled,
            **({"reason": est.reason} if est.reason else {}), **({"note": est.note} if est.note else {})}


Progress = Callable[[int], None]


#: every figure here is a proportion of responses; a difference of two runs' figures is in [-1, 1]
PROPORTION = (0.0, 1.0)
DIFFERENCE = (-1.0, 1.0)


def _estimate_block(y: np.ndarray, yh: np.ndarray, yu: np.ndarray, clusters: list[str] | None, *, alpha: float,
                    ci: str, n_resamples: int, seed: int, progress: Progress | None,
                    bounds: tuple[float, float] = PROPORTION) -> dict[str, Any]:
    """The corrected figure with, beside it, plain PPI, the human-only and the judge-only figures,
    each cut to ``bounds``, the range the figure can take (:func:`murgat.human_eval.ppi.within`)."""
    if ci not in CI_METHODS:
        raise ValueError(f"ci must be one of {CI_METHODS}, not {ci!r}")
    if ci == "bootstrap":
        main = bootstrap_corrected(prediction_powered_mean, [y, yh], [yu], alpha=alpha, clusters=clusters,
                                   n_resamples=n_resamples, seed=seed, progress=progress)
    else:
        main = prediction_powered_mean(y, yh, yu, alpha=alpha, clusters=clusters, quantile="t")
    out = _block(within(main, *bounds))
    ppi = within(prediction_powered_mean(y, yh, yu, alpha=alpha, lam=1.0, clusters=clusters, quantile="t"), *bounds)
    out["ppi"] = {"estimate": ppi.estimate, "ci_low": ppi.ci_low, "ci_high": ppi.ci_high, "lambda": 1.0}
    out["human_only"] = _brief(within(prediction_powered_mean(y, yh, yu, alpha=alpha, lam=0.0, clusters=clusters, quantile="t"),
                                      *bounds))
    out["judge_only"] = _judge_only(yh, yu, clusters, alpha, bounds)
    return out


def _judge_only(yh: np.ndarray, yu: np.ndarray, clusters: list[str] | None, alpha: float,
                bounds: tuple[float, float]) -> dict[str, Any]:
    """The judge's own mean over every item of the population (what murgat score reports), with the
    interval of that mean — an interval for the judge's number, not for the human one."""
    every = np.concatenate([yh, yu])
    cl_all = None if clusters is None else list(clusters)
    judge = within(prediction_powered_mean(every, every, [], alpha=alpha, lam=0.0, clusters=cl_all), *bounds)
    return {**_brief(judge), "estimate": float(every.mean()) if len(every) else None}


#: a labelled row of a stratified figure: (human, judge, video, stratum); an unlabelled one: (judge, video, stratum)
LabelledRow = tuple[float, float, str, str]
UnlabelledRow = tuple[float, str, str]


def _strata_data(lab: Sequence[LabelledRow], unl: Sequence[UnlabelledRow], clustered: bool) -> dict[str, StratumData]:
    """The rows of one figure split by stratum (strata in name order), with each item's video when clustered."""
    out: dict[str, StratumData] = {}
    for h in sorted({r[-1] for r in lab} | {r[-1] for r in unl}):
        a = [r for r in lab if r[-1] == h]
        b = [r for r in unl if r[-1] == h]
        cl = [r[2] for r in a] + [r[1] for r in b] if clustered else None
        out[h] = StratumData(np.array([r[0] for r in a], float), np.array([r[1] for r in a], float),
                             np.array([r[0] for r in b], float), cl)
    return out


def _stratified_block(lab: Sequence[LabelledRow], unl: Sequence[UnlabelledRow], clustered: bool, *, alpha: float,
                      bounds: tuple[float, float] = PROPORTION) -> dict[str, Any]:
    """:func:`_estimate_block` for a stratified sample (``murgat.human_eval.stratified``): the
    stratified PPI++ figure with its strata, beside the stratified plain PPI and human-only figures
    and the judge-only one (the judge's mean over every item, stratified or not)."""
    data = _strata_data(lab, unl, clustered)
    main = stratified_mean(data, alpha=alpha)
    out = _block(within(main.overall, *bounds))
    out["strata"] = main.strata
    ppi = within(stratified_mean(data, alpha=alpha, lam=1.0).overall, *bounds)
    out["ppi"] = {"estimate": ppi.estimate, "ci_low": ppi.ci_low, "ci_high": ppi.ci_high, "lambda": 1.0,
                  **({"reason": ppi.reason} if ppi.reason else {})}
    out["human_only"] = _brief(within(stratified_mean(data, alpha=alpha, lam=0.0).overall, *bounds))
    clusters = [r[2] for r in lab] + [r[1] for r in unl] if clustered else None
    out["judge_only"] = _judge_only(np.array([r[1] for r in lab], float), np.array([r[0] for r in unl], float),
                                    clusters, alpha, bounds)
    return out


def _rows(labels: Sequence[ResponseLabel], results: Sequence[ResponseResult], figure: str, threshold: float,
          ) -> tuple[list[tuple[str, float, float, str]], list[tuple[str, float, str]], dict[str, int]]:
    lab = by_id(list(labels))
    labelled: list[tuple[str, float, float, str]] = []
    unlabelled: list[tuple[str, float, str]] = []
    dropped = {"labelled_without_judge_figure": 0, "labelled_without_human_figure": 0}
    for r in sorted((r for r in results if r.error is None), key=lambda r: r.id):
        j = judge_figure(r, figure, threshold)
        video = r.video or r.id
        if r.id in lab:
            h = human_figures(lab[r.id], r, threshold)[figure]
            if j is None:
                dropped["labelled_without_judge_figure"] += 1
                continue
            if h is None:
                dropped["labelled_without_human_figure"] += 1
                unlabelled.append((r.id, j, video))
                continue
            labelled.append((r.id, h, j, video))
        elif j is not None:
            unlabelled.append((r.id, j, video))
    return labelled, unlabelled, dropped


def _clusters(labelled: Sequence[tuple[Any, ...]], unlabelled: Sequence[tuple[Any, ...]], on: bool) -> list[str] | None:
    return [row[-1] for row in labelled] + [row[-1] for row in unlabelled] if on else None


def _refusal(check: SampleCheck) -> dict[str, Any]:
    return {"refused": "the labels are not a recorded random sample of this run, so a corrected estimate "
                       "would not be valid: draw the sample with murgat annotate RUN --sample N, or pass "
                       "--assume-random to treat these labels as one (and say so when you report it)",
            "problems": check.problems}


def _design_strata(check: SampleCheck, results: Sequence[ResponseResult], out: dict[str, Any],
                   ci: str) -> dict[str, str] | None:
    """Each item's stratum when the labels were drawn stratified (else None), the output told so:
    a stratified draw is estimated stratified, whatever else was asked, since one mean over labels
    that over-represent some strata would be biased."""
    design = check.design
    if design is None or design.method != "stratified" or not design.strata_field:
        return None
    strata = strata_of(results, design.strata_field)
    out["stratified_by"] = design.strata_field
    if out.get("assumption"):
        out["assumption"] = (f"--assume-random: the labelled responses were treated as a random sample within each "
                             f"stratum of {design.strata_field}; nothing recorded shows that they are one")
    out["notes"].append(f"the labels were drawn stratified by {design.strata_field} ({len(design.strata or {})} "
                        "strata), so every corrected figure is the stratified estimate: Σ_h W_h θ̂_h, each stratum "
                        "weighted by its share of the figure's items")
    if ci == "bootstrap":
        out["notes"].append("--ci bootstrap is not offered for a stratified sample: the intervals are the stratified "
                            "Student-t ones (Welch–Satterthwaite degrees of freedom)")
    return strata


def corrected_figures(labels: Sequence[ResponseLabel], results: Sequence[ResponseResult], *, alpha: float = 0.05,
                      cluster_by_video: bool = False, ci: str = "normal", assume_random: bool = False,
                      n_resamples: int = 2000, seed: int = 0, attributed_threshold: float = 0.5,
                      figures: Sequence[str] = FIGURES, progress: Progress | None = None) -> dict[str, Any]:
    """Every run-level figure of a score run, corrected with the labels (module docstring).

    Returns ``{"figures": {name: block}, "sample": …, "assumption": …, "clustered_by": …}``, or a
    ``refused`` reason and the problems found when the labels are not a checked random sample and
    ``assume_random`` is not given. A figure with no labelled response has every number ``None``
    and a ``reason``.
    """
    check = sample_check(labels, results)
    if not check.ok and not assume_random:
        return _refusal(check)
    clustered = cluster_by_video or (check.design is not None and check.design.method == "video")
    out: dict[str, Any] = {
        "alpha": alpha, "ci": ci, "clustered_by": "video" if clustered else None, "stratified_by": None,
        "sample": check.design.model_dump() if check.design else None,
        "sample_checked": check.ok,
        "assumption": None if check.ok else "--assume-random: the labelled responses were treated as a uniform "
                                            "random sample of the run; nothing recorded shows that they are one",
        "problems": check.problems, "notes": list(check.notes), "figures": {},
        "labels_not_in_run": len({lab.id for lab in labels} - {r.id for r in results}),
    }
    if clustered and not cluster_by_video:
        out["notes"].append("the sample was drawn by video, so every interval is clustered by video")
    strata = _design_strata(check, results, out, ci)
    for k, fig in enumerate(figures):
        labelled, unlabelled, dropped = _rows(labels, results, fig, attributed_threshold)
        if not labelled and not unlabelled:
            continue  # e.g. attributed accuracy of a run without gold answers: the run has no such figure
        if strata is not None:
            out["figures"][fig] = {**_stratified_block([(h, j, v, strata[i]) for i, h, j, v in labelled],
                                                       [(j, v, strata[i]) for i, j, v in unlabelled], clustered,
                                                       alpha=alpha), "dropped": dropped}
            continue
        y = np.array([h for _, h, _, _ in labelled], float)
        yh = np.array([j for _, _, j, _ in labelled], float)
        yu = np.array([j for _, j, _ in unlabelled], float)
        step: Progress | None = None
        if progress is not None:
            report = progress

            def step(i: int, k: int = k, report: Progress = report) -> None:
                report(k * n_resamples + i)
        block = _estimate_block(y, yh, yu, _clusters(labelled, unlabelled, clustered), alpha=alpha, ci=ci,
                                n_resamples=n_resamples, seed=seed + k, progress=step)
        block["dropped"] = dropped
        out["figures"][fig] = block
    return out


def corrected_difference(labels_a: Sequence[ResponseLabel], results_a: Sequence[ResponseResult],
                         labels_b: Sequence[ResponseLabel], results_b: Sequence[ResponseResult], *, alpha: float = 0.05,
                         cluster_by_video: bool = False, assume_random: bool = False, attributed_threshold: float = 0.5,
                         figures: Sequence[str] = FIGURES) -> dict[str, Any]:
    """B − A per figure for two runs of the same items (model A and model B, one judge), each
    response labelled in its own run's labels. Pairs are the item ids both runs scored (with a
    judge figure in both); the labelled pairs are those a human scored in both runs."""
    checks = {"a": sample_check(labels_a, results_a), "b": sample_check(labels_b, results_b)}
    bad = [f"{side}: {p}" for side, c in checks.items() for p in c.problems]
    if bad and not assume_random:
        return {**_refusal(SampleCheck(ok=False, problems=bad))}
    la, lb = by_id(list(labels_a)), by_id(list(labels_b))
    ra = {r.id: r for r in results_a if r.error is None}
    rb = {r.id: r for r in results_b if r.error is None}
    designs = [c.design for c in checks.values()]
    clustered = cluster_by_video or any(d is not None and d.method == "video" for d in designs)
    out: dict[str, Any] = {"alpha": alpha, "clustered_by": "video" if clustered else None, "direction": "b - a",
                           "assumption": None if not bad else "--assume-random: the labelled responses were treated as "
                                                              "a uniform random sample of each run",
                           "problems": bad, "figures": {}, "notes": []}
    field = next((d.strata_field for d in designs if d is not None and d.method == "stratified"), None)
    strata = strata_of(results_a, field) if field else None
    out["stratified_by"] = field
    if field:
        out["notes"].append(f"a run's labels were drawn stratified by {field}: each difference is the stratified "
                            f"estimate, the strata those of run A's items")
    for fig in figures:
        lab_rows: list[tuple[float, float, str, str]] = []
        unl_rows: list[tuple[float, str, str]] = []
        for i in sorted(set(ra) & set(rb)):
            ja, jb = judge_figure(ra[i], fig, attributed_threshold), judge_figure(rb[i], fig, attributed_threshold)
            if ja is None or jb is None:
                continue
            video = ra[i].video or i
            ha = human_figures(la[i], ra[i], attributed_threshold)[fig] if i in la else None
            hb = human_figures(lb[i], rb[i], attributed_threshold)[fig] if i in lb else None
            h = strata[i] if strata is not None else ""
            if ha is not None and hb is not None:
                lab_rows.append((hb - ha, jb - ja, video, h))
            else:
                unl_rows.append((jb - ja, video, h))
        if not lab_rows and not unl_rows:
            continue
        if strata is not None:
            out["figures"][fig] = _stratified_block(lab_rows, unl_rows, clustered, alpha=alpha, bounds=DIFFERENCE)
            continue
        y = np.array([d for d, _, _, _ in lab_rows], float)
        yh = np.array([d for _, d, _, _ in lab_rows], float)
        yu = np.array([d for d, _, _ in unl_rows], float)
        out["figures"][fig] = _estimate_block(y, yh, yu, [r[2] for r in lab_rows] + [r[1] for r in unl_rows]
                                              if clustered else None, alpha=alpha,
                                              ci="normal", n_resamples=0, seed=0, progress=None, bounds=DIFFERENCE)
    return out


def plan_labels(labels: Sequence[ResponseLabel], results: Sequence[ResponseResult], *, half_width: float,
                alpha: float = 0.05, cluster_by_video: bool = False, attributed_threshold: float = 0.5,
                figures: Sequence[str] = FIGURES) -> dict[str, Any]:
    """How many labelled responses give each figure a corrected interval of ± ``half_width``,
    from a pilot's labels (``murgat.human_eval.ppi.labels_needed``). A pilot need not be a random
    sample for this (it only supplies variances), but the closer to one, the better the plan."""
    out: dict[str, Any] = {"half_width": half_width, "alpha": alpha,
                           "clustered_by": "video" if cluster_by_video else None, "figures": {}}
    for fig in figures:
        labelled, unlabelled, _ = _rows(labels, results, fig, attributed_threshold)
        if not labelled and not unlabelled:
            continue
        y = [h for _, h, _, _ in labelled]
        yh = [j for _, _, j, _ in labelled]
        yu = [j for _, j, _ in unlabelled]
        out["figures"][fig] = labels_needed(y, yh, yu, half_width=half_width, alpha=alpha,
                                            clusters=_clusters(labelled, unlabelled, cluster_by_video))
    return out


def _sd(values: Sequence[float]) -> float | None:
    """The sample standard deviation (divisor n − 1), None under two values."""
    return float(np.std(np.asarray(values, float), ddof=1)) if len(values) >= 2 else None


def _stratum_inputs(lab: Sequence[LabelledRow], unl: Sequence[UnlabelledRow], prior_sd: float
                    ) -> dict[str, dict[str, Any]]:
    """Per stratum: its size, the pilot's labels in it, the standard deviation of human − judge the
    plan uses (the pilot's, or the prior when the pilot has under two labels there or they all
    agree) and that of the judge's scores."""
    out: dict[str, dict[str, Any]] = {}
    for h in sorted({r[-1] for r in lab} | {r[-1] for r in unl}):
        diffs = [r[0] - r[1] for r in lab if r[-1] == h]
        judge = [r[1] for r in lab if r[-1] == h] + [r[0] for r in unl if r[-1] == h]
        seen = _sd(diffs)
        out[h] = {"population": len(judge), "pilot_n": len(diffs), "sd": seen if seen else prior_sd,
                  "sd_from": "pilot" if seen else ("prior (the pilot's labels here all agree with the judge)"
                                                   if seen == 0 else "prior (under two pilot labels here)"),
                  "sd_judge": _sd(judge) or 0.0}
    return out


def allocation_spec(counts: dict[str, int]) -> str:
    """The ``murgat annotate --allocation`` value of ``counts``: ``LABEL=N,…``, or JSON when a label
    holds ``,`` or ``=`` (or spaces, which a shell would split)."""
    import json

    if any(ch in h for h in counts for ch in ",= {}\"'"):
        return json.dumps(counts, ensure_ascii=False)
    return ",".join(f"{h}={n}" for h, n in counts.items())


def plan_strata_labels(labels: Sequence[ResponseLabel], results: Sequence[ResponseResult], field: str, *,
                       half_width: float, alpha: float = 0.05, prior_sd: float = 0.5, attributed_threshold: float = 0.5,
                       figures: Sequence[str] = FIGURES) -> dict[str, Any]:
    """How many labels each stratum of ``field`` needs for a stratified corrected interval of
    ± ``half_width``, per figure (``murgat.human_eval.stratified.plan_strata``: Neyman allocation by
    each stratum's standard deviation of human − judge, seen in the pilot ``labels`` or, where the
    pilot has too few there — or no labels at all — the stated ``prior_sd``)."""
    strata = strata_of(results, field)
    out: dict[str, Any] = {"half_width": half_width, "alpha": alpha, "stratified_by": field, "prior_sd": prior_sd,
                           "n_pilot_labels": len(labels), "figures": {}}
    for fig in figures:
        labelled, unlabelled, _ = _rows(labels, results, fig, attributed_threshold)
        if not labelled and not unlabelled:
            continue
        inputs = _stratum_inputs([(h, j, v, strata[i]) for i, h, j, v in labelled],
                                 [(j, v, strata[i]) for i, j, v in unlabelled], prior_sd)
        plan = plan_strata({h: s["population"] for h, s in inputs.items()}, {h: s["sd"] for h, s in inputs.items()},
                           {h: s["sd_judge"] for h, s in inputs.items()}, half_width=half_width, alpha=alpha)
        total = sum(s["population"] for s in inputs.values())
        for h, s in inputs.items():
            s["weight"] = s["population"] / total
            s["n_needed"] = plan["allocation"][h] if plan["allocation"] else None
        out["figures"][fig] = {**plan, "strata": inputs,
                               "annotate_allocation": allocation_spec(plan["allocation"]) if plan["allocation"] else None}
    return out
