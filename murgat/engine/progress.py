"""The progress bar of a run over items: one look for every command, and nothing at all (not even
an import of rich) when it is turned off (``--quiet``, ``--json``, the Python API)."""

from __future__ import annotations

from typing import Any


class NullProgress:
    """What a disabled progress bar does (nothing), without importing rich."""

    def __enter__(self) -> NullProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, *args: Any, **kw: Any) -> int:
        return 0

    def update(self, *args: Any, **kw: Any) -> None:
        return None

    def advance(self, *args: Any, **kw: Any) -> None:
        return None


def item_progress(label: str | None, *, disable: bool) -> Any:
    """A rich progress bar on stderr (``label``, bar, done/total, elapsed), or :class:`NullProgress`.
    ``label=None``: each bar is labelled with its own description (one bar per variant of ``program``)."""
    if disable:
        return NullProgress()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from murgat.console import console

    return Progress(TextColumn("[bold]{task.description}" if label is None else f"[bold]{label}"), BarColumn(),
                    MofNCompleteColumn(), TimeElapsedColumn(), console=console(stderr=True))
