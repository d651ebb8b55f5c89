"""The progress bar of a run over items: one look for every command, and nothing at all (not even
an import of rich) when it is turned off (``--quiet``, ``--json``, the Python API).

Counts and elapsed time come first, so they stay visible at 80 columns; the request statistics
(``stats``, a field of each bar) come last and are cut (with …) when the terminal is narrow.
"""

from __future__ import annotations

from typing import Any

from murgat.judges.base import JudgeStats


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


def stats_text(stats: dict[str, JudgeStats]) -> str:
    """The request statistics a bar shows: calls, cache hits, retries, errors, tokens, cost."""
    st = list(stats.values())
    return (f"calls {sum(x.calls for x in st)} · hits {sum(x.cache_hits for x in st)} · retries "
            f"{sum(x.retries for x in st)} · errors {sum(x.errors for x in st)} · tokens "
            f"{sum(x.input_tokens + x.output_tokens for x in st)} · ${sum(x.cost_usd for x in st):.4f}")


def item_progress(label: str | None, *, disable: bool, con: Any = None) -> Any:
    """A rich progress bar on stderr (``label``, done/total, elapsed, bar, request statistics), or
    :class:`NullProgress`. ``label=None``: each bar is labelled with its own description (one bar per
    variant of ``program``)."""
    if disable:
        return NullProgress()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
    from rich.table import Column
    from rich.text import Text

    from murgat.core.console import console

    class Stats(ProgressColumn):
        """The bar's ``stats`` field (none: nothing)."""

        def render(self, task: Any) -> Text:
            return Text(str(task.fields.get("stats", "")), no_wrap=True, overflow="ellipsis")

    return Progress(TextColumn("[bold]{task.description}" if label is None else f"[bold]{label}",
                               table_column=Column(no_wrap=True)),
                    MofNCompleteColumn(table_column=Column(no_wrap=True, min_width=9)),
                    TimeElapsedColumn(table_column=Column(no_wrap=True, min_width=7)), BarColumn(bar_width=12),
                    Stats(table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1)),
                    console=con if con is not None else console(stderr=True), expand=True)
