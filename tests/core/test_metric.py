"""One test per rule of DESIGN.md's Metric section."""

from __future__ import annotations

import numpy as np
import pytest

from murgat.core.metric import (
    FactScore,
    ResponseFigures,
    bootstrap_ci,
    next_queries,
    paired_bootstrap_diff,
    score_fact,
    score_response,
    summarize_results,
)
from murgat.core.schema import ResponseResult, Scores

F = frozenset


def oracle(entails: set[frozenset[int]]):
    """A judge that says yes exactly for the listed evidence subsets (and supersets)."""

    def answer(s: frozenset[int]) -> str:
        return "yes" if any(e <= s for e in entails) else "no"

    return answer


def run_fact(valid: list[bool], answer, mode: str = "alce") -> tuple[FactScore, int]:
    verdicts: dict = {}
    calls = 0
    while q := next_queries(valid, verdicts, mode):
        for s in q:
            verdicts[s] = answer(s)
            calls += 1
    return score_fact(valid, verdicts, mode), calls


def test_paper_worked_example() -> None:
    # citation 0 = audio, 1 = visual. F1 needs both; F2 is supported by the audio alone.
    f1, c1 = run_fact([True, True], oracle({F({0, 1})}))
    f2, c2 = run_fact([True, True], oracle({F({0})}))
    assert (f1.recall, f1.precision) == (1.0, 1.0)
    assert (f2.recall, f2.precision) == (1.0, 0.5)
    fig = ResponseFigures(n_verifiable=1, n_verifiable_cited=1, fact_scores=[f1, f2])
    scores, case = score_response(fig)
    assert scores.recall == 1.0 and scores.precision == 0.75 and case == "scored"
    assert c1 == 3 and c2 == 3  # joint + two alone; leave-one-out reuses the alone answers


def test_single_citation_precision_equals_recall_one_call() -> None:
    for ans, expected in (("yes", 1.0), ("no", 0.0)):
        fs, calls = run_fact([True], lambda s, a=ans: a)
        assert fs.recall == fs.precision == expected and calls == 1


def test_invalid_citation_supports_nothing() -> None:
    fs, calls = run_fact([False], lambda s: "yes")
    assert (fs.recall, fs.precision, calls) == (0.0, 0.0, 0)
    fs, _ = run_fact([True, False], oracle({F({0})}))
    assert fs.recall == 1.0 and fs.precise == [True, False] and fs.precision == 0.5


def test_joint_no_gives_zero_without_more_calls() -> None:
    fs, calls = run_fact([True, True, True], lambda s: "no")
    assert (fs.recall, fs.precision, calls) == (0.0, 0.0, 1)


def test_alce_redundant_citation_not_precise() -> None:
    # three citations, 0 alone suffices, 1 and 2 add nothing
    fs, _ = run_fact([True, True, True], oracle({F({0})}), "alce")
    assert fs.precise == [True, False, False]


def test_alce_alone_or_leave_one_out() -> None:
    # {0,1} jointly needed, 2 redundant: 0 and 1 break entailment when removed
    fs, _ = run_fact([True, True, True], oracle({F({0, 1})}), "alce")
    assert fs.precise == [True, True, False]


def test_strict_differs_from_alce_on_duplicate_evidence() -> None:
    # both citations entail alone: alce keeps both, strict keeps neither (removing one doesn't break)
    both = oracle({F({0}), F({1})})
    assert run_fact([True, True], both, "alce")[0].precision == 1.0
    assert run_fact([True, True], both, "strict")[0].precision == 0.0


def test_individual_mode() -> None:
    fs, _ = run_fact([True, True], oracle({F({0, 1})}), "individual")
    assert fs.recall == 1.0 and fs.precision == 0.0  # neither entails alone
    fs, _ = run_fact([True, True], oracle({F({0})}), "individual")
    assert fs.precise == [True, False]


def test_abstention_leaves_fact_undetermined_not_no() -> None:
    fs, _ = run_fact([True], lambda s: "unknown")
    assert fs.status == "undetermined" and fs.recall is None and fs.precision is None
    fs, _ = run_fact([True, True], lambda s: "yes" if len(s) == 2 else "unparseable")
    assert fs.status == "undetermined" and fs.recall == 1.0 and fs.precision is None


def test_missing_verdict_raises() -> None:
    with pytest.raises(ValueError, match="next_queries"):
        score_fact([True, True], {})


def test_coverage_and_murgat_s() -> None:
    fact = FactScore(1.0, 0.5, [True, False], "judged")
    scores, _ = score_response(ResponseFigures(n_verifiable=4, n_verifiable_cited=3, fact_scores=[fact]))
    f1 = 2 * 0.5 * 1.0 / 1.5
    assert scores.coverage == 0.75 and scores.f1 == pytest.approx(f1)
    assert scores.murgat_s == pytest.approx(0.75 * f1)


