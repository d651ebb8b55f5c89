"""Defects found by attacking ``murgat score`` on purpose, each reproduced and pinned.

Remote-judge tests here use a stand-in OpenAI-compatible server on 127.0.0.1
(``tests/standin.py``) that speaks the real Chat Completions wire format, driven by the real
``openai`` SDK. Others use hand-written replay cassettes (``match`` lines).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.engine.folder import RunFolder
from tests.standin import StandIn

BREAKERS = "line\u2028sep\u2029para\u0085nel"
ANSWER_ALL = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["The woman speaks on the phone."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]


def _cassette(tmp: Path, rows: list[dict] = ANSWER_ALL) -> Path:
    p = tmp / "cassette.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _inputs(tmp: Path, rows: list[dict]) -> Path:
    p = tmp / "in.jsonl"
    # ensure_ascii=False: the raw U+2028/2029/0085 characters are written into the file
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return p


def _score(inp: Path, out: Path, judge: str, media: Path, *extra: str) -> int:
    return main(["score", str(inp), "--media-root", str(media), "--judge", judge, "--out", str(out), "--quiet", "--json",
                 *extra])


# 1 ------------------------------------------------------------------------------------------


def test_line_separators_round_trip_through_score_resume_and_summarize(tmp_path, example_media, capsys) -> None:
    inp = _inputs(tmp_path, [
        {"id": f"u{k}", "media": "friday.mp4", "question": f"Q{BREAKERS}?", "response": f"The woman speaks{BREAKERS} "
         f"on the phone (audio, 0:01-0:03).\nAnswer: A"} for k in range(3)])
    assert len(inp.read_text(encoding="utf-8").splitlines()) > 3  # the raw characters are in the input
    out = tmp_path / "run"
    cas = _cassette(tmp_path)
    assert _score(inp, out, f"replay:{cas}", example_media) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["n_items"] == 3 and first["murgat_s"]["value"] == 1.0
    raw = (out / "results.jsonl").read_text(encoding="utf-8")
    assert "\u2028" not in raw and "\u0085" not in raw and raw.count("\n") == 3
    res = RunFolder(out).latest_results()
    assert BREAKERS in res[0].sentences[0].sentence.text
    assert _score(inp, out, f"replay:{cas}", example_media) == 0  # resume
    assert json.loads(capsys.readouterr().out)["extra"]["this_invocation"]["requests"] == 0
    assert main(["summarize", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["murgat_s"]["value"] == 1.0


def test_line_separators_round_trip_through_generate_and_its_compaction(tmp_path, example_media, capsys) -> None:
    q = _inputs(tmp_path, [{"id": "g1", "media": "friday.mp4", "question": "?", "options": ["a", "b"], "gold": "A"},
                           {"id": "g2", "media": "missing.mp4", "question": "?", "options": ["a", "b"], "gold": "A"}])
    text = f"The woman speaks{BREAKERS} on the phone (audio, 0:01-0:03).\nAnswer: A"
    gen = tmp_path / "gen.jsonl"
    gen.write_text(json.dumps({"match": {"task": "generate", "inputs": {"id": "g1"}}, "output": {"text": text}}) + "\n"
                   + json.dumps({"match": {"task": "generate", "inputs": {"id": "g2"}}, "output": {"text": text}}) + "\n")
    media = tmp_path / "m"
    media.mkdir()
    shutil.copy(example_media / "friday.mp4", media / "friday.mp4")
    out = tmp_path / "responses.jsonl"
    args = ["generate", str(q), "--model", f"replay:{gen}", "--mode", "cite", "--media-root", str(media),
            "--out", str(out), "--json"]
    assert main(args) == 1  # g2 has no media
    shutil.copy(example_media / "friday.mp4", media / "missing.mp4")
    assert main([*args, "--retry-errors"]) == 0  # g2 is generated again and the file compacted
    capsys.readouterr()
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len([ln for ln in lines if ln]) == 2 and "\u2029" not in out.read_text(encoding="utf-8")
    recs = [json.loads(ln) for ln in lines if ln]
    assert all(r["response"] == text for r in recs)
    assert main(args) == 0  # a rerun served from the file
    capsys.readouterr()
    assert _score(out, tmp_path / "run", f"replay:{_cassette(tmp_path)}", media) == 0
    assert json.loads(capsys.readouterr().out)["murgat_s"]["value"] == 1.0


# 3 ------------------------------------------------------------------------------------------


def test_decomposition_context_is_bounded_and_long_responses_are_refused(tmp_path, example_media, capsys) -> None:
    from murgat.commands.score.runner import decompose_context
    from murgat.core.text import split_sentences

    sents = split_sentences(" ".join(f"Sentence number {k} is here (audio, 0:01)." for k in range(2000)))
    ctx_late = decompose_context(sents, 1999, 3, 1500)
    assert ctx_late.startswith("Sentence number 1996") and len(ctx_late) <= 1500
    assert decompose_context(sents, 0, 3, 1500) == "" and decompose_context(sents, 5, 0, 1500) == ""
    assert len(decompose_context(sents, 1999, 1000, 200)) <= 201
    inp = _inputs(tmp_path, [{"id": "huge", "media": "friday.mp4", "response": "x" * 5000},
                             {"id": "fine", "media": "friday.mp4", "response": "The woman speaks (audio, 0:01)."}])
    assert _score(inp, tmp_path / "run", f"replay:{_cassette(tmp_path)}", example_media, "--max-response-chars", "1000") == 1
    cap = capsys.readouterr()
    res = {r.id: r for r in RunFolder(tmp_path / "run").latest_results()}
    assert res["huge"].error.startswith("response_too_long: 5,000 characters") and res["huge"].case == "error"
    assert res["fine"].scores.murgat_s == 1.0 and "FAILED: 1 of 2" in cap.err


def test_dry_run_tokens_grow_linearly_with_response_length(tmp_path, example_media, capsys) -> None:
    toks = []
    for n in (100, 400):
        text = " ".join(f"The woman speaks about topic {k} (audio, 0:01)." for k in range(n))
        inp = _inputs(tmp_path, [{"id": "r", "media": "friday.mp4", "response": text}])
        assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                     "base_url=http://127.0.0.1:9/v1", "-J", "api_key=x", "--out", str(tmp_path / f"d{n}"), "--dry-run", "--json"]) == 0
        toks.append(json.loads(capsys.readouterr().out)["est_input_tokens"])
    assert toks[1] / toks[0] < 4.5  # linear (4× the sentences); the whole prefix made it ≈ 10×


# 5, 6 ---------------------------------------------------------------------------------------


def test_judge_outage_items_are_retried_with_retry_errors_and_exit_status_says_so(tmp_path, example_media, capsys,
                                                                                 monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp = _inputs(tmp_path, [{"id": f"o{k}", "media": "friday.mp4", "response": "The woman speaks (audio, 0:01-0:03)."}
                             for k in range(2)])
    out = tmp_path / "run"
    with StandIn() as server:
        base = ["--retries", "0", "-J", f"base_url={server.base_url}", "--probes", "off"]  # counts requests
        server.mode = "fail"
        assert _score(inp, out, "openai:m", example_media, *base) == 1
        cap = capsys.readouterr()
        assert "FAILED: 2 of 2 item(s) undetermined" in cap.err.strip().splitlines()[-1]
        res = RunFolder(out).latest_results()
        assert all(r.case == "undetermined" and r.n_judge_errors > 0 and r.undetermined_causes.get("error") for r in res)
        server.mode = "ok"
        n_before = len(server.requests)
        assert _score(inp, out, "openai:m", example_media, *base) == 1  # plain rerun: kept, and it says why
        cap = capsys.readouterr()
        assert "keeping 0 earlier item(s) with errors and 2 left undetermined by judge errors" in cap.err
        assert "--retry-errors" in cap.err and len(server.requests) == n_before
        assert _score(inp, out, "openai:m", example_media, *base, "--retry-errors") == 0
        res = RunFolder(out).latest_results()
        assert len(res) == 2 and all(r.case == "scored" and r.scores.murgat_s == 1.0 for r in res)


def test_missing_media_root_exits_2_before_any_work(tmp_path, capsys) -> None:
    """#21: a --media-root that does not exist is a settings error (exit 2), found before any work."""
    inp = _inputs(tmp_path, [{"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}])
    code = _score(inp, tmp_path / "run", "embedded", tmp_path / "no-such-folder")
    cap = capsys.readouterr()
    assert code == 2 and "--media-root" in cap.err and "does not exist" in cap.err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_every_item_in_error_exits_non_zero_and_says_where_murgat_looked(tmp_path, capsys) -> None:
    inp = _inputs(tmp_path, [{"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}])
    empty = tmp_path / "empty-media"
    empty.mkdir()
    code = _score(inp, tmp_path / "run", "embedded", empty)
    cap = capsys.readouterr()
    assert code == 1
    lines = cap.err.strip().splitlines()
    assert lines[-1].startswith("FAILED: 1 of 1 item(s) ended in an error (missing_media: 1)")
    assert f"looked in {empty}" in lines[-2] and "--media-root" in lines[-2]


def test_max_undetermined_share(tmp_path, example_media, capsys) -> None:
    rows = [*ANSWER_ALL[:2], {"match": {"task": "entail", "inputs": {"fact": "The woman speaks on the phone."}},
                              "output": {"text": "I cannot tell."}}]
    inp = _inputs(tmp_path, [{"id": "a", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."},
                             {"id": "b", "media": "friday.mp4", "response": "Nothing to see here."}])
    cas = _cassette(tmp_path, rows)
    assert _score(inp, tmp_path / "r1", f"replay:{cas}", example_media) == 0  # 1 of 2 undetermined: allowed
    assert _score(inp, tmp_path / "r2", f"replay:{cas}", example_media, "--max-undetermined", "0.25") == 1
    assert "limit: --max-undetermined 0.25" in capsys.readouterr().err


def test_unwritable_media_cache_degrades_instead_of_failing(tmp_path, example_media, capsys, monkeypatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MURGAT_CACHE_DIR", str(blocker / "cache"))  # cannot be created, even by root
    inp = _inputs(tmp_path, [{"id": "a", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}])
    assert _score(inp, tmp_path / "run", "embedded", example_media) in (0, 1)
    cap = capsys.readouterr()
    assert "media cache" in cap.err and "cannot be written" in cap.err
    (r,) = RunFolder(tmp_path / "run").latest_results()
    assert r.error is None


# 7 ------------------------------------------------------------------------------------------


@pytest.fixture
def root_and_outside(tmp_path: Path, example_media: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    shutil.copy(example_media / "friday.mp4", outside / "secret.mp4")
    shutil.copy(example_media / "friday.mp4", root / "inside.mp4")
    os.symlink(outside / "secret.mp4", root / "link.mp4")
    # an HLS playlist and an ffconcat list saved under media names, pointing at a file outside
    (root / "playlist.mp4").write_text(f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n{outside / 'secret.mp4'}\n"
                                       "#EXT-X-ENDLIST\n")
    (root / "concat.mp4").write_text(f"ffconcat version 1.0\nfile '{outside / 'secret.mp4'}'\n")
    return root, outside


def test_media_outside_the_root_is_refused(tmp_path, root_and_outside, capsys) -> None:
    root, outside = root_and_outside
    names = {"dotdot": "../outside/secret.mp4", "absolute": str(outside / "secret.mp4"), "symlink": "link.mp4",
             "hls": "playlist.mp4", "concat": "concat.mp4", "ok": "inside.mp4"}
    inp = _inputs(tmp_path, [{"id": k, "media": v, "response": "She talks (audio, 0:01-0:03)."} for k, v in names.items()])
    assert _score(inp, tmp_path / "run", f"replay:{_cassette(tmp_path)}", root) == 1
    res = {r.id: r for r in RunFolder(tmp_path / "run").latest_results()}
    for k in ("dotdot", "absolute", "symlink"):
        assert res[k].error.startswith("media_outside_root") and "--allow-media-outside-root" in res[k].error
    for k in ("hls", "concat"):  # refused by the demuxer allow-list or the file-only protocol list
        assert res[k].error.startswith("corrupt_media"), res[k].error
    assert res["ok"].error is None and res["ok"].scores.murgat_s == 1.0
    capsys.readouterr()
    # opting in reads the outside files, but playlists stay refused
    assert _score(inp, tmp_path / "run2", f"replay:{_cassette(tmp_path)}", root, "--allow-media-outside-root") == 1
    res = {r.id: r for r in RunFolder(tmp_path / "run2").latest_results()}
    assert all(res[k].error is None for k in ("dotdot", "absolute", "symlink", "ok"))
    assert res["hls"].error and res["concat"].error


def test_validate_reports_media_outside_root(tmp_path, root_and_outside, capsys) -> None:
    root, _ = root_and_outside
    inp = _inputs(tmp_path, [{"id": "x", "media": "../outside/secret.mp4", "response": "Hi (audio, 0:01)."}])
    main(["validate", str(inp), "--media-root", str(root), "--json"])
    assert "media_outside_root" in capsys.readouterr().out


# 8 ------------------------------------------------------------------------------------------


def test_unwritable_out_and_cache_are_one_line_errors_before_any_work(tmp_path, example_media, capsys) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    inp = _inputs(tmp_path, [{"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}])
    assert _score(inp, blocker / "run", "embedded", example_media) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot write to --out") and "Traceback" not in err and len(err.splitlines()) == 1
    assert _score(inp, tmp_path / "run", "embedded", example_media, "--cache", str(blocker / "c.sqlite")) == 2
    assert capsys.readouterr().err.startswith("error: cannot write to --cache")


def _unshare_ok() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-m", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _unshare_ok(), reason="needs a private mount namespace (root) for a read-only file system")
def test_read_only_file_system_out(tmp_path, example_media) -> None:
    """A real read-only mount (tmpfs, ro) in a private mount namespace."""
    ro = tmp_path / "ro"
    ro.mkdir()
    inp = _inputs(tmp_path, [{"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}])
    script = (f"mount -t tmpfs -o ro tmpfs {ro} && exec {sys.executable} -m murgat score {inp} --media-root "
              f"{example_media} --judge embedded --out {ro / 'run'} --quiet")
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    assert r.returncode == 2 and "read-only file system" in r.stderr and "Traceback" not in r.stderr


def test_cache_disk_full_is_reported_once_and_the_run_goes_on(tmp_path, example_media, capsys, monkeypatch) -> None:
    """SQLite's own SQLITE_FULL (page limit reached), not a mock of it."""
    from murgat.judges import cache as cache_mod

    real_open = cache_mod.ResponseCache._open

    def tiny(self):  # the database may not grow past its current pages
        conn = real_open(self)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count={pages}")
        return conn

    monkeypatch.setattr(cache_mod.ResponseCache, "_open", tiny)
    inp = _inputs(tmp_path, [{"id": f"a{k}", "media": "friday.mp4", "response": f"She talks {k} (audio, 0:01-0:03)."}
                             for k in range(3)])
    long_yes = [{"match": {"task": "verify"}, "output": {"text": "yes, " + "because " * 1500}}, *ANSWER_ALL[1:]]
    assert _score(inp, tmp_path / "run", f"replay:{_cassette(tmp_path, long_yes)}", example_media) == 0
    cap = capsys.readouterr()
    assert cap.err.count("cannot be written") == 1 and "rollback" not in cap.err
    summary = json.loads(cap.out)
    assert summary["n_scored"] == 3 and summary["extra"]["this_invocation"]["cache_write_errors"] == 1


def test_results_write_failure_stops_cleanly_with_what_was_written_intact(tmp_path, example_media, capsys,
                                                                           monkeypatch) -> None:
    import errno

    from murgat.core import jsonl

    inp = _inputs(tmp_path, [{"id": f"w{k}", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}
                             for k in range(6)])
    out = tmp_path / "run"
    real_fsync = os.fsync
    calls = {"n": 0}

    def failing_fsync(fd):
        calls["n"] += 1
        if calls["n"] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(jsonl.os, "fsync", failing_fsync)
    code = main(["score", str(inp), "--media-root", str(example_media), "--judge", f"replay:{_cassette(tmp_path)}",
                 "--out", str(out), "--quiet", "--item-concurrency", "1"])
    err = capsys.readouterr().err
    assert code == 5 and "No space left on device" in err and "intact" in err and "Traceback" not in err
    monkeypatch.setattr(jsonl.os, "fsync", real_fsync)
    kept = RunFolder(out).latest_results()
    assert 2 <= len(kept) <= 3 and all(r.scores.murgat_s == 1.0 for r in kept)
    assert _score(inp, out, f"replay:{_cassette(tmp_path)}", example_media) == 0  # resumes
    assert len(RunFolder(out).latest_results()) == 6


# 9 ------------------------------------------------------------------------------------------


def test_corrupt_results_lines_are_moved_aside_and_rescored(tmp_path, example_media, capsys) -> None:
    inp = _inputs(tmp_path, [{"id": f"c{k}", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}
                             for k in range(3)])
    out = tmp_path / "run"
    cas = _cassette(tmp_path)
    assert _score(inp, out, f"replay:{cas}", example_media) == 0
    lines = (out / "results.jsonl").read_text().split("\n")
    lines[1] = lines[1][:40] + "\x00garbage"  # middle line
    lines[2] = '{"id": "c2", "not": "a result"}'  # last line, still ending in a newline
    (out / "results.jsonl").write_text("\n".join(lines))
    capsys.readouterr()
    assert _score(inp, out, f"replay:{cas}", example_media) == 0
    cap = capsys.readouterr()
    assert "2 corrupt line(s)" in cap.err and "results.corrupt.jsonl" in cap.err
    assert (out / "results.corrupt.jsonl").read_text().count("\n") == 2
    assert sorted(r.id for r in RunFolder(out).latest_results()) == ["c0", "c1", "c2"]
    assert main(["summarize", str(out), "--json"]) == 0


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_cache_is_moved_aside(tmp_path, example_media, capsys, damage) -> None:
    inp = _inputs(tmp_path, [{"id": "a", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}])
    out = tmp_path / "run"
    cas = _cassette(tmp_path)
    assert _score(inp, out, f"replay:{cas}", example_media) == 0
    db = out / "cache.sqlite"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3] if damage == "truncate" else os.urandom(len(data)))
    for side in ("cache.sqlite-wal", "cache.sqlite-shm"):
        (out / side).unlink(missing_ok=True)
    assert _score(inp, out, f"replay:{cas}", example_media, "--overwrite") == 0
    cap = capsys.readouterr()
    assert "not a usable SQLite cache" in cap.err and "Traceback" not in cap.err
    assert list(out.glob("cache.sqlite.corrupt-*"))
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3


# 11 -----------------------------------------------------------------------------------------


def test_empty_decomposition_is_flagged_not_a_silent_zero(tmp_path, example_media, capsys) -> None:
    rows = [ANSWER_ALL[0], {"match": {"task": "decompose"}, "output": {"text": '{"facts": []}'}}, ANSWER_ALL[2]]
    inp = _inputs(tmp_path, [{"id": "e", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}])
    assert _score(inp, tmp_path / "run", f"replay:{_cassette(tmp_path, rows)}", example_media) == 1
    summary = json.loads(capsys.readouterr().out)
    (r,) = RunFolder(tmp_path / "run").latest_results()
    assert r.case == "undetermined" and r.scores.murgat_s is None and r.n_empty_decompositions == 1
    assert "no facts" in r.sentences[0].verdicts[0].reason
    assert summary["n_empty_decompositions"] == 1 and summary["murgat_s"]["value"] is None


def test_config_json_holds_json_values_only_sorted(tmp_path, example_media, capsys) -> None:
    inp = _inputs(tmp_path, [{"id": "a", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}])
    _score(inp, tmp_path / "run", f"replay:{_cassette(tmp_path)}", example_media)
    text = (tmp_path / "run" / "config.json").read_text()
    assert "frozenset" not in text and "OUTPUT_AFFECTING" not in text
    doc = json.loads(text)
    assert list(doc["config"]) == sorted(doc["config"])


def test_summary_call_vocabulary_adds_up(tmp_path, example_media, capsys) -> None:
    same = "She talks (audio, 0:01-0:03)."
    inp = _inputs(tmp_path, [{"id": f"v{k}", "media": "friday.mp4", "response": same} for k in range(3)])
    assert _score(inp, tmp_path / "run", f"replay:{_cassette(tmp_path)}", example_media) == 0
    s = json.loads(capsys.readouterr().out)
    now = s["extra"]["this_invocation"]
    assert s["judge_calls"] == 9 == now["requests"]
    assert s["sent"] + s["cache_hits"] + s["deduplicated"] == s["judge_calls"]
    assert s["sent"] == now["sent"] == 3 and s["cache_hits"] == now["cache_hits"]
    assert s["deduplicated"] == now["deduplicated"]


def test_summarize_never_rewrites_a_folder_a_live_run_may_be_writing(tmp_path, example_media, capsys) -> None:
    inp = _inputs(tmp_path, [{"id": "a", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}])
    out = tmp_path / "run"
    assert _score(inp, out, f"replay:{_cassette(tmp_path)}", example_media) == 0
    with open(out / "results.jsonl", "a") as f:
        f.write('{"id": "b", "scores": {')  # a line being written right now by another process
    before = (out / "results.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["summarize", str(out), "--json"]) == 0
    assert (out / "results.jsonl").read_bytes() == before and "skipped" in capsys.readouterr().err


def test_labels_and_cassettes_keep_line_separators(tmp_path) -> None:
    from murgat.human_eval.labels import load_labels
    from murgat.judges.replay import ReplayJudge

    cas = tmp_path / "c.jsonl"
    cas.write_text(json.dumps({"match": {"task": "verify", "inputs": {"sentence": BREAKERS}}, "output": {"text": "yes"}},
                              ensure_ascii=False) + "\n", encoding="utf-8")
    j = ReplayJudge(str(cas))
    assert len(j.partial["verify"]) == 1
    labels = tmp_path / "l.jsonl"
    labels.write_text(json.dumps({"id": "r1", "annotator": "a", "sentences": [{"index": 0, "text": BREAKERS}]},
                                 ensure_ascii=False) + "\n", encoding="utf-8")
    (got,) = load_labels(labels)
    assert got.sentences[0].text == BREAKERS


def test_summarize_explains_an_empty_comparison(tmp_path, example_media, capsys) -> None:
    cas = _cassette(tmp_path)
    a = _inputs(tmp_path, [{"id": "x1", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}])
    assert _score(a, tmp_path / "A", f"replay:{cas}", example_media) == 0
    b = tmp_path / "b.jsonl"
    b.write_text(json.dumps({"id": "y1", "media": "friday.mp4", "response": "She talks (audio, 0:01-0:03)."}) + "\n")
    assert _score(b, tmp_path / "B", f"replay:{cas}", example_media) == 0
    capsys.readouterr()
    assert main(["summarize", str(tmp_path / "A"), str(tmp_path / "B")]) == 0
    assert "no scored item ids in common" in " ".join(capsys.readouterr().out.split())
