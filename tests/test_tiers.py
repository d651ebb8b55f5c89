"""The test tiers of tests/conftest.py: every test has exactly one, and the tables name real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FILE_TIERS, FIXTURE_TIERS, ROOT, TIERS


def test_every_collected_test_has_exactly_one_tier(request: pytest.FixtureRequest) -> None:
    """Over the whole session (``make test`` collects the whole suite): ``-m unit``, ``-m integration``
    and ``-m e2e`` split the suite with nothing left out and nothing run twice."""
    items = request.session.items
    assert items
    wrong = {}
    for item in items:
        tiers = [m.name for m in item.iter_markers() if m.name in TIERS]
        if len(tiers) != 1:
            wrong[item.nodeid] = tiers
    assert not wrong


def test_the_tier_tables_name_test_files_and_tiers() -> None:
    """A renamed or deleted test file must not leave a stale entry (its tests would fall to ``unit``
    unnoticed under the new name)."""
    missing = [rel for rel in FILE_TIERS if not (ROOT / "tests" / rel).is_file()]
    assert not missing
    assert set(FILE_TIERS.values()) | set(FIXTURE_TIERS.values()) <= set(TIERS)
    assert all(Path(rel).name.startswith("test_") for rel in FILE_TIERS)


def test_most_tests_are_in_the_unit_tier(request: pytest.FixtureRequest) -> None:
    """``make test-fast`` is worth running only if it holds most of the suite; checked when the session
    collected the whole suite (as ``make test`` does), since a partial run says nothing about it."""
    items = request.session.items
    files = {Path(str(i.fspath)) for i in items}
    if len(files) < 100:
        pytest.skip("only part of the suite was collected")
    unit = sum(1 for i in items if i.get_closest_marker("unit") is not None)
    assert unit > len(items) / 2
