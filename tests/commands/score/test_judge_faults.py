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
from murgat.engine.folder import RunFolder
from tests.cassettes import YES_CASSETTE as ANSWER_ALL
from tests.standin import StandIn, serving_thread


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
        res = RunFolder(out).latest_results()
        assert all(r.case == "undetermined" and r.undetermined_causes.get("unparseable") for r in res)
        server.text = None  # the judge recovers
        n_before = len(server.requests)
        assert _score(inp, out, example_media, *base, "--retry-errors") == 0
        assert len(server.requests) > n_before, "the recovered judge must be asked again"
        res = RunFolder(out).latest_results()
        assert len(res) == 2 and all(r.case == "scored" and r.scores.murgat_s == 1.0 for r in res)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_judge_names_the_cause_in_the_record_and_the_last_stderr_line(tmp_path, example_media, capsys,
                                                                                    monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    url = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    # an endpoint that never answered stops the run (exit 4) before any item is marked failed (#30 item 5)
    assert _score(_inputs(tmp_path, 1), tmp_path / "run", example_media, "--retries", "0", "-J", f"base_url={url}") == 4
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cannot be reached" in last and "connection refused" in last.lower() and url in last
    assert RunFolder(tmp_path / "run").latest_results() == []


def test_http_error_with_a_non_json_body_shows_status_and_first_bytes(tmp_path, example_media, capsys,
                                                                      monkeypatch) -> None:
    """A proxy in front of the judge answers ``502`` with an HTML page (a recorded shape of such
    answers, served over a local socket)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx upstream down</body></html>" + b" " * 5000

    class Proxy(BaseHTTPRequestHandler):
        def log_message(self, *a) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(502)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    serving_thread(server).start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        assert _score(_inputs(tmp_path, 1), tmp_path / "run", example_media, "--retries", "0",
                      "-J", f"base_url={url}") == 1
    finally:
        server.shutdown()
        server.server_close()
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "HTTP 502" in last and "502 Bad Gateway" in last and url in last
    (rec,) = RunFolder(tmp_path / "run").latest_results()
    assert "nginx upstream down" in rec.judge_failure and len(rec.judge_failure) <= 500


def _replay_score(tmp: Path, media: Path, response: str, *extra: str, rows: list | None = None) -> tuple[int, object]:
    cas = tmp / "cassette.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows or ANSWER_ALL))
    inp = tmp / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": response}) + "\n")
    code = main(["score", str(inp), "--media-root", str(media), "--judge", f"replay:{cas}", "--out", str(tmp / "run"),
                 "--quiet", "--json", *extra])
    (rec,) = RunFolder(tmp / "run").latest_results()
    return code, rec


def test_a_fact_with_more_citations_than_the_cap_is_undetermined_without_a_call(tmp_path, example_media) -> None:
    """Before: 40 distinct citations on one fact made 1 + 40 + … entailment calls, each carrying the
    evidence (10,000 made 10,003 calls and an 834 MB request)."""
    cites = " ".join(f"(audio, 0:0{k // 10}.{k % 10}0)" for k in range(40))  # 40 groups: a group over 400 characters is prose
    rows = [ANSWER_ALL[0], {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": [f"She speaks {cites}."]})}}]
    _, rec = _replay_score(tmp_path, example_media, f"The woman speaks {cites}.", "--max-citations-per-fact", "16", rows=rows)
    (fv,) = rec.sentences[0].verdicts
    assert fv.status == "undetermined" and "--max-citations-per-fact 16" in fv.reason and "40 segments" in fv.reason
    assert not fv.calls and rec.judge_calls == 2  # verify + decompose only
    assert rec.undetermined_causes == {"over_limit": 1} and rec.case == "undetermined"


def test_a_fact_whose_evidence_is_longer_than_the_cap_is_undetermined(tmp_path, example_media) -> None:
    _, rec = _replay_score(tmp_path, example_media, "The woman speaks (audio, 0:00-0:04).", "--max-evidence-s", "2")
    (fv,) = rec.sentences[0].verdicts
    assert fv.status == "undetermined" and "--max-evidence-s 2" in fv.reason and not fv.calls


def test_within_the_caps_a_fact_is_judged_as_before(tmp_path, example_media) -> None:
    _, rec = _replay_score(tmp_path, example_media, "The woman speaks (audio, 0:01; audio, 0:02).")
    (fv,) = rec.sentences[0].verdicts
    assert fv.status == "judged" and fv.calls and rec.scores.murgat_s == 1.0


def test_a_huge_judge_answer_is_kept_once_and_clipped(tmp_path, example_media, capsys) -> None:
    """A 2 MB reason (a judge stuck in a loop) became MBs of results per item, copied into every
    sentence of a response-level decomposition; records now keep it once, cut to
    ``MAX_KEPT_ANSWER_CHARS`` with its start and its end (where the label is)."""
    from murgat.judges.parsing import MAX_KEPT_ANSWER_CHARS

    ramble = "I keep thinking. " * 120_000  # ~2 MB
    facts = {"sentences": [{"index": i, "facts": ["The woman speaks (audio, 0:01)."]} for i in range(3)],
             "note": ramble}
    rows = [{"match": {"task": "verify"}, "output": {"text": ramble + "\nLabel: yes"}},
            {"match": {"task": "decompose_response"}, "output": {"text": json.dumps(facts)}},
            {"match": {"task": "entail"}, "output": {"text": ramble + "\nLabel: yes"}}]
    code, rec = _replay_score(tmp_path, example_media, " ".join(["The woman speaks (audio, 0:01)."] * 3),
                              "--decompose-variant", "response", rows=rows)
    assert code == 0 and rec.scores.murgat_s == 1.0  # the label at the end was still read
    size = (tmp_path / "run" / "results.jsonl").stat().st_size
    assert size < 12 * MAX_KEPT_ANSWER_CHARS, size  # before: > 20 MB
    first, *others = rec.sentences
    assert len(first.decompose_raw) <= MAX_KEPT_ANSWER_CHARS + 100 and "characters cut" in first.decompose_raw
    assert all(o.decompose_raw == "(one answer for all; kept on sentence 0)" for o in others)
    assert first.verify_raw.rstrip().endswith("Label: yes")


def test_a_huge_chain_answer_is_kept_once_in_faithfulness_records(tmp_path, example_media) -> None:
    from murgat.core.steps import FaithResult
    from murgat.judges.parsing import MAX_KEPT_ANSWER_CHARS

    steps = ["A woman talks on a phone (visual, 0:01).", "She asks a question (audio, 0:01-0:03).", "So it is B."]
    answer = json.dumps({"steps": [{"index": i, "type": "reasoning", "reason": "x" * 500_000} for i in range(3)]})
    rows = [{"match": {"task": "faith_describe"}, "output": {"text": "A woman on a phone."}},
            {"match": {"task": "faith_chain"}, "output": {"text": answer}}]
    cas = tmp_path / "judge.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in rows))
    inp = tmp_path / "chains.jsonl"
    inp.write_text(json.dumps({"id": "c", "media": "friday.mp4", "response": " ".join(steps) + "\nAnswer: B"}) + "\n")
    assert main(["faithfulness", str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}",
                 "--out", str(tmp_path / "f"), "--granularity", "chain", "--quiet", "--json"]) in (0, 1)
    (line,) = (tmp_path / "f" / "results.jsonl").read_text().splitlines()
    rec = FaithResult.model_validate_json(line)
    assert len(line) < 4 * MAX_KEPT_ANSWER_CHARS  # before: the 1.5 MB answer three times
    assert "characters cut" in rec.steps[0].raw and all(s.raw.startswith("(one answer for all") for s in rec.steps[1:])


def test_faithfulness_refuses_a_judge_that_cannot_label_steps_before_any_work(tmp_path, example_media, capsys) -> None:
    """Before: ``--judge embedded`` ran, labelled every step unparseable and blamed the judge's
    availability ("0 judge request(s) got no answer")."""
    inp = tmp_path / "chains.jsonl"
    inp.write_text(json.dumps({"id": "c", "media": "friday.mp4", "response": "A woman talks (audio, 0:01).\nAnswer: B"})
                   + "\n")
    out = tmp_path / "f"
    code = main(["faithfulness", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out", str(out),
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "embedded" in err and "faith_chain" in err
    assert not (out / "results.jsonl").exists()


def test_judge_capabilities_are_declared() -> None:
    from murgat.judges import make_judge

    assert make_judge("embedded").refusal("entail", "verify") is None
    assert "faith_step" in (make_judge("embedded").refusal("faith_step") or "")
    assert make_judge("openai:m", {"api_key": "k"}).refusal("faith_step") is None


def test_faithfulness_with_an_unreachable_judge_names_the_cause(tmp_path, example_media, capsys, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    url = f"http://127.0.0.1:{_free_port()}/v1"
    inp = tmp_path / "chains.jsonl"
    inp.write_text(json.dumps({"id": "c", "media": "friday.mp4", "response": "A woman talks (audio, 0:01).\nAnswer: B"})
                   + "\n")
    code = main(["faithfulness", str(inp), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                 f"base_url={url}", "--retries", "0", "--variant", "vanilla", "--out", str(tmp_path / "f"), "--quiet"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 4 and "connection refused" in last.lower() and url in last
