"""The driver of a Ray run: groups items by media file, runs each group as a Ray task, and is
the only writer of the run folder.

Why it keeps the one-machine guarantees:

* **one writer** — results stream back from the tasks (Ray generator tasks) and the driver
  appends them to ``results.jsonl`` in batches (one write + fsync each), under the same folder
  lock as a local run; a killed driver leaves a folder that a rerun resumes like a local one;
* **a lost worker loses nothing** — a task whose worker dies is not replayed by Ray (a replay of
  a generator must repeat its earlier outputs exactly, which items finishing in a different
  order would not); the driver resubmits the group's items it has *not* received, up to
  ``--ray-task-retries`` times, and ignores a result whose id it already wrote. Judge answers
  given before the crash are in the cluster's cache (:mod:`murgat.engine.scaleout.services`), so the
  retry asks none of them again;
* **limits and cache are cluster-wide** (same module).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.engine.errors import SettingsError
from murgat.engine.scaleout.services import start_services
from murgat.judges.base import JudgeStats
from murgat.media import safewrite

if TYPE_CHECKING:
    from murgat.engine.options import RunSettings


class RayUnavailable(SettingsError):
    """Ray is not installed, or the cluster cannot be started or joined (a setting this machine
    cannot honour: exit 2, like other bad settings)."""


def require_ray() -> None:
    """Refuse ``--run-on ray`` where Ray is not installed, before any work (exit 2)."""
    try:
        import ray  # noqa: F401 - only to say early, and in one place, how to get it
    except ImportError as exc:
        raise RayUnavailable("--run-on ray needs Ray: pip install 'murgat[ray]'") from exc


def check_address(address: str | None) -> None:
    """Refuse a ``--ray-address`` ``host:port`` that takes no connection, before any work: a run
    checks its settings and the cluster before it spends requests (its judge probes)."""
    _reachable(address, f"--ray-address {address}" if address else "a local Ray instance")


def init_ray(address: str | None, num_cpus: int | None = None) -> bool:
    """Connect to ``address`` (``auto``, ``host:port`` or ``ray://host:port``) or start a local
    instance; returns whether this process started it (and must shut it down).

    A ``host:port`` is tried first (a TCP connection, 5 s at most): with nothing listening there,
    Ray itself retries for minutes and prints each retry from its C++ core straight to the
    terminal. What Ray writes to stderr while it starts is kept aside and shown only when it
    starts, so a failure is the one line of :class:`RayUnavailable`."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable("--run-on ray needs Ray: pip install 'murgat[ray]'") from exc
    if ray.is_initialized():
        return False
    where = f"--ray-address {address}" if address else "a local Ray instance"
    _reachable(address, where)
    kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING,
                          "configure_logging": True}
    try:
        with _stderr_kept_aside() as noise:
            if address:
                ray.init(address=address, **kw)
            else:
                ray.init(num_cpus=num_cpus or os.cpu_count() or 1, **kw)
    except Exception as exc:  # unreachable, refused, token-protected, no client extra: one line, exit 2
        first = (str(exc).strip() or type(exc).__name__).split("\n")[0][:300]
        hint = " (ray:// addresses need the client extra: pip install 'ray[client]')" if (
            address and address.startswith("ray://") and "client" in str(exc).lower()) else ""
        raise RayUnavailable(f"cannot start or join {where}: {type(exc).__name__}: {first}{hint}") from None
    if noise.text:
        sys.stderr.write(noise.text)
    return True


def _reachable(address: str | None, where: str) -> None:
    """Raise :class:`RayUnavailable` when ``address`` names a ``host:port`` that takes no connection."""
    host, sep, port = (address or "").removeprefix("ray://").rpartition(":")
    if not (sep and host and port.isdigit()):
        return  # "auto", no address (a local instance) or a name Ray resolves itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise RayUnavailable(f"cannot start or join {where}: nothing answers there ({reason})") from None


class _KeptAside:
    text = ""


@contextlib.contextmanager
def _stderr_kept_aside() -> Iterator[_KeptAside]:
    """File descriptor 2 goes to a temporary file for the block (Ray's C++ core writes there directly,
    past ``sys.stderr``); what was written is in ``.text`` afterwards."""
    kept = _KeptAside()
    sys.stderr.flush()
    saved = os.dup(2)
    with safewrite.anonymous_file() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield kept
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            kept.text = tmp.read().decode("utf-8", "replace")


@dataclass
class Group:
    """Items of one media file handed to one task (retried with what is still missing)."""

    index: int
    items: list[Any]
    attempts: int = 0
    received: set[str] = field(default_factory=set)
    pids: list[int] = field(default_factory=list)


