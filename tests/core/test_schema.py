"""JSON round trips of the records murgat writes to disk are lossless."""

from __future__ import annotations

from murgat.core.citations import parse_citations
from murgat.core.metric import summarize_results
from murgat.core.schema import (
    AtomicFact,
    FactVerdict,
    Item,
    JudgeCall,
    ResponseResult,
    RunSummary,
    Scores,
    SentenceResult,
)
from murgat.core.text import split_sentences


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


def test_citations_without_boxes_serialise_byte_identically_to_before_boxes() -> None:
    """Old run folders resume and compare unchanged: these strings are what the code wrote
    before ``Citation.boxes`` existed (checked against that commit)."""
    from murgat.core.text import split_sentences

    before = [
        '{"index":0,"text":"He waves (visual, 0:12; audio, 0:12-0:14).","span":[0,42],"citations":[{"modality":'
        '"visual","start":12.0,"end":12.0,"point":true,"raw":"visual, 0:12","span":[10,22],"group_span":[9,41],'
        '"valid":true,"reason":null},{"modality":"audio","start":12.0,"end":14.0,"point":false,"raw":"audio, '
        '0:12-0:14","span":[24,40],"group_span":[9,41],"valid":true,"reason":null}]}',
        '{"index":1,"text":"Nothing (sound, 0:75).","span":[43,65],"citations":[{"modality":"audio","start":75.0,'
        '"end":75.0,"point":true,"raw":"sound, 0:75","span":[52,63],"group_span":[51,64],"valid":false,'
        '"reason":"seconds field 75 >= 60 in \'0:75\'"}]}',
    ]
    sents = split_sentences("He waves (visual, 0:12; audio, 0:12-0:14). Nothing (sound, 0:75).")
    assert [s.model_dump_json() for s in sents] == before
    assert "boxes" not in sents[0].citations[0].model_dump()
    # and a record written before boxes reads back to the same bytes
    assert [type(s).model_validate_json(b).model_dump_json() for s, b in zip(sents, before, strict=True)] == before


def test_boxes_round_trip_in_records() -> None:
    from murgat.core.citations import parse_citations

    (c,) = parse_citations("(visual, 0:12, box1000=100,200,550,800)")
    text = c.model_dump_json()
    assert '"boxes":[{"x1":0.1,"y1":0.2,"x2":0.55,"y2":0.8,"raw":"box1000=100,200,550,800"}]' in text
    assert type(c).model_validate_json(text) == c