def test_f1_zero_when_p_and_r_zero() -> None:
    fact = FactScore(0.0, 0.0, [False], "judged")
    scores, _ = score_response(ResponseFigures(2, 2, [fact]))
    assert scores.f1 == 0.0 and scores.murgat_s == 0.0


def test_no_verifiable_policy_zero_and_exclude() -> None:
    z, case = score_response(ResponseFigures(0, 0, []), "zero")
    assert case == "no_verifiable" and z.murgat_s == 0.0 and z.coverage == 0.0
    e, case = score_response(ResponseFigures(0, 0, []), "exclude")
    assert case == "excluded" and e.murgat_s is None


def test_no_cited_facts_gives_p_r_zero() -> None:
    s, case = score_response(ResponseFigures(3, 0, []))
    assert case == "no_cited_facts" and s.coverage == 0.0 and s.precision == s.recall == 0.0


def test_all_facts_undetermined_response_is_undetermined() -> None:
    s, case = score_response(ResponseFigures(2, 1, [FactScore(None, None, [None], "undetermined")]))
    assert case == "undetermined" and s.coverage == 0.5 and s.murgat_s is None


def test_bootstrap_is_seeded_and_covers_mean() -> None:
    vals = list(np.linspace(0, 1, 50))
    a = bootstrap_ci(vals, seed=3)
    b = bootstrap_ci(vals, seed=3)
    assert a == b and a.ci_low < a.value < a.ci_high
    assert bootstrap_ci([], seed=0).value is None


def test_clustered_bootstrap_is_wider_for_correlated_clusters() -> None:
    vals = [1.0] * 10 + [0.0] * 10
    clusters = ["a"] * 10 + ["b"] * 10
    plain = bootstrap_ci(vals, seed=0)
    clustered = bootstrap_ci(vals, clusters, seed=0)
    assert (clustered.ci_high - clustered.ci_low) > (plain.ci_high - plain.ci_low)


def test_paired_difference() -> None:
    d = paired_bootstrap_diff([0.1, 0.2, 0.3, 0.4], [0.2, 0.3, 0.4, 0.5])
    assert d.value == pytest.approx(0.1) and d.ci_low == pytest.approx(0.1)


def _rr(i: int, ms: float | None, correct: bool | None, case: str = "scored", error: str | None = None) -> ResponseResult:
    return ResponseResult(
        id=str(i), error=error, case=case, correct=correct, video=f"v{i % 2}",
        scores=Scores(coverage=ms, precision=ms, recall=ms, f1=ms, murgat_s=ms),
    )


def test_run_summary_accuracy_attributed_and_cases() -> None:
    rs = [_rr(0, 0.9, True), _rr(1, 0.2, True), _rr(2, 0.8, False), _rr(3, None, None, "excluded"),
          _rr(4, None, None, error="missing media")]
    s = summarize_results(rs, attributed_threshold=0.5)
    assert s.n_items == 5 and s.n_errors == 1 and s.n_scored == 3
    assert s.murgat_s.value == pytest.approx((0.9 + 0.2 + 0.8) / 3)
    assert s.accuracy is not None and s.accuracy.value == pytest.approx(2 / 3)
    assert s.attributed_accuracy is not None and s.attributed_accuracy.value == pytest.approx(1 / 3)
    assert s.cases == {"scored": 3, "excluded": 1, "error": 1}


def _graded(i: int, correct: bool | None, option: str | None, problem: str | None = None, gold: str | None = "B",
            ms: float = 0.9) -> ResponseResult:
    return ResponseResult(id=str(i), correct=correct, predicted_option=option, answer_problem=problem, gold=gold,
                          meta={"options": ["a", "b", "c"]}, scores=Scores(coverage=ms, precision=ms, recall=ms,
                                                                             f1=ms, murgat_s=ms))


def test_an_unknown_answer_counts_as_not_correct_and_is_reported() -> None:
    """An answer that could not be read is not a wrong answer: before, a record with ``correct: null``
    left accuracy altogether (accuracy over the readable ones, silently). Now accuracy and SAA count it
    as not correct, as the official scorers do, and say how many there were and the accuracy over the
    answers that were read."""
    rs = [_graded(0, True, "B"), _graded(1, False, "A"),
          _graded(2, None, None, "the final 'Answer:' 'I cannot tell' names no option"),
          _graded(3, False, None),  # written before answer_problem existed: no option read, counted wrong
          _graded(4, None, None, gold=None)]  # no gold: not graded
    s = summarize_results(rs, attributed_threshold=0.5)
    assert s.accuracy is not None and s.accuracy.value == pytest.approx(1 / 4) and s.accuracy.n == 4
    assert s.attributed_accuracy is not None and s.attributed_accuracy.value == pytest.approx(1 / 4)
    assert s.n_answer_unknown == 2
    assert s.accuracy_answered is not None and s.accuracy_answered.value == pytest.approx(1 / 2)
    assert s.accuracy_answered.n == 2


