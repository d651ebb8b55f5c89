"""The Python API, and the one entry every command line goes through.

Each command has a settings class (``ScoreSettings``, ``FaithfulnessSettings``,
``ReflectSettings``, ``ProgramSettings``, ``GenerateSettings``, ``SweepSettings``): the command
line is made from its fields and parsed into it, then handed to :func:`execute`. The functions
below build the same settings from keyword arguments named as the fields (``media_root=`` for
``--media-root``, ``judge_option=[...]`` for ``-J``, ``print_json`` for ``--json``), so both
ways take the same values, defaults and checks (a wrong name or value raises pydantic's
``ValidationError``, a ``ValueError``). They run the command in this process without printing
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

import contextlib
import io
import os
import sys
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from murgat.engine.runs import RunResult, load_run

if TYPE_CHECKING:
    from murgat.engine.options import Settings

__all__ = ["RunError", "RunResult", "execute", "faithfulness", "generate", "load_run", "program", "reflect", "score",
           "sweep"]

#: command → "module:function" that runs it (imported on first use: the command line starts fast)
COMMANDS = {
    "score": "murgat.pipeline.command:run_score",
    "faithfulness": "murgat.faithfulness.command:run_faithfulness_command",
    "reflect": "murgat.faithfulness.reflect_command:run_reflect",
    "program": "programs.command:run_program",
    "generate": "murgat.generation.command:run_generate_command",
    "sweep": "murgat.generation.command:run_sweep",
}


class RunError(RuntimeError):
    """A command that did not run to its end (exit status 2, 3 or 5): ``exit_code`` and the reason."""

    def __init__(self, exit_code: int, message: str) -> None:
        super().__init__(f"exit {exit_code}: {message}")
        self.exit_code = exit_code
        self.message = message


def execute(settings: Settings, *, echo: bool = True, sink: dict[str, Any] | None = None) -> int:
    """Run one command's settings and return its exit status (what the command line returns).
    ``echo``: print the command's tables or JSON document; ``sink`` receives a document the run
    folder does not hold (``score --dry-run``'s estimate)."""
    from murgat.jsonl import ResultsWriteError

    module, _, name = COMMANDS[settings.command].partition(":")
    run = getattr(import_module(module), name)
    kwargs: dict[str, Any] = {"echo": echo, **({"sink": sink} if sink is not None and settings.command == "score" else {})}
    try:
        return int(_outside_running_loop(lambda: run(settings, **kwargs)))
    except ResultsWriteError as exc:  # a write of the run folder failed after the run began: exit 5, here so the
        from murgat.engine.guards import failure_code  # Python API raises RunError(5) as the command line exits 5

        return failure_code(exc) or 5


def _outside_running_loop(call: Any) -> Any:
    """``call()``, in a worker thread when this thread already runs an asyncio event loop: a Jupyter
    cell does (its kernel's loop), and the commands start their own loop with ``asyncio.run``, which
    refuses to run inside another ("cannot be called from a running event loop")."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop here: the command line, a script
        return call()
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="murgat-run") as pool:
        return pool.submit(call).result()


class _LastLines(io.TextIOBase):
    """stderr that passes everything on and remembers the tail (the error line a RunError carries)."""

    def __init__(self, target: Any) -> None:
        self.target, self.tail = target, ""

    def write(self, text: str) -> int:
        self.target.write(text)
        self.tail = (self.tail + text)[-4000:]
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def error_line(self) -> str:
        lines = [ln.strip() for ln in self.tail.split("\n") if ln.strip()]
        errors = [ln for ln in lines if ln.startswith(("error:", "FAILED"))]
        return (errors or lines or ["no reason given"])[-1]


def _settings(cls_path: str, given: Any, values: dict[str, Any]) -> Settings:
    """The settings of one call: ``given`` (a settings object or a dict of its fields) or the keyword
    ``values``, never both; no progress bar unless ``quiet=False`` is asked for."""
    module, _, name = cls_path.partition(":")
    cls = getattr(import_module(module), name)
    if given is not None:
        if any(v is not None for v in values.values()):
            raise TypeError(f"pass either settings= or keyword options to murgat.{cls.command}, not both")
        given = given if isinstance(given, cls) else cls.model_validate(given)
        if "quiet" not in given.model_fields_set:  # no progress bar unless asked for, as with keywords
            given = given.model_copy(update={"quiet": True})
        return given
    # paths may be Path objects; a None positional is left out so pydantic names it as missing
    clean = {k: (os.fspath(v) if isinstance(v, os.PathLike) else v) for k, v in values.items()
             if not (v is None and k in ("input", "data"))}
    clean.setdefault("quiet", True)  # no progress bar unless asked for
    return cls.model_validate(clean)


def _run(s: Any) -> RunResult:
    """Execute the settings ``s`` (any command's: they all have ``out``) quietly and read the run back;
    :class:`RunError` for exit statuses other than 0 and 1."""
    sink: dict[str, Any] = {}
    err = _LastLines(sys.stderr)
    with contextlib.redirect_stderr(err):
        code = execute(s, echo=False, sink=sink)
    if code not in (0, 1):
        raise RunError(code, err.error_line())
    if "document" in sink:  # a dry run: its estimate, no folder
        res = RunResult(path=Path(s.out), kind=s.command, summary=sink["document"])
    else:
        res = load_run(s.out)
    res.exit_code, res.settings = code, s
    return res


def score(input: str | Path | None = None, *, settings: Any = None, **options: Any) -> RunResult:
    """``murgat score``: MURGAT-S of the responses in ``input`` (options: :class:`~murgat.pipeline.settings.ScoreSettings`)."""
    return _run(_settings("murgat.pipeline.settings:ScoreSettings", settings, {"input": input, **options}))


def faithfulness(input: str | Path | None = None, *, settings: Any = None, **options: Any) -> RunResult:
    """``murgat faithfulness``: step labels and UPR (options: :class:`~murgat.faithfulness.settings.FaithfulnessSettings`)."""
    return _run(_settings("murgat.faithfulness.settings:FaithfulnessSettings", settings, {"input": input, **options}))


def reflect(data: str | Path | None = None, *, settings: Any = None, **options: Any) -> RunResult:
    """``murgat reflect``: self-reflection (options: :class:`~murgat.faithfulness.settings.ReflectSettings`)."""
    return _run(_settings("murgat.faithfulness.settings:ReflectSettings", settings, {"data": data, **options}))


def program(data: str | Path | None = None, *, settings: Any = None, **options: Any) -> RunResult:
    """``murgat program``: plan-then-execute answers (options: :class:`~programs.settings.ProgramSettings`)."""
    return _run(_settings("programs.settings:ProgramSettings", settings, {"data": data, **options}))


def generate(data: str | Path | None = None, *, settings: Any = None, **options: Any) -> RunResult:
    """``murgat generate``: answers from a model; ``out`` is a run folder (or a ``.jsonl`` file)
    (options: :class:`~murgat.generation.settings.GenerateSettings`)."""
    return _run(_settings("murgat.generation.settings:GenerateSettings", settings, {"data": data, **options}))


def sweep(data: str | Path | None = None, *, settings: Any = None, **options: Any) -> RunResult:
    """``murgat sweep``: generate and score at several reasoning efforts
    (options: :class:`~murgat.generation.settings.SweepSettings`); the summary is ``sweep.json``
    (what :func:`load_run` reads for a sweep folder)."""
    return _run(_settings("murgat.generation.settings:SweepSettings", settings, {"data": data, **options}))
