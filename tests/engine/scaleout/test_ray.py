"""``murgat score --run-on ray`` on a real local Ray instance (2 CPUs).

The judge for the fault tests is the stand-in OpenAI-compatible server (``tests/standin.py``,
the real Chat Completions wire format over real HTTP), so every request a Ray worker sends is
counted where it arrives.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.engine.folder import RunFolder
from tests.engine.scaleout.conftest import normalised_records
from tests.standin import StandIn

ray = pytest.importorskip("ray", reason="Ray is part of the [ray] extra, installed by the bootstrap")
pytestmark = pytest.mark.slow

# which of several identical requests is sent and which is served from the cache or the
# in-flight copy depends on timing, in a local run as on Ray: those counters are left out
VOLATILE = {"latency_s", "cached", "deduplicated", "cache_hits"}


def _items(tmp: Path, n: int, media: tuple[str, ...] = ("friday.mp4", "nasa_13013.mp4", "jfk.flac")) -> Path:
    lines = {
        "friday.mp4": "She says somebody must have stolen the crown jewels (audio, 0:04-0:06). A woman sits at a desk "
                      "(visual, 0:02).",
        "nasa_13013.mp4": "The narrator says this is the optical and science segment of the Webb space telescope "
                          "(audio, 0:00-0:04). A worker stands on a lift (visual, 0:05).",
        "jfk.flac": "He says ask not what your country can do for you (audio, 0:03-0:07). He asks what you can do for "
                    "your country (audio, 0:08-0:10).",
    }
    p = tmp / "in.jsonl"
    with open(p, "w") as f:
        for k in range(n):
            m = media[k % len(media)]
            f.write(json.dumps({"id": f"i{k:03d}", "media": m, "response": f"Item {k}. " + lines[m]}) + "\n")
    return p


def _normalised(run: Path) -> dict[str, object]:
    """results.jsonl as {id: record} without what legitimately differs (timing, cache flags)."""
    return normalised_records(run / "results.jsonl", VOLATILE)


def test_ray_and_local_give_identical_results(tmp_path, example_media, ray_instance, capsys) -> None:
    inp = _items(tmp_path, 9)
    for judge in ("embedded",):
        args = [str(inp), "--media-root", str(example_media), "--judge", judge, "--quiet"]
        assert main(["score", *args, "--out", str(tmp_path / f"local-{judge}")]) in (0, 1)
        assert main(["score", *args, "--out", str(tmp_path / f"ray-{judge}"), "--run-on", "ray",
                     "--ray-group-size", "2"]) in (0, 1)
        local, remote = _normalised(tmp_path / f"local-{judge}"), _normalised(tmp_path / f"ray-{judge}")
        assert len(local) == 9 and local == remote
        s_local = json.loads((tmp_path / f"local-{judge}" / "summary.json").read_text())
        s_ray = json.loads((tmp_path / f"ray-{judge}" / "summary.json").read_text())
        assert s_local["murgat_s"] == s_ray["murgat_s"]
        assert s_ray["extra"]["ray"]["tasks"] >= 5 and s_ray["extra"]["ray"]["lost"] == 0


def test_replay_judge_same_results_and_a_rerun_asks_nothing(tmp_path, example_media, ray_instance) -> None:
    inp = tmp_path / "in.jsonl"
    rows = [{"id": f"r{k}", "media": m, "response": f"Person {k} speaks (audio, 0:01-0:03)."}
            for k, m in enumerate(["friday.mp4", "nasa_13013.mp4"] * 3)]
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cas = tmp_path / "cassette.jsonl"
    cas.write_text("".join(json.dumps(c) + "\n" for c in [
        {"match": {"task": "verify"}, "output": {"text": "Label: yes"}},
        {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["A person speaks (audio, 0:01-0:03)."]})}},
        {"match": {"task": "entail"}, "output": {"text": "Label: yes"}}]))
    args = [str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--quiet"]
    assert main(["score", *args, "--out", str(tmp_path / "local")]) == 0
    assert main(["score", *args, "--out", str(tmp_path / "ray"), "--run-on", "ray"]) == 0
    assert _normalised(tmp_path / "local") == _normalised(tmp_path / "ray")
    # the answers are in the run's cache: scoring again elsewhere with the same cache sends nothing
    assert main(["score", *args, "--out", str(tmp_path / "ray2"), "--run-on", "ray",
                 "--cache", str(tmp_path / "ray" / "cache.sqlite")]) == 0
    s = json.loads((tmp_path / "ray2" / "summary.json").read_text())
    assert s["extra"]["this_invocation"]["sent"] == 0 and s["extra"]["this_invocation"]["cache_hits"] > 0


def _ray_pids(title: str) -> list[int]:
    """Processes whose title Ray set to ``ray::TITLE``: ``run_group`` (a worker running a task right
    now), ``CacheService`` (the cache actor)."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if f"ray::{title}".encode() in (d / "cmdline").read_bytes():
                    pids.append(int(d.name))
            except OSError:
                continue
    return pids


