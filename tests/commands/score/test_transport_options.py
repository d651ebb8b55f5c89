"""``-J`` options that change only how answers are fetched (the HTTP client, the replicas' failure
handling, pacing) never decide a run's work: a scored folder resumes with ``-J client=httpx`` and its
results stay as they were, while an option that changes answers is still refused."""

from __future__ import annotations

import json
from pathlib import Path

from murgat.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "responses.jsonl"
CASSETTE = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["Something is there."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]


def _score(tmp: Path, media: Path, *more: str) -> int:
    cas = tmp / "cassette.jsonl"
    cas.write_text("".join(json.dumps(c) + "\n" for c in CASSETTE))
    return main(["score", str(EXAMPLE), "--judge", f"replay:{cas}", "--out", str(tmp / "run"), "--media-root",
                 str(media), "--quiet", "--json", *more])


def test_a_resume_with_another_http_client_is_the_same_run(tmp_path: Path, example_media: Path, capsys) -> None:
    assert _score(tmp_path, example_media) == 0
    capsys.readouterr()
    results = (tmp_path / "run" / "results.jsonl").read_text()
    for transport in (["-J", "client=httpx"], ["-J", "client=sdk", "-J", "endpoint_failures=5",
                                               "-J", "endpoint_cooldown_s=1"], ["-J", "client=lean"]):
        assert _score(tmp_path, example_media, *transport) == 0, capsys.readouterr().err
        out = capsys.readouterr()
        assert "different scoring settings" not in out.err
        assert json.loads(out.out)["extra"]["this_invocation"]["sent"] == 0  # nothing redone
        assert (tmp_path / "run" / "results.jsonl").read_text() == results
    fp = json.loads((tmp_path / "run" / "config.json").read_text())["fingerprint"]
    assert "client" not in json.dumps(fp)


def test_an_option_that_changes_answers_is_still_refused(tmp_path: Path, example_media: Path, capsys) -> None:
    assert _score(tmp_path, example_media, "-J", "client=httpx") == 0
    capsys.readouterr()
    assert _score(tmp_path, example_media, "-J", "client=httpx", "-J", "video=clip") == 2
    assert "different scoring settings (judge_decompose, judge_entail, judge_verify)" in capsys.readouterr().err
