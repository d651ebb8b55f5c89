"""Why a run command stopped, as one typed error raised where the problem is found.

A :class:`CommandError` carries the exit status and the one line that says why. It is raised
at the place that knows (the settings check, the input reader, the judge that cannot answer a
role, the folder that holds other settings, the write that failed) and rendered in one place
only: the command line prints ``error: MESSAGE`` and exits ``code`` (:func:`murgat.cli.main`);
the Python API raises it as it is (``murgat.RunError`` is this class), so a caller gets the
same code and message the command line shows, never a line scraped from stderr.

Exit statuses: 2 bad input or settings (refused before any work), 3 a replay cassette had no
answer, 4 the judge's endpoint could not be reached at all (connection refused, DNS or TLS
failure before it ever answered: the run stops before marking items failed), 5 the run folder
could not be written (what was written is intact). Status 1 — the run
finished, with failed or undetermined items — is not an error: it is the run's outcome.
"""

from __future__ import annotations

import re

from murgat.core.jsonl import ResultsWriteError
from murgat.judges.base import JudgeUnreachable
from murgat.judges.replay import ReplayMiss

_PREFIX = re.compile(r"^(?:(?:error: )?exit \d+: )+")


class CommandError(RuntimeError):
    """A run command that cannot go on: ``code`` (its exit status) and ``message`` (one line)."""

    def __init__(self, code: int, message: str) -> None:
        # a message made from another command error (``SettingsError(str(exc))``, of which there are
        # many) once carried its "exit N: " too, and the command line printed "error: exit 2: exit 2: …"
        message = _PREFIX.sub("", message)
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        """The message alone: the status is :attr:`code` (the command line prints ``error: MESSAGE``)."""
        return self.message

    @property
    def exit_code(self) -> int:
        """``code``, by the name the Python API's ``RunError`` has always used."""
        return self.code


class SettingsError(CommandError):
    """Settings or input that the run refuses before any work (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(2, message)


def stopped(exc: BaseException, where: str = "") -> CommandError | None:
    """The :class:`CommandError` of a run stopped by ``exc`` (an exception, or the ``ExceptionGroup``
    of the item loop): 3 replay miss, 4 judge unreachable, 5 results not writable (``where`` names the stream), the error
    itself when it is one; ``None`` for anything else — a bug, which keeps its traceback."""
    group = exc if isinstance(exc, BaseExceptionGroup) else BaseExceptionGroup("run", [exc])
    miss = group.subgroup(ReplayMiss)
    if miss is not None:
        return CommandError(3, f"replay cassette miss: {miss.exceptions[0]}")
    gone = group.subgroup(JudgeUnreachable)
    if gone is not None:
        return CommandError(4, f"{gone.exceptions[0]}; the run stopped before marking items failed{where}; rerun when "
                               "the judge is up")
    wfail = group.subgroup(ResultsWriteError)
    if wfail is not None:
        return CommandError(5, f"{wfail.exceptions[0]}; the run stopped, what was written is intact{where}; free space "
                               "or fix permissions and rerun to resume")
    known = group.subgroup(CommandError)
    if known is not None:
        first = known.exceptions[0]
        return first if isinstance(first, CommandError) else None
    return None
