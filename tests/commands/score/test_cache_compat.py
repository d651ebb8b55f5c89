"""A response cache made before the evidence limits existed keeps answering: a score run over short
files asks the judge nothing new.

``tests/data/caches/short_files_cache_before.sqlite`` is the cache of ``murgat score`` over
``short_files_responses.jsonl`` (the bundled example media: video with sound, a capped 12-s visual
range, a point citation, audio only, picture only) made at commit 1907d76 — before evidence
limits, windowed text channels and sized answer caps — against the stand-in OpenAI-compatible
server (``tests/standin.py``, the real Chat Completions wire format). The judge's URL enters its
cache key, so it was a fixed name (``http://judge.invalid/v1``) reached through ``HTTP_PROXY``
(``-J client=httpx`` honours it), which a test can serve on any free port.
``short_files_before.json`` holds that run's request count and scores. Rerun now against a copy
of that cache, the server must receive no request and every score must be the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.engine.folder import RunFolder
from tests.standin import StandIn

DATA = Path(__file__).parents[2] / "data" / "caches"


def test_a_cache_made_before_limits_answers_every_request_of_a_short_file_run(tmp_path: Path, example_media: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    before = json.loads((DATA / "short_files_before.json").read_text())
    out = tmp_path / "run"
    out.mkdir()
    shutil.copy(DATA / "short_files_cache_before.sqlite", out / "cache.sqlite")
    with StandIn() as server:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.server.server_address[1]}")
        code = main(["score", str(DATA / "short_files_responses.jsonl"), "--media-root", str(example_media),
                     "--judge", "openai:m", "-J", "base_url=http://judge.invalid/v1", "-J", "client=httpx",
                     "--out", str(out), "--quiet", "--json", "--probes", "off"])  # the run of 1907d76: no probes
        assert code == 0
        assert server.requests == [], f"{len(server.requests)} request(s) sent: the old cache stopped answering"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judge_calls"] == before["requests"] and summary["cache_hits"] == before["requests"]
    assert summary["extra"]["this_invocation"]["sent"] == 0
    got = {r.id: r.scores.model_dump() for r in RunFolder(out).latest_results()}
    assert got == before["scores"]
