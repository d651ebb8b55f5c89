"""The Python API, and the one entry every command line goes through.

Each command has a settings class (``ScoreSettings``, ``FaithfulnessSettings``,
``ReflectSettings``, ``ProgramSettings``, ``GenerateSettings``, ``SweepSettings``): the command
line is made from its fields and parsed into it, then handed to :func:`execute`. The functions
below build the same settings from keyword arguments named as the fields (``media_root=`` for
``--media-root``, ``judge_option=[...]`` for ``-J``, ``print_json`` for ``--json``), so both
ways take the same values, defaults and checks (a wrong name or value raises pydantic's
``ValidationError``, a ``ValueError``; the keywords are typed, :mod:`murgat.settings.keywords`, so a type
checker refuses a misspelt one before anything runs). They run the command in this process without printing
tables or a progress bar (warnings still reach stderr) and return a :class:`RunResult`: the exit
status, the summary, the settings and the records, read back from the run folder.

    import murgat
    run = murgat.score("responses.jsonl", judge="embedded", out="runs/demo", media_root="videos")
    print(run.summary["murgat_s"]["value"], len(run.records))
    df = murgat.load_run("runs/demo").dataframe()      # with pandas installed

Exit statuses 0 (done) and 1 (done, with failed or undetermined items: see the records) return
a result; the others — 2 bad input or settings, 3 a replay miss, 5 the run folder could not be
written — raise :class:`RunError` with the command's error line. A folder holding a run with
other settings raises :class:`~murgat.engine.folder.RunConfigMismatch`.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar, Unpack

from murgat.commands.ground.run import ground_score_run
from murgat.engine.command import Command, run_command
from murgat.engine.errors import CommandError
from murgat.engine.options import Settings, add_command
from murgat.engine.run_state import Outcome
from murgat.engine.runs import RunResult, load_run
from murgat.settings.faithfulness import FaithfulnessSettings
from murgat.settings.generate import GenerateSettings
from murgat.settings.keywords import (
    FaithfulnessOptions,
    GenerateOptions,
    ProgramOptions,
    ReflectOptions,
    ScoreOptions,
    StrPath,
    SweepOptions,
)
from murgat.settings.program import ProgramSettings
from murgat.settings.reflect import ReflectSettings
from murgat.settings.score import ScoreSettings
from murgat.settings.sweep import SweepSettings

__all__ = ["FaithfulnessOptions", "GenerateOptions", "ProgramOptions", "ReflectOptions", "RunError", "RunResult",
           "ScoreOptions", "SweepOptions", "execute", "faithfulness", "generate", "load_run", "program", "reflect",
           "score", "sweep"]

#: a run command that did not run to its end (exit status 2, 3 or 5): ``exit_code`` and the reason, exactly as the
#: command line prints them (every refusal and stop is raised as this class where it is found)
RunError = CommandError

#: every run command by name: where its declaration is (``module:Class``) and its settings. The declaration's
#: package is imported when the command first runs (:func:`command_of`): the command line and ``import murgat``
#: do not load every command's machinery to run one of them (``generate`` started 0.08 s slower for it)
COMMANDS: dict[str, tuple[str, type[Settings]]] = {
    "score": ("murgat.commands.score.command:ScoreCommand", ScoreSettings),
    "faithfulness": ("murgat.commands.faithfulness.command:FaithfulnessCommand", FaithfulnessSettings),
    "reflect": ("murgat.commands.reflect.command:ReflectCommand", ReflectSettings),
    "program": ("murgat.programs.command:ProgramCommand", ProgramSettings),
    "generate": ("murgat.commands.generate.command:GenerateCommand", GenerateSettings),
    "sweep": ("murgat.commands.generate.command:SweepCommand", SweepSettings),
}


@functools.cache
def command_of(kind: str) -> Command[Any]:
    """The declaration of the run command ``kind`` (one per process, made when first asked for)."""
    module, name = COMMANDS[kind][0].split(":")
    made: Command[Any] = getattr(importlib.import_module(module), name)()
    return made


S = TypeVar("S", bound=Settings)


class Commands:
    """The run commands, by name: what a command that runs others (``sweep``, ``program --score``,
    ``score --gold``) is given (:class:`murgat.engine.command.Others`), so that no command package
    imports another."""

    def run(self, kind: str, values: dict[str, Any]) -> Outcome:
        if kind == "ground":  # the grounding figures of a score run against --gold (not a run command)
            doc = ground_score_run(SimpleNamespace(**values), Path(values["run"]))
            return Outcome(0 if "grounding" in doc else 2, doc, Path(values["run"]) / "grounding")
        return run_command(command_of(kind), COMMANDS[kind][1].model_validate(values), echo=False, others=self)


def outcome(settings: Settings, *, echo: bool = True) -> Outcome:
    """Run one command's settings; its :class:`~murgat.engine.command.Outcome`, or the
    :class:`RunError` that refused or stopped it."""
    command = command_of(settings.command)
    outcome: Outcome = _outside_running_loop(lambda: run_command(command, settings, echo=echo, others=Commands()))
    return outcome


def execute(settings: Settings, *, echo: bool = True, sink: dict[str, Any] | None = None) -> int:
    """Run one command's settings and return its exit status, 0 or 1 (what the command line returns;
    a refusal or a stop raises :class:`RunError`, which the command line prints). ``echo``: print the
    command's tables or JSON document; ``sink`` receives the summary as ``sink["document"]``."""
    done = outcome(settings, echo=echo)
    if sink is not None:
        sink["document"] = done.summary
    return done.code


def add_run_command(sub: argparse._SubParsersAction[argparse.ArgumentParser], settings: type[Settings], help: str) -> None:
    """``murgat COMMAND``: the parser made from the command's settings model; running it is
    :func:`execute` of the parsed settings (the command line does nothing of its own)."""
    add_command(sub, settings, execute, help=help)


