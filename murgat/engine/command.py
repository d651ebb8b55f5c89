"""The one lifecycle of a run command: each command is a small declaration that :func:`run_command` runs.

A run command (``score``, ``faithfulness``, ``reflect``, ``program``, ``generate``, ``sweep``) is a
:class:`Command`: its settings model, how it loads its items, where it writes, what it opens
before any item runs (the judges of its roles, its configuration and fingerprint, one results
stream per folder it fills), its item task (run one item, the item's error record), what
identifies an item's work (a digest, apart from the task), and how it summarizes, reports and
prints. :func:`run_command` does the rest, the same way for every command:

1. **load** the items and select them (``--ids``, ``--limit``); a ``--media-root`` that is not a
   folder, unreadable input or a selection of nothing is refused (exit 2);
2. **check and hold the outputs** (:func:`~murgat.engine.guards.check_outputs`,
   :func:`~murgat.engine.guards.held`): never one of the run's inputs, writable, locked;
3. **open**: the command builds its judges (a provider that cannot answer its role is refused,
   exit 2 — :mod:`murgat.engine.roles`), its configuration and its fingerprint; a run refused up
   to here leaves nothing it made (no folder, no cache, no lock file);
4. **check the fingerprint** against ``config.json`` (written before the first record;
   :meth:`~murgat.engine.folder.RunFolder.check_config`), then **probe the judges** the command
   declares (:meth:`Command.probe_paths`, ``--probes``; :mod:`murgat.engine.judge_probes`): the report is
   recorded in ``config.json`` beside the settings, never in the fingerprint, and ``--probes
   require`` stops here with exit 2 when a probe failed;
5. **plan** each stream once (:func:`~murgat.engine.loop.plan_work`: done, edited, to do) and
   **run** it here (the item loop, one progress bar) or on Ray (:mod:`murgat.engine.scaleout`; the driver
   and its workers know only this protocol: a worker builds the task from the stream's JSON
   ``payload`` with :meth:`Command.task`);
6. **compact** each stream into input order, **summarize** (with the judges' account when the
   command keeps one: :attr:`Command.judge_account`), write ``summary.json``, the **report** and, when
   ``echo``, the tables, then the probes' outcome again; the last stderr line says what failed (exit 1).

A replay miss stops the run with exit 3, a write that fails with exit 5
(:func:`~murgat.engine.errors.stopped`); every stop is a
:class:`~murgat.engine.errors.CommandError`, printed by the command line and raised by the API.
Commands that run other commands (``sweep``: generate then score; ``program --score``; ``score
--gold``: ground) do it through :class:`Others`, given by the layer above the commands, so no
command package imports another.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from murgat.core.inputs import InputError
from murgat.core.schema import Item
from murgat.core.terminal import for_terminal
from murgat.engine.errors import CommandError, SettingsError, stopped
from murgat.engine.folder import RunFolder, needs_retry, record_field
from murgat.engine.guards import Held, Outputs, check_outputs, held
from murgat.engine.judge_probes import (
    identity_lines,
    probe_before_run,
    probe_lines,
    recorded_probes,
    with_judge_account,
)
from murgat.engine.loop import Digest, ItemTask, plan_work, run_items
from murgat.engine.options import RunSettings
from murgat.engine.preflight import MediaPlace, check_media_root
from murgat.engine.progress import item_progress, stats_text
from murgat.engine.roles import JudgeFactory, JudgeMaker
from murgat.engine.run_state import Others, Outcome, Run, Stream, Work
from murgat.engine.scaleout import driver
from murgat.engine.scaleout.driver import init_ray, shutdown
from murgat.engine.scaleout.tasks import TaskSpec, run_on_ray
from murgat.judging.probes.paths import ProbePath
from murgat.media import stages
from murgat.media.interrupt import run_async

S = TypeVar("S", bound=RunSettings)


class Command(Generic[S]):
    """A run command's declaration; :func:`run_command` runs it (see the module docstring). The
    defaults serve a command with one folder at ``--out`` holding JSON records."""

    #: the folder kind (``config.json``), also the command's name
    kind: ClassVar[str] = ""
    #: the file of the run folder its summary is written to
    summary_file: ClassVar[str] = "summary.json"
    #: whether its summary records the judges' account: the probes, each judge's identity as the
    #: provider reported it, and what this invocation sent (:mod:`murgat.engine.judge_probes`)
    judge_account: ClassVar[bool] = False

    def needs(self, s: S) -> dict[str, tuple[str, ...]]:
        """The request tasks each role's provider must answer (checked by :meth:`JudgeMaker.role`
        before any work: a provider that cannot is refused, exit 2)."""
        return {}

    def refuse(self, s: S) -> None:
        """Settings this command refuses (a :class:`SettingsError`) before anything is read or written."""

    def load(self, s: S) -> list[Item]:
        """The items of the run, selected."""
        raise NotImplementedError

    def outputs(self, s: S) -> Outputs:
        return Outputs(Path(s.out))

    def folder(self, s: S, outputs: Outputs) -> RunFolder:
        """The run folder (``config.json``, ``summary.json``; the results stream of a one-stream command)."""
        return RunFolder(outputs.folder, record=None)

    def reset(self, s: S, folder: RunFolder) -> None:
        """``--overwrite``: forget what the folder holds (the cache stays)."""
        folder.reset()

    def judge_maker(self, s: S) -> JudgeMaker:
        """How the run's providers are made (``score --dry-run`` and ``--record`` wrap them)."""
        return JudgeMaker(s.cache_path())

    def check(self, s: S, run: Run) -> None:
        """Refusals that need the folder but come before the fingerprint (``generate``'s adopted files)."""

    def open(self, s: S, run: Run) -> Work:
        raise NotImplementedError

    def probe_paths(self, s: S, run: Run, work: Work) -> list[ProbePath]:
        """The judge paths to probe before the first item (:mod:`murgat.judging.probes.paths`: the run's own
        judges, asked as its items ask them); none by default. ``--probes`` chooses among them."""
        return []

    def task(self, payload: dict[str, Any], judge: JudgeFactory) -> ItemTask:
        """The item task of a stream, from its payload (here, or in a Ray worker)."""
        raise NotImplementedError

    def digest(self, payload: dict[str, Any]) -> Digest:
        """What identifies an item's work (default: the item and its media file's content)."""
        return MediaPlace(**payload["place"]).digest

    def label(self, s: S) -> str | None:
        """The progress bar's label (``None``: each stream's own)."""
        return self.kind

    def summarize(self, s: S, run: Run, work: Work) -> Any:
        raise NotImplementedError

    def report(self, s: S, run: Run, work: Work, summary: Any) -> None:
        """``report.html`` (nothing by default)."""

    def follow_up(self, s: S, run: Run, work: Work, summary: Any) -> Any:
        """Commands run on what this run wrote, once its summary is written (``program --score``);
        the summary with what they add (it is written again), or ``None``."""
        return None

    def tables(self, s: S) -> bool:
        """Whether this run has tables to print (else its summary is printed as JSON, as with ``--json``)."""
        return True

    def show(self, s: S, run: Run, work: Work, summary: Any) -> None:
        """The tables ``echo`` prints on stdout (``--json`` prints the summary as one JSON document instead)."""

    def notes(self, s: S, run: Run, work: Work, summary: Any) -> list[str]:
        """Lines for stderr before the outcome (where missing media were looked for, …)."""
        return []

    def failure(self, s: S, run: Run, work: Work, summary: Any) -> str | None:
        """The run's ``FAILED: …`` line (exit 1), or ``None`` when it succeeded."""
        return None