def _kill_during_run(title: str, server: StandIn, after: int) -> tuple[threading.Thread, list[float]]:
    """A thread that SIGKILLs the first ``ray::TITLE`` process once ``after`` requests reached the
    server; the list gets the kill time (empty: nothing was found to kill within 60 s)."""
    killed: list[float] = []

    def assassin() -> None:
        deadline = time.time() + 60
        while time.time() < deadline:
            pids = _ray_pids(title)
            if pids and len(server.received) >= after:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(time.time())
                return
            time.sleep(0.05)

    t = threading.Thread(target=assassin, daemon=True)
    t.start()
    return t, killed


def _score_on_ray_once(inp: Path, media: Path, server: StandIn, out: Path) -> int:
    """The run the kill tests interrupt: two groups of six items, no retries (a lost call is lost)."""
    return main(["score", str(inp), "--media-root", str(media), "--judge", "openai:m", "-J",
                 f"base_url={server.base_url}", "--out", str(out), "--run-on", "ray", "--ray-group-size", "6",
                 "--concurrency", "4", "--quiet", "--retries", "0"])


def test_a_killed_worker_loses_nothing_and_repeats_no_answered_call(tmp_path, example_media, ray_instance,
                                                                     monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp = _items(tmp_path, 12, ("friday.mp4", "nasa_13013.mp4"))
    latency = 0.25
    with StandIn(latency=latency) as server:
        t, killed = _kill_during_run("run_group", server, after=6)
        code = _score_on_ray_once(inp, example_media, server, tmp_path / "run")
        t.join()
    assert killed, "no worker was found to kill"
    assert code == 0
    res = RunFolder(tmp_path / "run").latest_results()
    assert sorted(r.id for r in res) == [f"i{k:03d}" for k in range(12)]
    lines = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 12  # each item written once
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["extra"]["ray"]["resubmitted"] >= 1
    # a request sent twice must have been in flight when the worker died: none answered before
    first: dict[str, float] = {}
    for digest, at in server.received:
        if digest in first:
            assert first[digest] > killed[0] - latency - 1.0, "an answered request was sent again"
        else:
            first[digest] = at


def test_a_killed_cache_service_is_restarted_and_nothing_is_paid_twice(tmp_path, example_media, ray_instance,
                                                                       monkeypatch) -> None:
    """#22: killing the process that hosts the cache service turned every item into
    internal_error: ActorDiedError, and --retry-errors paid again for calls already answered."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp = _items(tmp_path, 12, ("friday.mp4", "nasa_13013.mp4"))
    with StandIn(latency=0.25) as server:
        t, killed = _kill_during_run("CacheService", server, after=8)
        code = _score_on_ray_once(inp, example_media, server, tmp_path / "run")
        t.join()
        assert killed, "the cache service was not found"
        res = RunFolder(tmp_path / "run").latest_results()
        assert code == 0 and sorted(r.id for r in res) == [f"i{k:03d}" for k in range(12)]
        assert not [r.error for r in res if r.error]
        n = len(server.received)
        assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                     f"base_url={server.base_url}", "--out", str(tmp_path / "run"), "--run-on", "ray",
                     "--retry-errors", "--quiet"]) == 0
        assert len(server.received) == n  # nothing to redo, nothing paid again


def test_this_invocation_agrees_with_the_records_on_a_fresh_ray_run(tmp_path, example_media, ray_instance,
                                                                   monkeypatch) -> None:
    """#22: on a fresh Ray run, this_invocation counted an answer another worker fetched as a cache
    hit while the records counted it as deduplicated."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    p = tmp_path / "in.jsonl"
    p.write_text("".join(json.dumps({"id": f"i{k:03d}", "media": ("friday.mp4", "nasa_13013.mp4")[k % 2],
                                     "response": f"Speaker {k % 3} talks (audio, 0:01-0:03). A man stands (visual, 0:02)."})
                         + "\n" for k in range(12)))
    with StandIn(latency=0.05) as server:
        assert main(["score", str(p), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                     f"base_url={server.base_url}", "--out", str(tmp_path / "run"), "--run-on", "ray",
                     "--ray-group-size", "2", "--quiet"]) == 0
        n = len(server.requests)
    doc = json.loads((tmp_path / "run" / "summary.json").read_text())
    mine = doc["extra"]["this_invocation"]
    # this invocation also asked the judge probes (in the driver, before the workers): 12 requests and the
    # token account's two twins sent, which no item's record holds
    probes = doc["extra"]["probes"]["judges"][0]["calls"]
    assert probes == 14 and n == doc["sent"] + probes
    assert (doc["judge_calls"], doc["sent"], doc["cache_hits"], doc["deduplicated"]) == (
        mine["requests"] - probes, mine["sent"] - probes, mine["cache_hits"], mine["deduplicated"])
    assert doc["judge_calls"] == doc["sent"] + doc["cache_hits"] + doc["deduplicated"]
    assert doc["extra"]["sent_media"]["requests"] == n  # the workers' accounts and the driver's


def test_cluster_wide_limits(tmp_path, example_media, ray_instance, monkeypatch) -> None:
    """Two workers, each free to run 8 requests at once: the cluster still keeps --concurrency 2
    and --rpm 4 (per 2-second window here, so the test is quick).

    The window is read where it is enforced, in the limit service's own count of admissions per
    window: the stand-in's arrival times would add the delivery delay, which load can stretch."""
    from murgat.engine.scaleout import driver as score_mod
    from murgat.engine.scaleout.services import start_services

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setattr(score_mod, "services_for_run", lambda path: start_services(path, window_s=2.0))
    inp = _items(tmp_path, 6, ("friday.mp4", "nasa_13013.mp4"))
    with StandIn(latency=0.1) as server:
        code = main(["score", str(inp), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                     f"base_url={server.base_url}", "--out", str(tmp_path / "run"), "--run-on", "ray",
                     "--ray-group-size", "3", "--concurrency", "2", "--rpm", "4", "--item-concurrency", "8",
                     "--quiet", "--probes", "off"])  # the workers' cluster-wide limiter: no driver-side probes
        received = len(server.received)
        peak = server.peak_in_flight
    assert code == 0 and received >= 12
    assert peak <= 2
    limits = json.loads((tmp_path / "run" / "summary.json").read_text())["extra"]["ray"]["limits"]
    assert limits["window_s"] == 2.0
    assert limits["sent"] == {"openai": received}, limits  # every request went through the one limiter (per provider)
    assert limits["peak_per_window"] == {"openai": 4}, limits  # it filled windows, and never past --rpm


def test_a_killed_driver_resumes(tmp_path, example_media, monkeypatch) -> None:
    """The driver (with its own local Ray instance) is SIGKILLed mid-run; a rerun scores only what
    is missing and the folder ends with every item once."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp = _items(tmp_path, 10, ("friday.mp4", "nasa_13013.mp4"))
    out = tmp_path / "run"
    with StandIn(latency=0.3) as server:
        cmd = [sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(example_media), "--judge",
               "openai:m", "-J", f"base_url={server.base_url}", "--out", str(out), "--run-on", "ray",
               "--ray-cpus", "2", "--ray-group-size", "1", "--concurrency", "2", "--quiet"]
        proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        results = out / "results.jsonl"
        while time.time() < deadline:
            if results.exists() and 2 <= len(results.read_text().splitlines()) < 10:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and the Ray processes it started
        proc.wait()
        done_before = {json.loads(x)["id"] for x in results.read_text().splitlines() if x.strip()}
        assert 0 < len(done_before) < 10
        n_before = len(server.received)
        rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
    res = RunFolder(out).latest_results()
    assert sorted(r.id for r in res) == [f"i{k:03d}" for k in range(10)]
    assert len(server.received) > n_before


def test_workers_stop_sending_when_the_driver_is_killed(tmp_path, example_media, monkeypatch) -> None:
    """#22: after kill -9 of the driver (only the driver: the Ray processes it started live on),
    workers kept sending requests for about 2 s. Now a worker on the driver's machine checks that the
    driver is alive before each request."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp = _items(tmp_path, 24, ("friday.mp4", "nasa_13013.mp4"))
    out = tmp_path / "run"
    with StandIn(latency=0.3) as server:
        cmd = [sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(example_media), "--judge",
               "openai:m", "-J", f"base_url={server.base_url}", "--out", str(out), "--run-on", "ray",
               "--ray-cpus", "2", "--ray-group-size", "2", "--concurrency", "2", "--retries", "0", "--quiet"]
        proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 120
            while time.time() < deadline and len(server.received) < 6:
                time.sleep(0.05)
            assert len(server.received) >= 6, "the run did not start"
            os.kill(proc.pid, signal.SIGKILL)  # the driver alone
            killed = time.time()
            proc.wait()
            time.sleep(3.0)
            late = [at for _, at in server.received if at > killed + 0.7]
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the Ray processes the driver had started
    assert late == [], f"{len(late)} request(s) sent more than 0.7 s after the driver died"


def test_a_response_over_the_cap_gets_its_error_record_on_ray_as_locally(tmp_path, example_media, ray_instance,
                                                                         capsys) -> None:
    """The loader's mark (``Item.input_problem``) is no part of an item's JSON: it travels beside the
    items of a group, and the worker gives the item its error record without reading it (the cassette
    answers nothing: a read would be a replay miss, exit 3)."""
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"id": f"big{k}", "media": "friday.mp4", "response": "She speaks. " * 200}) + "\n"
                           for k in range(2)))
    cas = tmp_path / "cassette.jsonl"
    cas.write_text("")
    args = [str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--quiet",
            "--max-response-chars", "1000"]
    assert main(["score", *args, "--out", str(tmp_path / "local")]) == 1
    assert main(["score", *args, "--out", str(tmp_path / "ray"), "--run-on", "ray"]) == 1
    capsys.readouterr()
    local, remote = _normalised(tmp_path / "local"), _normalised(tmp_path / "ray")
    assert local == remote and all(r["error_kind"] == "response_too_long" for r in remote.values())  # type: ignore[index]


