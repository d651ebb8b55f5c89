"""What every command does around its run, in one place: select the items, refuse a missing
``--media-root`` before any work, take the run folder's lock, and turn what stopped a run (a replay
miss, a failed write) into its exit status."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from murgat.runlock import RunLock


def select_items(items: list[Any], ids: str | None, limit: int | None) -> list[Any]:
    """``--ids a,b`` then ``--limit N`` (the settings already refused a negative N). Selecting nothing is a
    settings error (``ValueError``): a run of no items would rewrite the folder's summary to nothing."""
    picked = items
    if ids is not None:
        keep = {i.strip() for i in ids.split(",") if i.strip()}
        picked = [i for i in picked if i.id in keep]
    if limit is not None:
        picked = picked[:limit]
    if not picked and (ids is not None or limit is not None):
        raise ValueError("--ids/--limit select no items")
    return picked


def media_root_refused(media_root: str | None) -> bool:
    """``--media-root`` that is not a folder: say so and refuse before any work (exit 2)."""
    from murgat.engine.preflight import BadMediaRoot, check_media_root

    try:
        check_media_root(media_root)
    except BadMediaRoot as exc:
        print(f"error: {exc}", file=sys.stderr)
        return True
    return False


def take_output(out: Path, *, is_dir: bool = True) -> RunLock | None:
    """Check ``out`` can be written and lock it; ``None`` (after printing why) when not."""
    from murgat.engine.folder import NotWritable, check_writable_dir
    from murgat.runlock import RunLock, RunLocked

    try:
        check_writable_dir(out if is_dir else out.parent, "--out")
        return RunLock(out, is_dir=is_dir).acquire()
    except (NotWritable, RunLocked) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def exit_code_of(exc: BaseException, where: str = "") -> int:
    """:func:`failure_code` where anything it does not know is re-raised (a bug keeps its traceback)."""
    code = failure_code(exc, where)
    if code is None:
        raise exc
    return code


def failure_code(exc: BaseException, where: str = "") -> int | None:
    """Exit code and message for a run that stopped: 3 replay miss, 4 judge unreachable, 5 results not
    writable, 2 bad settings; ``None`` for anything else (a bug: let it raise)."""
    from murgat.jsonl import ResultsWriteError
    from murgat.judges.replay import ReplayMiss

    group = exc if isinstance(exc, BaseExceptionGroup) else BaseExceptionGroup("run", [exc])
    miss = group.subgroup(ReplayMiss)
    if miss is not None:
        print(f"error: replay cassette miss: {miss.exceptions[0]}", file=sys.stderr)
        return 3
    from murgat.judges.base import JudgeUnreachable

    gone = group.subgroup(JudgeUnreachable)
    if gone is not None:
        print(f"error: {gone.exceptions[0]}; the run stopped before marking items failed{where}; rerun when "
              "the judge is up", file=sys.stderr)
        return 4
    wfail = group.subgroup(ResultsWriteError)
    if wfail is not None:
        print(f"error: {wfail.exceptions[0]}; the run stopped, what was written is intact{where}; free space or fix "
              "permissions and rerun to resume", file=sys.stderr)
        return 5
    bad = group.subgroup((ValueError, FileNotFoundError))
    if bad is not None and not isinstance(exc, BaseExceptionGroup):
        print(f"error: {bad.exceptions[0]}", file=sys.stderr)
        return 2
    return None
