"""What an item's response is made of: only what its operations produced.

A conclusion (the last synthesize's answer, or the program's returned text) that cites a
segment no ``describe`` of the item cited used to reach ``responses.jsonl`` and be scored as
if the program had grounded it; it is refused now, naming the citations. Citations that
repeat a description's own segments are what the operations produced and stay.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from murgat.core.citations import format_group, make_citation
from murgat.core.text import canonical_text, scored_citations, split_sentences
from murgat.programs.ops import Description, ExecutorApi, _clean_description, restore_citations
from murgat.programs.runner import AnswerRefused, assemble, forged_citations

ASK = make_citation("audio", 1.0, 3.0)
SEEN = make_citation("visual", 4.0)


def api_with(*conclusions: tuple[str, str], unverified: bool = False) -> ExecutorApi:
    api = ExecutorApi(executor=None, checker=None, pool=None, ctx=None, settings=None)  # type: ignore[arg-type]
    api.descriptions = [Description(1, "A woman asks for him.", "audio", [ASK], "verified"),
                        Description(2, "A crown is worn.", "visual", [SEEN], "unverified" if unverified else "verified")]
    api.conclusions = list(conclusions)
    return api


def test_a_conclusion_citing_only_described_segments_is_kept() -> None:
    raw = "She asks for him [1] (audio, 0:01-0:03), on screen [2].\nAnswer: B"
    cited = "She asks for him (audio, 0:01-0:03) (audio, 0:01-0:03), on screen (visual, 0:04).\nAnswer: B"
    text, option = assemble(api_with((raw, cited)), "", 2)
    assert option == "B" and "(visual, 0:04)" in text


@pytest.mark.parametrize(("conclusion", "forged"), [
    ("He is in a bad humor (audio, 0:03-0:05).\nAnswer: B", ["(audio, 0:03-0:05)"]),
    ("He waves (visual, 0:01; audio, 0:01-0:03).\nAnswer: B", ["(visual, 0:01)"]),
    ("It is noon (at 0:02).\nAnswer: B", ["(at 0:02)"]),  # a group the grammar reads, with no modality: still a claim
])
def test_returned_text_with_citations_no_operation_produced_is_refused(conclusion: str, forged: list[str]) -> None:
    api = api_with()
    assert forged_citations(api, conclusion) == forged
    with pytest.raises(AnswerRefused) as err:
        assemble(api, conclusion, 2)
    assert err.value.status == "forged_citations"
    assert err.value.reason.startswith(f"the program's returned text cites {forged[0]}")


def test_a_synthesized_answer_citing_an_unverified_description_is_refused() -> None:
    """An unverified description is left out of the response, so its segment is not one an
    operation vouched for."""
    raw = "He wears a crown (visual, 0:04).\nAnswer: A"
    with pytest.raises(AnswerRefused, match=r"the last synthesize's answer cites \(visual, 0:04\)"):
        assemble(api_with((raw, raw), unverified=True), "", 2)


def test_prose_parentheses_are_not_citations() -> None:
    api = api_with()
    assert forged_citations(api, "The man (the one in red) waits (for 3 hours).\nAnswer: B") == []
    assert assemble(api, "The man (the one in red) waits.\nAnswer: B", 2)[1] == "B"


def test_a_found_time_with_more_decimals_than_its_written_citation_is_not_a_forgery() -> None:
    """A found 1.23456 s is written 0:01.235: the same segment, compared at the written precision."""
    found = make_citation("audio", 1.23456, 3.0)
    api = api_with()
    api.descriptions = [Description(1, "A woman asks for him.", "audio", [found], "verified")]
    raw = "She asks for him [1].\nAnswer: B"
    text, option = assemble(api_with_conclusion(api, raw), "", 2)
    assert option == "B" and "(audio, 0:01.235-0:03)" in text
    assert forged_citations(api, "She asks (audio, 0:01.2-0:03).") == []  # fewer decimals still: the same segment
    assert forged_citations(api, "She asks (audio, 0:01.3-0:03).") == ["(audio, 0:01.3-0:03)"]


def api_with_conclusion(api: ExecutorApi, raw: str) -> ExecutorApi:
    """``api`` whose last synthesize answered ``raw`` (its ``[n]`` markers restored as synthesize does)."""
    api.conclusions = [(raw, restore_citations(raw, {d.index: d for d in api.descriptions}))]
    return api


@pytest.mark.parametrize("conclusion", [
    "He waves (visual, 0:0<think>x</think>9).\nAnswer: B",  # the think block hides inside a time
    "He waves (visual, 0:0<THINKING>x</THINKING>9) [1].\nAnswer: B",
    "He waves (visual, 0:0<thi[7]nk>x</thi[7]nk>9).\nAnswer: B",  # an unknown marker dropped forms <think>
    "He waves.\n</think>(visual, 0:09)\nAnswer: B",
])
def test_citations_that_appear_only_as_score_reads_the_response_are_forged(conclusion: str) -> None:
    with pytest.raises(AnswerRefused, match=r"cites \(visual, 0:09\)") as err:
        assemble(api_with_conclusion(api_with(), conclusion), "", 2)
    assert err.value.status == "forged_citations"


def test_a_description_whose_cleaned_text_forms_a_citation_is_refused() -> None:
    """Removing the citation the model wrote inside another leaves a new one: the assembled
    response, read as score reads it, cites a segment no operation described."""
    text = _clean_description("A man waves (visual, 0:0(audio, 0:02)9).")
    assert text == "A man waves (visual, 0:09)."
    api = api_with()
    api.descriptions = [Description(1, text, "audio", [ASK], "verified")]
    with pytest.raises(AnswerRefused, match=r"the assembled response \(as murgat score reads it\) cites \(visual, 0:09\)"):
        assemble(api_with_conclusion(api, "He waves [1].\nAnswer: B"), "", 2)


@pytest.mark.parametrize("written", ["A man waves (visual,\n0:09).", "A man waves (visual," + " " * 420 + "0:09).",
                                     "A man waves (visual,\t\t0:09).", "A man <think>(visual, 0:01)</think>waves."])
def test_blanks_are_collapsed_before_a_descriptions_own_citations_are_removed(written: str) -> None:
    assert _clean_description(written) == "A man waves."


# ---------------------------------------------------------------- properties

_PIECES = ["<think>", "</think>", "<thi", "nk>", "</thi", "[1]", "[2]", "[7]", "(", ")", "visual", "audio", ", ",
           "0:0", "4", "9", ".5", "-", ";", " ", "  ", "\n", "\t", " " * 401, "He waves", ".", "Answer: B", "x"]
_SOUP = st.lists(st.sampled_from(_PIECES), max_size=24).map("".join)


@settings(derandomize=True, deadline=None, max_examples=300)
@given(_SOUP)
def test_the_canonical_form_is_idempotent(text: str) -> None:
    once = canonical_text(text)
    assert canonical_text(once) == once
    line = canonical_text(text, one_line=True)
    assert canonical_text(line, one_line=True) == line and "\n" not in line


@settings(derandomize=True, deadline=None, max_examples=300)
@given(_SOUP, _SOUP, _SOUP)
def test_a_program_output_cites_exactly_what_its_operations_attached(said1: str, said2: str, raw: str) -> None:
    """Whatever the executor wrote and however the conclusion is spelled (ending, as a program's
    does, with its answer), the response either is refused or cites, as score reads it, exactly the
    segments its descriptions carry."""
    raw += "\nAnswer: B"
    found = [make_citation("audio", 1.23456, 3.0), make_citation("visual", 4.0)]
    api = api_with()
    api.descriptions = [Description(k + 1, _clean_description(said), found[k].modality, [found[k]], "verified")
                        for k, said in enumerate((said1, said2))]
    try:
        text, _ = assemble(api_with_conclusion(api, raw), "", 2)
    except AnswerRefused as exc:
        assert exc.status == "forged_citations"
        return
    read = scored_citations(text)
    attached = [c for d in api.descriptions if d.text and split_sentences(d.text) for c in d.citations]
    assert {format_group([c]) for c in read} == {format_group([c]) for c in attached} | (
        {format_group([c]) for c in read} & {format_group([c]) for c in found})
    assert all(c.valid and format_group([c]) in {format_group([f]) for f in found} for c in read)