def group_items(items: Sequence[Any], size: int) -> list[Group]:
    """Items grouped by media file (each file is probed, decoded and transcribed by one task),
    split into groups of at most ``size`` so one file with many questions still spreads out."""
    by_media: dict[str, list[Any]] = {}
    for it in items:
        by_media.setdefault(str(it.media), []).append(it)
    groups: list[Group] = []
    for media in sorted(by_media):
        rows = by_media[media]
        for k in range(0, len(rows), max(1, size)):
            groups.append(Group(index=len(groups), items=rows[k:k + size]))
    return groups


@dataclass
class RayRunReport:
    written: int = 0
    duplicates_ignored: int = 0
    resubmitted: int = 0
    lost: list[str] = field(default_factory=list)  # ids no attempt returned
    stats: list[dict[str, Any]] = field(default_factory=list)  # one per finished task
    worker_pids: set[int] = field(default_factory=set)
    services: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


class _Groups:
    """The driver's side of one Ray run over groups: a thread per running group streams its records
    into one queue; this thread alone takes them, writes them in batches and resubmits what a lost
    worker did not return (see :func:`run_groups`)."""

    def __init__(self, remote: Any, payload_of: Callable[[list[Any]], dict[str, Any]], services: tuple[Any, ...],
                 write: Callable[[list[dict[str, Any]]], None], on_written: Callable[[int], None] | None) -> None:
        self.remote, self.payload_of, self.services = remote, payload_of, services
        self.write, self.on_written = write, on_written
        self.report = RayRunReport()
        self.events: queue.Queue[tuple[str, Group, Any]] = queue.Queue()
        self.seen: set[str] = set()
        self.running = 0
        self.batch: list[dict[str, Any]] = []
        self.last_flush = time.monotonic()

    def consume(self, g: Group) -> None:
        import ray

        try:
            gen = self.remote.remote(self.payload_of([it for it in g.items if it.id not in g.received]), *self.services)
            for ref in gen:
                self.events.put(("rec", g, ray.get(ref)))
            self.events.put(("done", g, None))
        except ray.exceptions.RayTaskError as exc:
            # the task itself raised (a replay miss, a bug): as in a local run the run stops with it
            self.events.put(("error", g, exc.as_instanceof_cause()))
        except Exception as exc:  # the worker was lost: its items go to another one
            self.events.put(("failed", g, exc))

    def submit(self, g: Group) -> None:
        g.attempts += 1
        self.running += 1
        threading.Thread(target=self.consume, args=(g,), name=f"murgat-ray-{g.index}", daemon=True).start()

    def flush(self) -> None:
        if self.batch:
            self.write(self.batch)
            self.report.written += len(self.batch)
            if self.on_written:
                self.on_written(len(self.batch))
            self.batch = []
        self.last_flush = time.monotonic()

    def record(self, g: Group, payload: dict[str, Any]) -> None:
        """One record streamed back (or the group's closing statistics); a repeated id is ignored."""
        if "__stats__" in payload:
            self.report.stats.append(payload["__stats__"])
            self.report.worker_pids.add(payload["__stats__"].get("pid"))
            return
        rid = str(payload.get("id"))
        g.received.add(rid)
        if rid in self.seen:
            self.report.duplicates_ignored += 1
            return
        self.seen.add(rid)
        self.batch.append(payload)
        if len(self.batch) >= 64 or time.monotonic() - self.last_flush > 0.2:
            self.flush()

    def failed(self, g: Group, why: Any, retries: int, pending: list[Group]) -> None:
        """A group whose worker was lost: its missing items go again, or are lost after ``retries``."""
        self.running -= 1
        missing = [it for it in g.items if it.id not in g.received]
        if missing and g.attempts <= retries:
            self.report.resubmitted += 1
            pending.insert(0, g)
        elif missing:
            self.report.lost += [it.id for it in missing]
            print(f"warning: {len(missing)} item(s) of {g.items[0].media} were not done: {why}", file=sys.stderr)


