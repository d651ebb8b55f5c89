"""Which records ``--retry-errors`` does again, and what the last line says about them."""

from __future__ import annotations

from murgat.core.schema import ResponseResult
from murgat.engine.folder import needs_retry
from murgat.engine.outcome import failure_line


def _undetermined(**causes: int) -> ResponseResult:
    return ResponseResult(id="a", case="undetermined", undetermined_causes=causes)


def test_an_unusable_decomposition_is_retried_and_never_called_an_abstention() -> None:
    rec = _undetermined(decomposition=2)
    assert needs_retry(rec) and needs_retry(rec.model_dump())
    line = failure_line([rec], None)
    assert line is not None and "2 sentence(s) could not be split into facts" in line and "--retry-errors" in line
    assert "abstained" not in line


def test_abstentions_and_caps_are_not_retried() -> None:
    assert not needs_retry(_undetermined(unknown=3)) and not needs_retry(_undetermined(over_limit=1))
    assert "abstained" in (failure_line([_undetermined(unknown=3)], None) or "")