def command_ref(command: Command[Any]) -> str:
    """``module:Class`` of a command: how a Ray worker finds it."""
    return f"{type(command).__module__}:{type(command).__qualname__}"


L = TypeVar("L")


def load_selected(load: Callable[[], L]) -> L:
    """``load()`` (the items, or what a run reads beside them), with unreadable input refused as a
    settings error (exit 2)."""
    try:
        return load()
    except InputError as exc:
        raise SettingsError(str(exc)) from None


def run_command(command: Command[S], s: S, *, echo: bool = True, others: Others | None = None) -> Outcome:
    """Run ``command`` with its settings ``s`` (see the module docstring); the :class:`Outcome`, or a
    :class:`~murgat.engine.errors.CommandError` for a run refused or stopped."""
    command.refuse(s)
    where = s.scale_out()
    if where.run_on == "ray":  # Ray and the cluster before anything that costs (the probes ask the judge)
        driver.require_ray()
        driver.check_address(where.ray_address)
    check_media_root(s.media_root)
    items = load_selected(lambda: command.load(s))
    outputs = command.outputs(s)
    check_outputs(s, outputs, command.kind)
    # the first stage line of a run, before the media checks and any model load (a cold run is not silent);
    # after the quick refusals, which stay one line
    stages.stage(f"{command.kind}: {len(items)} item(s) read; checking the settings and the media")
    with held(outputs) as hold:
        folder = command.folder(s, outputs)
        if s.overwrite and not outputs.scratch:
            command.reset(s, folder)
        for note in folder.notices:
            print(for_terminal(f"warning: {note}"), file=sys.stderr)
        run = Run(s, items, outputs, folder, command.judge_maker(s), echo, others)
        try:
            return _locked(command, run, hold)
        except CommandError as exc:
            if exc.code == 2:
                run.judges.discard()  # refused before any work: no cache of this run stays behind
            raise
        except BaseException as exc:  # a replay miss (3) or a write that failed (5), anywhere in the run
            err = stopped(exc, f" ({run.folder.results_path})")
            if err is None:
                raise  # a bug keeps its traceback
            raise err from None
        finally:
            run.judges.close()