def test_a_replay_miss_stops_the_run_as_locally(tmp_path, example_media, ray_instance, capsys) -> None:
    """A task's own error is not retried on another worker: the run stops with the local exit code."""
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "She speaks (audio, 0:01-0:03)."}) + "\n")
    cas = tmp_path / "cassette.jsonl"
    cas.write_text(json.dumps({"match": {"task": "verify"}, "output": {"text": "Label: yes"}}) + "\n")  # nothing else
    args = [str(inp), "--media-root", str(example_media), "--judge", f"replay:{cas}", "--quiet"]
    assert main(["score", *args, "--out", str(tmp_path / "local")]) == 3
    capsys.readouterr()
    assert main(["score", *args, "--out", str(tmp_path / "ray"), "--run-on", "ray"]) == 3
    assert "replay cassette miss" in capsys.readouterr().err
    assert not (tmp_path / "ray" / "results.jsonl").exists() or not (tmp_path / "ray" / "results.jsonl").read_text()



def test_a_slow_down_pauses_the_provider_for_the_whole_cluster(tmp_path, example_media, ray_instance,
                                                                monkeypatch) -> None:
    """#22: under a 429 storm Ray sent more requests than a local run (72 against 54): every Ray task
    had its own pause, so each probed on its own while the others' requests were refused.

    The stand-in limiter refuses two probes (requests that waited as asked), then lets the next
    one in; every wait is exactly 1 s (``Retry-After: 1``, ``--backoff-max 1``), so two pauses
    probing on their own, whatever their offset, put a request within 0.5 s of the other's refusal.
    With one pause for the whole cluster the storm costs what it costs locally: the refusals of
    the requests already in flight when it began (``--concurrency`` bounds them) and the two
    refused probes; no request is sent while the provider is paused."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    concurrency, rounds = 8, 2
    inp = _items(tmp_path, 8, ("friday.mp4", "nasa_13013.mp4"))
    counts: dict[str, dict[str, int]] = {}
    # two tasks (one per media file) run at once on the 2 CPUs, both sending when the storm begins
    ray_args = ["--run-on", "ray", "--ray-group-size", "4", "--ray-task-cpus", "1"]
    for where, extra in (("local", []), ("ray", ray_args)):
        with StandIn(latency=0.05) as server:
            server.slow_down = (1.0, 0.5, rounds)  # from the first request: both tasks start in the storm
            code = main(["score", str(inp), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                         f"base_url={server.base_url}", "--out", str(tmp_path / where), "--concurrency",
                         str(concurrency), "--backoff-max", "1", "--quiet", "--probes", "off", *extra])  # counts
        assert code == 0, where
        res = RunFolder(tmp_path / where).latest_results()
        assert len(res) == 8 and not [r.error for r in res if r.error], where
        counts[where] = {"sent": len(server.received), "refused": server.refused, "late": server.late}
    print("#22 429 storm:", counts)
    local, ray_ = counts["local"], counts["ray"]
    assert local["late"] == 0 and ray_["late"] == 0, counts
    for c in (local, ray_):
        assert rounds < c["refused"] <= rounds + concurrency, counts  # the first burst, then the refused probes
    assert ray_["sent"] - ray_["refused"] == local["sent"] - local["refused"], "the same answered requests"
    # one pause for the whole storm: the probe of the first refusal held it to the end
    limits = json.loads((tmp_path / "ray" / "summary.json").read_text())["extra"]["ray"]["limits"]
    assert limits.get("paused") == {"openai:m": 1}, limits


def test_ray_workers_use_the_sessions_media_cache(ray_instance) -> None:
    """A Ray worker reads ``MURGAT_CACHE_DIR`` from the environment the instance started with: the
    test session's cache, never the user's ``~/.cache/murgat/cache``."""

    @ray.remote
    def cache_dir() -> str | None:
        return os.environ.get("MURGAT_CACHE_DIR")

    assert ray.get(cache_dir.remote()) == os.environ["MURGAT_CACHE_DIR"]
