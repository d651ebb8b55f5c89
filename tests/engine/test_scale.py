"""Work that must stay linear in the number of items (#21). Counted, not timed: a quadratic step
(a set rebuilt per item, list.count per id) shows up as a count that grows with n²."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.engine.folder import RunFolder


def test_compact_builds_its_lookups_once(tmp_path: Path, monkeypatch) -> None:
    """Before: compact rebuilt a set of the ordered ids for every id (100,000 items: 8x the run)."""
    import builtins

    out = tmp_path / "run"
    out.mkdir()
    n = 3000
    (out / "results.jsonl").write_text("".join(json.dumps({"id": f"i{k}"}) + "\n" for k in range(n)))
    folder = RunFolder(out, record=None)
    calls = {"set": 0}
    real_set = builtins.set

    class CountingSet(real_set):  # type: ignore[misc,valid-type]
        def __init__(self, *a):
            calls["set"] += 1
            super().__init__(*a)

    from murgat.engine import folder as folder_mod

    monkeypatch.setattr(folder_mod, "set", CountingSet, raising=False)
    folder.compact([f"i{k}" for k in reversed(range(n))])
    assert calls["set"] < 50
    assert json.loads((out / "results.jsonl").read_text().splitlines()[0])["id"] == f"i{n - 1}"
