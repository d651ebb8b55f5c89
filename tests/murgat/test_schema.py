"""JSON round trips of the records murgat writes to disk are lossless."""

from __future__ import annotations

from murgat.citations import parse_citations
from murgat.metric import summarize_results
from murgat.schema import (
    AtomicFact,
    FactVerdict,
    Item,
    JudgeCall,
    ResponseResult,
    RunSummary,
    Scores,
    SentenceResult,
)
from murgat.text import split_sentences


def test_response_result_round_trip() -> None:
    (sent,) = split_sentences("The man waves (visual, 0:12; audio, 0:12-0:14).")
    fact = AtomicFact(index=0, sentence_index=0, text="The man waves.", citations=sent.citations)
    verdict = FactVerdict(
        fact_index=0, joint="yes", alone={0: "yes", 1: "no"}, leave_one_out={1: "yes"},
        precise=[True, False], recall=1.0, precision=0.5,
        calls=[JudgeCall(stage="entail", evidence=[0, 1], verdict="yes", raw="Yes.")],
    )
    rr = ResponseResult(
        id="x", scores=Scores(coverage=1.0, precision=0.5, recall=1.0, f1=2 / 3, murgat_s=2 / 3),
        sentences=[SentenceResult(sentence=sent, verifiable=True, facts=[fact], verdicts=[verdict])],
    )
    back = ResponseResult.model_validate_json(rr.model_dump_json())
    assert back == rr
    assert back.sentences[0].verdicts[0].alone == {0: "yes", 1: "no"}


def test_run_summary_round_trip() -> None:
    s = summarize_results([ResponseResult(id="a", scores=Scores(coverage=1, precision=1, recall=1, f1=1, murgat_s=1))])
    assert RunSummary.model_validate_json(s.model_dump_json()) == s


def test_item_keeps_extra_fields() -> None:
    it = Item(id="1", media="a.mp4", response="r", source="videommmu")
    assert Item.model_validate_json(it.model_dump_json()).model_extra == {"source": "videommmu"}


def test_citation_round_trip() -> None:
    for c in parse_citations("(visual, 0:75; smell, 0:01; audio, 0:01-0:02)"):
        assert type(c).model_validate_json(c.model_dump_json()) == c