def _locked(command: Command[Any], run: Run, hold: Held) -> Outcome:
    s = run.s
    command.check(s, run)
    work = command.open(s, run)
    fp = work.fingerprint if not run.outputs.scratch else None
    if fp is not None:  # before the first record (and before any probe: a folder of other settings costs no request)
        earlier = recorded_probes(run.folder.config_path)
        if earlier is not None:  # the folder's last probe report stays until new probes replace it
            work.config["probes"] = earlier
        run.folder.check_config(fp, work.config, kind=command.kind)
    run.probes = probe_before_run(lambda: command.probe_paths(run.s, run, work), run)
    if run.probes is not None and fp is not None:  # beside the settings, outside the fingerprint
        work.config["probes"] = run.probes.model_dump(mode="json")
        run.folder.check_config(fp, work.config, kind=command.kind)
    try:
        _run_streams(command, run, work)
    except BaseException as exc:  # named after the stream that stopped (a program run has one per variant)
        err = stopped(exc, f" ({work.streams[0].folder.results_path})" if work.streams else "")
        if err is None:
            raise
        raise err from None
    return _finish(command, run, work, hold)


def _plan(run: Run, command: Command[Any], stream: Stream) -> list[Item]:
    """The stream's items to do (planned once), with the note every command gives about earlier failures."""
    p = plan_work(run.items, stream.folder, command.digest(stream.payload), run.s.retry_errors)
    run.plans[stream.label] = p
    return p.todo


def _earlier_failures_note(run: Run, streams: Sequence[Stream]) -> None:
    """Items kept with an error record or left undetermined by judge errors, from earlier runs."""
    if run.s.retry_errors:
        return
    ids = set(run.order)
    kept = [r for st in streams for r in st.folder.latest_results(slim=True) if str(record_field(r, "id")) in ids
            and needs_retry(r)]
    errors = sum(1 for r in kept if record_field(r, "error") is not None or record_field(r, "generation_error"))
    if kept:
        print(f"note: keeping {errors} earlier item(s) with errors and {len(kept) - errors} left undetermined by "
              "judge errors; rerun with --retry-errors to do them again", file=sys.stderr)


def _run_streams(command: Command[Any], run: Run, work: Work) -> None:
    todo = [(st, _plan(run, command, st)) for st in work.streams]
    _earlier_failures_note(run, work.streams)
    if not todo:
        return
    if run.s.scale_out().run_on == "ray" and not work.local_only:
        _on_ray(command, run, todo)
    else:
        run_async(_here(command, run, todo))


async def _here(command: Command[Any], run: Run, todo: list[tuple[Stream, list[Item]]]) -> None:
    """Every stream through the item loop, on one event loop (the providers' clients live on it)."""
    progress = item_progress(command.label(run.s), disable=run.s.quiet or run.s.print_json)
    try:
        with progress:
            for stream, items in todo:
                task = command.task(stream.payload, run.judges)
                if task.pool is not None:
                    run.pools.append(task.pool)
                n = len(run.items)
                bar = progress.add_task(stream.label, total=n, completed=n - len(items), stats=_stats(run))

                def advance(_record: Any, bar: Any = bar) -> None:
                    progress.advance(bar)

                await _exported(stream, run, _ticking(progress, bar, run, run_items(
                    task, items, stream.folder, command.digest(stream.payload), concurrency=stream.concurrency,
                    on_item=advance)))
    finally:
        await run.judges.aclose()