def _outside_running_loop(call: Any) -> Any:
    """``call()``, in a worker thread when this thread already runs an asyncio event loop: a Jupyter
    cell does (its kernel's loop), and the commands start their own loop with ``asyncio.run``, which
    refuses to run inside another ("cannot be called from a running event loop")."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop here: the command line, a script
        looping = False
    else:
        looping = True
    if not looping:
        return call()
    with ThreadPoolExecutor(1, thread_name_prefix="murgat-run") as pool:
        return pool.submit(call).result()


def _settings(cls: type[S], given: S | Mapping[str, Any] | None, values: dict[str, Any]) -> S:
    """The settings of one call: ``given`` (a settings object or a dict of its fields) or the keyword
    ``values``, never both; no progress bar unless ``quiet=False`` is asked for."""
    if given is not None:
        if any(v is not None for v in values.values()):
            raise TypeError(f"pass either settings= or keyword options to murgat.{cls.command}, not both")
        chosen = given if isinstance(given, cls) else cls.model_validate(given)
        if "quiet" not in chosen.model_fields_set:  # no progress bar unless asked for, as with keywords
            chosen = chosen.model_copy(update={"quiet": True})
        return chosen
    # paths may be Path objects; a None positional is left out so pydantic names it as missing
    clean = {k: (os.fspath(v) if isinstance(v, os.PathLike) else v) for k, v in values.items()
             if not (v is None and k in ("input", "data"))}
    clean.setdefault("quiet", True)  # no progress bar unless asked for
    return cls.model_validate(clean)


def _run(s: Settings) -> RunResult:
    """Execute the settings ``s`` quietly and read the run back; :class:`RunError` for a run refused
    or stopped (exit statuses 2, 3, 5)."""
    done = outcome(s, echo=False)
    out = s.model_dump(include={"out"})["out"]  # every run command's settings have their --out
    if isinstance(s, ScoreSettings) and s.dry_run:  # its estimate; no folder
        res = RunResult(path=Path(out), kind=s.command, summary=done.summary)
    else:
        res = load_run(out)
    res.exit_code, res.settings = done.code, s
    return res


def score(input: StrPath | None = None, *, settings: ScoreSettings | Mapping[str, Any] | None = None,
          **options: Unpack[ScoreOptions]) -> RunResult:
    """``murgat score``: MURGAT-S of the responses in ``input``.

    Settings: :class:`~murgat.settings.score.ScoreSettings` — ``settings=`` one (or a dict of its fields), or
    its fields as keyword arguments (:class:`~murgat.settings.keywords.ScoreOptions`), not both."""
    return _run(_settings(ScoreSettings, settings, {"input": input, **options}))


def faithfulness(input: StrPath | None = None, *, settings: FaithfulnessSettings | Mapping[str, Any] | None = None,
                 **options: Unpack[FaithfulnessOptions]) -> RunResult:
    """``murgat faithfulness``: step labels and UPR of the reasoning chains in ``input``.

    Settings: :class:`~murgat.settings.faithfulness.FaithfulnessSettings` — ``settings=`` one (or a dict of its
    fields), or its fields as keyword arguments (:class:`~murgat.settings.keywords.FaithfulnessOptions`)."""
    return _run(_settings(FaithfulnessSettings, settings, {"input": input, **options}))


def reflect(data: StrPath | None = None, *, settings: ReflectSettings | Mapping[str, Any] | None = None,
            **options: Unpack[ReflectOptions]) -> RunResult:
    """``murgat reflect``: self-reflection over the questions in ``data``.

    Settings: :class:`~murgat.settings.reflect.ReflectSettings` — ``settings=`` one (or a dict of its fields),
    or its fields as keyword arguments (:class:`~murgat.settings.keywords.ReflectOptions`)."""
    return _run(_settings(ReflectSettings, settings, {"data": data, **options}))


def program(data: StrPath | None = None, *, settings: ProgramSettings | Mapping[str, Any] | None = None,
            **options: Unpack[ProgramOptions]) -> RunResult:
    """``murgat program``: plan-then-execute answers to the questions in ``data``.

    Settings: :class:`~murgat.settings.program.ProgramSettings` — ``settings=`` one (or a dict of its fields),
    or its fields as keyword arguments (:class:`~murgat.settings.keywords.ProgramOptions`)."""
    return _run(_settings(ProgramSettings, settings, {"data": data, **options}))


def generate(data: StrPath | None = None, *, settings: GenerateSettings | Mapping[str, Any] | None = None,
             **options: Unpack[GenerateOptions]) -> RunResult:
    """``murgat generate``: answers from a model to the questions in ``data``; ``out`` is a run folder
    (or a ``.jsonl`` file).

    Settings: :class:`~murgat.settings.generate.GenerateSettings` — ``settings=`` one (or a dict of its
    fields), or its fields as keyword arguments (:class:`~murgat.settings.keywords.GenerateOptions`)."""
    return _run(_settings(GenerateSettings, settings, {"data": data, **options}))


def sweep(data: StrPath | None = None, *, settings: SweepSettings | Mapping[str, Any] | None = None,
          **options: Unpack[SweepOptions]) -> RunResult:
    """``murgat sweep``: generate and score at several reasoning efforts; the summary is ``sweep.json``
    (what :func:`load_run` reads for a sweep folder).

    Settings: :class:`~murgat.settings.sweep.SweepSettings` — ``settings=`` one (or a dict of its fields), or
    its fields as keyword arguments (:class:`~murgat.settings.keywords.SweepOptions`)."""
    return _run(_settings(SweepSettings, settings, {"data": data, **options}))