def test_no_answer_read_leaves_the_answered_accuracy_undefined() -> None:
    s = summarize_results([_graded(0, None, None, "no final answer found")])
    assert s.accuracy is not None and s.accuracy.value == 0.0 and s.n_answer_unknown == 1
    assert s.accuracy_answered is not None and s.accuracy_answered.value is None and s.accuracy_answered.n == 0
    none = summarize_results([_graded(0, None, None, gold=None)])
    assert none.accuracy is None and none.accuracy_answered is None and none.n_answer_unknown == 0


def test_time_like_texts_are_counted_per_run() -> None:
    from murgat.core.schema import SentenceResult
    from murgat.core.text import split_sentences

    sents = split_sentences("He says it <t>3.0</t>. Then (audio, 3-5) he leaves at 1:05.")
    r = ResponseResult(id="a", sentences=[SentenceResult(sentence=s) for s in sents])
    assert summarize_results([r, _graded(1, True, "B")]).n_time_like == 3


def test_the_time_like_count_survives_records_without_their_sentences() -> None:
    """Summaries read records without their sentences (the slim scan): the per-record ``n_time_like``
    keeps the count, and a record with the count and the sentences is not counted twice."""
    from murgat.core.schema import SentenceResult
    from murgat.core.text import split_sentences

    sents = split_sentences("He says it <t>3.0</t>. Then (audio, 3-5) he leaves.")
    full = ResponseResult(id="a", n_time_like=2, sentences=[SentenceResult(sentence=s) for s in sents])
    slim = ResponseResult(id="b", n_time_like=2)
    assert summarize_results([full, slim]).n_time_like == 4
    assert "n_time_like" not in ResponseResult(id="c").model_dump()  # written as before when there is none


def test_accuracy_figures_are_one_rule_for_every_command() -> None:
    """Every command's accuracy: an unread answer counts as not correct; the answered accuracy and the
    count of unread answers stand beside it; records of earlier versions (``correct: false`` with no
    option read) are unread answers; error records and items without a gold option are left out."""
    from murgat.core.metric import AccuracyFigures, accuracy_figures, record_answer_state, state_of

    acc = accuracy_figures(["right", "wrong", "unknown", None], n_resamples=100)
    assert acc.accuracy is not None and acc.accuracy.value == pytest.approx(1 / 3) and acc.accuracy.n == 3
    assert acc.accuracy_answered is not None and acc.accuracy_answered.value == 0.5 and acc.n_answer_unknown == 1
    assert acc.as_dict()["n_answer_unknown"] == 1 and acc.as_dict()["accuracy"]["n"] == 3
    assert accuracy_figures([None, None]) == AccuracyFigures(None, None, 0)
    assert state_of(False, None, None, True) == "unknown" and state_of(False, None, "A", True) == "wrong"
    assert state_of(None, None, None, False) is None and state_of(None, "why", None, False) == "unknown"
    assert record_answer_state({"correct": None, "answer_problem": "no final answer found"}) == "unknown"
    assert record_answer_state({"generation_error": "missing_media: x", "correct": True}) is None
    assert record_answer_state({"gold": "B", "options": ["a", "b"], "predicted_option": None}) == "unknown"
    assert record_answer_state({"gold": "B", "options": ["a", "b"], "predicted_option": "A", "correct": False}) == "wrong"


def test_the_headline_murgat_s_says_how_many_items_it_covers(tmp_path) -> None:
    """Two items of five are errors: the mean is over three, and the console table and the page's
    headline say "over 3 of 5 items" (before, nothing said it was not the whole run)."""
    from rich.console import Console

    from murgat.core.metric import items_covered, summarize_results
    from murgat.core.schema import ResponseResult, Scores
    from murgat.report.tables import summary_table
    from murgat.report.viewer import run_doc

    recs = [ResponseResult(id=f"q{k}", scores=Scores(coverage=1, precision=1, recall=1, f1=1, murgat_s=1)) for k in range(3)]
    recs += [ResponseResult(id=f"e{k}", error="missing_media: 'x.mp4' not found", error_kind="missing_media") for k in range(2)]
    summary = summarize_results(recs)
    assert summary.murgat_s.n == 3 and summary.n_items == 5
    assert items_covered(3, 5) == "over 3 of 5 items" and items_covered(5, 5) == "over all 5 items"
    con = Console(width=200, record=True)
    con.print(summary_table(summary, "run"))
    assert "murgat_s (over 3 of 5 items)" in con.export_text()
    doc = run_doc("run", summary, recs, report_dir=tmp_path, media_root=None, copy_media=False)
    assert doc["headline"][0]["label"] == "MURGAT-S (over 3 of 5 items)"