def _stats(run: Run) -> str:
    return stats_text(run.judges.stats())


async def _ticking(progress: Any, bar: Any, run: Run, work: Awaitable[Any]) -> Any:
    """``work`` with the bar's request statistics refreshed twice a second."""

    async def tick() -> None:
        while True:
            progress.update(bar, stats=_stats(run))
            await asyncio.sleep(0.5)

    ticker = asyncio.create_task(tick())
    try:
        return await work
    finally:
        ticker.cancel()
        progress.update(bar, stats=_stats(run))


async def _exported(stream: Stream, run: Run, work: Awaitable[Any]) -> None:
    """``work``, then the stream rewritten in input order (also when the run stopped: what was
    written is readable; a second failure while it stops is not reported over the first)."""
    try:
        await work
    except BaseException:
        with contextlib.suppress(Exception):
            stream.folder.export(run.order)
        raise
    stream.folder.export(run.order)


def _on_ray(command: Command[Any], run: Run, todo: list[tuple[Stream, list[Item]]]) -> None:
    """Every stream on one Ray instance; the cluster's cache service owns the cache meanwhile."""
    s = run.s
    run.judges.close()
    where = s.scale_out()
    started = init_ray(where.ray_address, where.ray_cpus)
    try:
        for stream, items in todo:
            spec = TaskSpec(command_ref(command), stream.payload, concurrency=stream.concurrency,
                            transcribes=stream.transcribes)
            label = command.label(s) or f"{command.kind} {stream.label}"
            try:
                run.ray.append(run_on_ray(spec, command.digest(stream.payload), items, stream.folder, s, label=label,
                                          total=len(run.items), con=None, cache_path=run.judges.cache_path,
                                          services=driver.services_for_run(run.judges.cache_path)))
            finally:
                stream.folder.export(run.order)
    finally:
        shutdown(started)


def _followed_up(command: Command[Any], run: Run, work: Work, summary: Any) -> Any:
    more = command.follow_up(run.s, run, work, summary)
    if more is None:
        return summary
    run.folder.write_summary(more, command.summary_file)
    return more


def _finish(command: Command[Any], run: Run, work: Work, hold: Held) -> Outcome:
    s = run.s
    summary = command.summarize(s, run, work)
    if command.judge_account and not run.outputs.scratch:
        summary = with_judge_account(summary, run)
    if run.outputs.scratch:  # the run's own working space (a dry run): nothing of it stays
        shutil.rmtree(run.outputs.folder, ignore_errors=True)
        run.judges.discard()
        hold.remove_made()
    else:
        run.folder.write_summary(summary, command.summary_file)
        command.report(s, run, work, summary)
        summary = _followed_up(command, run, work, summary)
    if run.echo and (s.print_json or not command.tables(s)):
        print(summary.model_dump_json(indent=2) if isinstance(summary, BaseModel)
              else json.dumps(summary, indent=2, sort_keys=True, default=str))
    elif run.echo:
        command.show(s, run, work, summary)
    # every line below may name the records' ids, media or answers: control characters shown as escapes
    for line in probe_lines(run.probes):  # a failed probe is said again, after the figures it may have spoiled
        print(for_terminal(line), file=sys.stderr)
    if command.judge_account and not run.outputs.scratch:
        for line in identity_lines(run):  # printed, not only kept in summary.json
            print(for_terminal(line), file=sys.stderr)
    for line in command.notes(s, run, work, summary):
        print(for_terminal(line), file=sys.stderr)
    failed = command.failure(s, run, work, summary)
    lost = sum(len(r.lost) for r in run.ray)
    if lost:
        failed = (failed + "; " if failed else "") + (f"{lost} item(s) not done: their Ray tasks failed on every "
                                                      "attempt (rerun to resume)")
    if failed:
        print(for_terminal(failed), file=sys.stderr)
    return Outcome(1 if failed else 0, summary, run.outputs.folder)