def run_groups(
    groups: list[Group],
    task: Callable[..., Any],
    payload_of: Callable[[list[Any]], dict[str, Any]],
    services: tuple[Any, ...],
    write: Callable[[list[dict[str, Any]]], None],
    *,
    max_in_flight: int,
    retries: int,
    on_written: Callable[[int], None] | None = None,
    task_cpus: float = 1,
) -> RayRunReport:
    """Run ``task`` (a generator function of ``(payload, *services)``) for every group and hand
    each yielded record to ``write`` in batches, from this thread only."""
    import ray

    run = _Groups(ray.remote(task).options(max_retries=0, num_cpus=task_cpus), payload_of, services, write, on_written)
    pending = list(groups)
    t0 = time.monotonic()
    try:
        while pending or run.running:
            while pending and run.running < max_in_flight:
                run.submit(pending.pop(0))
            try:
                kind, g, payload = run.events.get(timeout=0.2)
            except queue.Empty:
                run.flush()
                continue
            if kind == "rec":
                run.record(g, payload)
            elif kind == "done":
                run.running -= 1
            elif kind == "error":
                raise payload
            else:
                run.failed(g, payload, retries, pending)
        run.flush()
    except BaseException:
        # keep what already came back (Ctrl-C, a lost connection) unless writing is what failed
        with contextlib.suppress(Exception):
            run.flush()
        raise
    finally:
        run.report.seconds = time.monotonic() - t0
    return run.report


def shutdown(started: bool) -> None:
    if started:
        import ray

        ray.shutdown()


def services_for(cache_path: Path) -> tuple[Any, Any]:
    return start_services(cache_path)


def services_for_run(cache_path: Path) -> tuple[Any, Any] | None:
    """``None``: :func:`run_on_cluster` starts the standard services (tests replace this to shorten
    the rate window)."""
    return None


def run_on_cluster(s: RunSettings, cache_path: Path, todo: list[Any], task: Callable[..., Any],
                payload_of: Callable[[list[Any]], dict[str, Any]], write: Callable[[list[dict[str, Any]]], None],
                *, label: str, total: int, con: Any, services: tuple[Any, Any] | None = None,
                transcribes: bool = False) -> RayRunReport:
    """The whole driver side of one command on Ray: start or join Ray, start the services, run
    the groups of ``todo`` with a progress bar, collect the services' counts, shut down. ``s`` is
    the command's settings (their ``--ray-…`` fields; ``--quiet``/``--json`` hide the bar).

    A task that transcribes reserves as many CPUs as ASR uses threads (``murgat.media.asr.ASR_THREADS``,
    fixed for reproducible decoding): two such tasks on two CPUs would each run two threads on
    a shared core and finish later than one after the other (measured in benchmarks/bench_ray.py)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from murgat.core.console import console

    where = s.scale_out()
    started = init_ray(where.ray_address, where.ray_cpus)  # RayUnavailable
    import ray

    try:
        # resolved here: the services may run where this process's working folder means nothing
        cache, limits = services or services_for(Path(cache_path).resolve())
        groups = group_items(todo, where.ray_group_size)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        task_cpus = 1.0
        if where.ray_task_cpus:
            task_cpus = min(float(where.ray_task_cpus), float(cpus))  # more than the cluster has would never run
        elif transcribes:
            from murgat.media.asr import ASR_THREADS

            task_cpus = float(min(ASR_THREADS, max(1, cpus)))
        progress = Progress(TextColumn(f"[bold]{label} (ray)"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=con if con is not None else console(stderr=True),
                            disable=getattr(s, "quiet", False) or getattr(s, "print_json", False))
        with progress:
            bar = progress.add_task("items", total=total, completed=total - len(todo))
            report = run_groups(groups, task, payload_of, (cache, limits), write, max_in_flight=max(2, 2 * cpus),
                                retries=where.ray_task_retries, on_written=lambda n: progress.advance(bar, n),
                                task_cpus=task_cpus)
        report.services = {"cache_claims": ray.get(cache.stats.remote()), "limits": ray.get(limits.stats.remote())}
        if services is None:
            report.services["cache_faults"] = ray.get(cache.close.remote())
    finally:
        shutdown(started)
    return report


def summed_stats(report: RayRunReport) -> tuple[int, int, dict[str, Any]]:
    """(requests, deduplicated, {judge name: JudgeStats}) summed over the report's tasks."""
    totals: dict[str, JudgeStats] = {}
    requests = deduplicated = 0
    for st in report.stats:
        requests += st.get("requests", 0)
        deduplicated += st.get("deduplicated", 0)
        for name, js in st["judges"].items():
            acc = totals.setdefault(name, JudgeStats())
            for k, v in js.items():
                setattr(acc, k, getattr(acc, k) + v)
    return requests, deduplicated, totals


def report_extra(report: RayRunReport) -> dict[str, Any]:
    """What a summary records about the Ray side of a run."""
    return {"tasks": len(report.stats), "workers": len(report.worker_pids), "resubmitted": report.resubmitted,
            "duplicates_ignored": report.duplicates_ignored, "lost": len(report.lost),
            "seconds": round(report.seconds, 2), **report.services}
