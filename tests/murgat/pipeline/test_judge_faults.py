"""Judge faults of the second fault-finding pass (issue 22, "Caches and judges"), pinned.

Remote-judge tests use a stand-in OpenAI-compatible server on 127.0.0.1 (``tests/standin.py``)
that speaks the real Chat Completions wire format to murgat's real HTTP path; answers are
the recorded shapes of that format, scripted per test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.pipeline.rundir import RunDir

from ...standin import StandIn


def _inputs(tmp: Path, n: int = 2) -> Path:
    p = tmp / "in.jsonl"
    p.write_text("".join(json.dumps({"id": f"i{k}", "media": "friday.mp4",
                                     "response": "The woman speaks (audio, 0:01-0:03)."}) + "\n" for k in range(n)))
    return p


def _score(inp: Path, out: Path, media: Path, *extra: str) -> int:
    return main(["score", str(inp), "--media-root", str(media), "--judge", "openai:m", "--out", str(out),
                 "--quiet", "--json", *extra])


@pytest.mark.parametrize("bad", ["", "   ", "<html>502 Bad Gateway</html>"])
def test_empty_or_garbage_answers_are_not_cached_and_retry_errors_asks_again(tmp_path, example_media, capsys,
                                                                               monkeypatch, bad) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp, out = _inputs(tmp_path), tmp_path / "run"
    with StandIn() as server:
        base = ["--retries", "0", "-J", f"base_url={server.base_url}"]
        server.text = bad
        assert _score(inp, out, example_media, *base) == 1
        assert "--retry-errors" in capsys.readouterr().err.strip().splitlines()[-1]
        res = RunDir(out).latest_results()
        assert all(r.case == "undetermined" and r.undetermined_causes.get("unparseable") for r in res)
        server.text = None  # the judge recovers
        n_before = len(server.requests)
        assert _score(inp, out, example_media, *base, "--retry-errors") == 0
        assert len(server.requests) > n_before, "the recovered judge must be asked again"
        res = RunDir(out).latest_results()
        assert len(res) == 2 and all(r.case == "scored" and r.scores.murgat_s == 1.0 for r in res)
