"""What an item's response is made of: only what its operations produced.

A conclusion (the last synthesize's answer, or the program's returned text) that cites a
segment no ``describe`` of the item cited used to reach ``responses.jsonl`` and be scored as
if the program had grounded it; it is refused now, naming the citations. Citations that
repeat a description's own segments are what the operations produced and stay.
"""

from __future__ import annotations

import pytest

from murgat.core.citations import make_citation
from murgat.programs.ops import Description, ExecutorApi
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
