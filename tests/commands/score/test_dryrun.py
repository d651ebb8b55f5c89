"""``score --dry-run`` is honest about what it cannot price: a model with no known price is "price
unknown" (it was $0.00), a total over such a model is a lower bound, the estimate is a table unless
``--json``, and calls per item are rounded (it printed 9.714285714285714)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main


def _inputs(tmp: Path, n: int) -> Path:
    p = tmp / "in.jsonl"
    rows = [{"id": f"a{k}", "media": "friday.mp4", "response": "She asks whether the lord is in (audio, 0:01-0:03; "
             "visual, 0:02). " + "".join(f"A woman stands at desk {j} (visual, 0:01). " for j in range(2 - k))}
            for k in range(n)]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _dry(tmp: Path, media: Path, n: int, *judge: str, json_out: bool = True) -> list[str]:
    return ["score", str(_inputs(tmp, n)), "--media-root", str(media), *judge, "-J", "api_key=x", "--out",
            str(tmp / "run"), "--dry-run", *(["--json"] if json_out else [])]


def test_an_unpriced_model_is_price_unknown_never_zero(tmp_path: Path, example_media: Path, capsys) -> None:
    assert main(_dry(tmp_path, example_media, 3, "--judge", "openai:my-local-model")) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["est_cost_usd"] is None and doc["price_unknown"] == ["openai:my-local-model"]
    assert doc["judges"][0]["est_cost_usd"] is None and doc["judges"][0]["price_usd_per_mtok"] is None
    assert doc["calls_per_item"] == round(doc["judge_calls_upper_bound"] / 3, 2) and doc["judge_calls_upper_bound"] % 3
    assert "price unknown for openai:my-local-model" in cap.err


def test_a_total_over_an_unpriced_model_is_a_lower_bound(tmp_path: Path, example_media: Path, capsys) -> None:
    assert main(_dry(tmp_path, example_media, 1, "--judge", "gemini:gemini-2.5-flash", "--judge-entail",
                     "openai:my-local-model")) == 0
    doc = json.loads(capsys.readouterr().out)
    priced = [r for r in doc["judges"] if r["est_cost_usd"] is not None]
    assert doc["est_cost_is_lower_bound"] and doc["price_unknown"] == ["openai:my-local-model"]
    assert priced and doc["est_cost_usd"] > 0 and doc["est_cost_usd"] == pytest.approx(sum(r["est_cost_usd"] for r in priced))


def test_the_estimate_is_a_table_unless_json(tmp_path: Path, example_media: Path, capsys) -> None:
    assert main(_dry(tmp_path, example_media, 1, "--judge", "openai:my-local-model", json_out=False)) == 0
    out = capsys.readouterr().out
    assert "dry run" in out and "price unknown" in out and "openai:my-local-model" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


def test_a_run_says_its_first_stage_before_checking_media_or_loading_anything(tmp_path: Path, example_media: Path,
                                                                                capsys) -> None:
    """A cold run showed nothing for most of a minute: its first stderr line is now the stage line that
    the items were read (before the media checks, the probes and any model); none under --json."""
    assert main(_dry(tmp_path, example_media, 3, "--judge", "openai:my-local-model", json_out=False)) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and err[0] == "score: 3 item(s) read; checking the settings and the media", err
    assert main(_dry(tmp_path, example_media, 3, "--judge", "openai:my-local-model")) == 0
    assert "item(s) read" not in capsys.readouterr().err


def test_identical_requests_are_counted_once_however_they_are_scheduled(tmp_path: Path, example_media: Path,
                                                                        capsys) -> None:
    """Two items asking the same questions about the same media make one set of paid calls (the pool sends a
    request in flight once and the cache answers it after); the count was 9 or 11 by the event loop's order."""
    one = tmp_path / "one"
    two = tmp_path / "two"
    one.mkdir()
    two.mkdir()
    row = {"media": "friday.mp4", "response": "A woman stands at a desk (visual, 0:01). She asks (audio, 0:01-0:03)."}
    (one / "in.jsonl").write_text(json.dumps({"id": "a", **row}) + "\n")
    (two / "in.jsonl").write_text("".join(json.dumps({"id": i, **row}) + "\n" for i in ("a", "b")))
    counts = []
    for d in (one, two):
        assert main(["score", str(d / "in.jsonl"), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                     "api_key=x", "--out", str(d / "run"), "--dry-run", "--json"]) == 0
        counts.append(json.loads(capsys.readouterr().out)["judge_calls_upper_bound"])
    assert counts[0] == counts[1] > 0
