"""The state of one invocation of a run command: :class:`Run` (what the command's declaration sees), :class:`Work`
(what it opened before any item), its results streams (:class:`Stream`), and how it ended (:class:`Outcome`). The
lifecycle that fills them is :mod:`murgat.engine.command`; the judge probes (:mod:`murgat.engine.judge_probes`)
read them too, so they live apart from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from murgat.core.schema import Item
from murgat.engine.errors import SettingsError
from murgat.engine.folder import RunFolder
from murgat.engine.guards import Outputs
from murgat.engine.loop import WorkPlan
from murgat.engine.roles import JudgeMaker
from murgat.engine.scaleout.driver import RayRunReport, report_extra, summed_stats
from murgat.judges.base import JudgeStats
from murgat.judging.pool import CallPool
from murgat.judging.probes.results import ProbeReport


@dataclass
class Outcome:
    """How a run ended: its exit status (0 done, 1 done with failed items) and its summary."""

    code: int
    summary: Any
    path: Path


class Others(Protocol):
    """Other commands, run by name with their settings' values (``sweep`` runs ``generate`` and
    ``score``): given by the layer above the commands (:mod:`murgat.api`)."""

    def run(self, kind: str, values: dict[str, Any]) -> Outcome: ...


@dataclass
class Stream:
    """One results stream of a run and what fills it (a ``program`` run has one per variant)."""

    label: str
    folder: RunFolder
    #: what the stream's task is built from, here or in a Ray worker (JSON values only)
    payload: dict[str, Any]
    concurrency: int = 8
    #: the task runs speech recognition (a Ray task then reserves ASR's threads)
    transcribes: bool = False


@dataclass
class Work:
    """What a command opened before any item runs."""

    streams: list[Stream]
    #: what decides the work (``None``: the folder records none, as ``sweep``'s, whose runs do)
    fingerprint: dict[str, Any] | None
    #: the whole configuration ``config.json`` records next to the fingerprint
    config: dict[str, Any] = field(default_factory=dict)
    #: the command's own, for its summary and report (its judges, notes, …)
    state: dict[str, Any] = field(default_factory=dict)
    #: the streams run in this process whatever ``--run-on`` says (``score --dry-run``)
    local_only: bool = False


@dataclass
class Run:
    """One invocation of a command, as its declaration sees it."""

    s: Any
    items: list[Item]
    outputs: Outputs
    folder: RunFolder
    judges: JudgeMaker
    echo: bool
    others: Others | None
    pools: list[CallPool] = field(default_factory=list)
    ray: list[RayRunReport] = field(default_factory=list)
    plans: dict[str, WorkPlan] = field(default_factory=dict)
    #: what the judge probes found before the first item (``None``: none were asked)
    probes: ProbeReport | None = None

    @property
    def order(self) -> list[str]:
        """The items' ids in input order."""
        return [it.id for it in self.items]

    def counts(self) -> tuple[int, int, dict[str, JudgeStats]]:
        """(requests, deduplicated, request statistics by provider) of this invocation, here or on Ray
        (on Ray, the workers' and the driver's: the judge probes are asked in the driver)."""
        if self.ray:
            requests = sum(p.requests for p in self.pools)
            deduplicated = sum(p.deduplicated for p in self.pools)
            stats: dict[str, JudgeStats] = {n: st.model_copy() for n, st in self.judges.stats().items()
                                            if st.calls or st.cache_hits or st.errors}
            for report in self.ray:
                r, d, by = summed_stats(report)
                requests, deduplicated = requests + r, deduplicated + d
                for name, st in by.items():
                    acc = stats.setdefault(name, JudgeStats())
                    for k, v in st.model_dump().items():
                        setattr(acc, k, getattr(acc, k) + v)
            return requests, deduplicated, stats
        return (sum(p.requests for p in self.pools), sum(p.deduplicated for p in self.pools), self.judges.stats())

    def ray_extra(self) -> dict[str, Any] | None:
        """What the summary records about the Ray side (summed over streams), or ``None`` locally."""
        if not self.ray:
            return None
        if len(self.ray) == 1:
            return report_extra(self.ray[0])
        docs = [report_extra(r) for r in self.ray]
        return {k: sum(d[k] for d in docs) for k, v in docs[0].items() if isinstance(v, int | float)}

    def others_run(self, kind: str, values: dict[str, Any]) -> Outcome:
        if self.others is None:
            raise SettingsError(f"this run needs the '{kind}' command, which only the command line and murgat.api "
                                "can run")
        return self.others.run(kind, values)
