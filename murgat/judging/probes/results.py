"""What the probes found: one :class:`ProbeResult` per probe and judge, gathered in a
:class:`ProbeReport` that a run keeps in ``config.json`` and ``summary.json`` (``probes``).

An outcome is read from the answer and the expected one, never from anything else:

* ``pass`` — the judge gave the expected answer;
* ``fail`` — it gave the other one;
* ``abstain`` — it answered "unknown": it said it cannot decide (the embedded judge on what OCR
  cannot read, a model that says it cannot hear). Not a failure: in a run such facts are
  undetermined, counted and shown, never silently scored; the report lists them;
* ``error`` — no readable answer (a provider error, an unparseable answer, a replay cassette
  without this probe); the probe could not check anything, which counts as not passed;
* ``skipped`` — the probe means nothing on this path (time and one-modality probes when the judge
  is shown the whole clip).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from murgat.judges.account import JudgeIdentity, Sent
from murgat.judging.probes.tokens import TokenAccount

Outcome = Literal["pass", "fail", "abstain", "error", "skipped"]
#: what an unanswered probe (``error``) says: nothing about what the judge sees or hears (an HTTP 500,
#: a timeout, a closed connection or an unreadable answer is not a judge that "did not hear the word")
UNANSWERED = "no readable answer: this probe checked nothing"
Setting = Literal["auto", "on", "off", "require"]


def outcome_of(expected: str, answer: str) -> Outcome:
    """The outcome of a probe (see the module docstring)."""
    if answer == expected:
        return "pass"
    if answer in ("error", "unparseable"):
        return "error"
    if answer == "unknown":
        return "abstain"
    return "fail"


class ProbeResult(BaseModel):
    """One probe asked of one judge on one path."""

    judge: str
    stage: str = Field(description="the path asked: entail (score, program), faith_step or faith_chain")
    probe: str
    checks: str
    claim: str
    citation: str
    expected: str
    answer: str = Field(description="yes | no | unknown | unparseable | error | - (skipped)")
    outcome: Outcome
    raw: str | None = Field(default=None, description="the judge's answer, clipped")
    error: str | None = None
    cached: bool = False
    calls: int = Field(default=0, description="requests this probe made (0 when served from the cache)")
    cost_usd: float = 0.0
    sent: Sent | None = Field(default=None, description="what the request carried (see murgat.judges.account)")
    means: str | None = Field(default=None, description="what a failure says, when the probe did not pass")

    @property
    def explanation(self) -> str:
        """What a probe that did not pass says: a wrong answer's meaning (``means``), or, when the judge gave
        no readable answer, that nothing was checked and why — not what a wrong answer would have meant."""
        if self.outcome == "error":
            return f"{UNANSWERED} ({self.error or self.answer})"
        return self.means or self.error or ""


class JudgeProbes(BaseModel):
    """The probes of one judge on one path, counted."""

    judge: str
    stage: str
    passed: int = 0
    failed: int = 0
    abstained: int = 0
    errors: int = 0
    skipped: int = 0
    calls: int = Field(default=0, description="requests sent for the probes (cache hits excluded)")
    cache_hits: int = 0
    cost_usd: float = 0.0
    identity: JudgeIdentity | None = None
    tokens: list[TokenAccount] = Field(default_factory=list, description="what the server's prompt-token counts say "
                                       "of each modality (murgat.judging.probes.tokens)")
    dropped: list[str] = Field(default_factory=list, description="modalities the server did not count: dropped by "
                               "the server, whatever the model answered ('deaf …', 'blind …')")
    unfinished: list[str] = Field(default_factory=list, description="probes not finished before the deadline")

    @property
    def ok(self) -> bool:
        return not self.failed and not self.errors and not self.dropped


class ProbeReport(BaseModel):
    """Everything the probes found before a run (or for ``murgat judge check``)."""

    setting: Literal["auto", "on", "require", "check"]
    seed: int
    probes_version: str
    clip_sha256: str | None = None
    clip_version: str | None = None
    espeak: str | None = None
    judges: list[JudgeProbes] = Field(default_factory=list)
    results: list[ProbeResult] = Field(default_factory=list)
    problem: str | None = Field(default=None, description="why the probes could not run at all")

    @property
    def ok(self) -> bool:
        """No probe failed or went unanswered, and the probes ran."""
        return self.problem is None and all(j.ok for j in self.judges)

    def failures(self) -> list[ProbeResult]:
        return [r for r in self.results if r.outcome in ("fail", "error")]

    def abstentions(self) -> list[ProbeResult]:
        return [r for r in self.results if r.outcome == "abstain"]

    def headline(self) -> str:
        """One line for a summary or a report panel."""
        if self.problem:
            return f"judge probes did not run: {self.problem}"
        drops = [f"{j.judge} ({j.stage}): {d}" for j in self.judges for d in j.dropped]
        if not drops:
            return self._probes_line()
        dropped = "MEDIA DROPPED BY THE SERVER: " + "; ".join(drops)
        return f"{self._probes_line()}; {dropped}" if self.failures() else dropped

    def _probes_line(self) -> str:
        n = sum(1 for r in self.results if r.outcome != "skipped")
        bad = self.failures()
        if not bad:
            abst = len(self.abstentions())
            return f"judge probes: {n - abst}/{n} passed" + (f", {abst} abstained" if abst else "")
        names = ", ".join(f"{r.probe} ({r.judge}, {r.stage}: expected {r.expected}, answered {r.answer})" for r in bad)
        unanswered = sum(1 for r in bad if r.outcome == "error")
        return (f"JUDGE PROBES FAILED: {len(bad)}/{n}" + (f" ({unanswered} unanswered: they checked nothing)"
                                                          if unanswered else "") + f": {names}")

    def identity_warnings(self) -> list[str]:
        """What the judges' answers say about the models behind them (floating aliases, an alias that
        resolved to a versioned model, a model or serving configuration that changed), once each."""
        seen: list[str] = []
        for j in self.judges:
            for w in j.identity.warnings if j.identity is not None else []:
                if w not in seen:
                    seen.append(w)
        return seen

    def warning_lines(self) -> list[str]:
        """The loud warning printed before the first item and again with the summary."""
        if self.ok:
            return []
        if self.problem:
            return [f"WARNING: {self.headline()}; nothing checks that the judge sees and hears what murgat sends"]
        lines = [f"WARNING: {self.headline()}"]
        unfinished = [f"{p} ({j.judge}, {j.stage})" for j in self.judges for p in j.unfinished]
        if unfinished:
            lines.append(f"  not finished before the deadline: {', '.join(unfinished)}")
        for r in self.failures():
            lines.append(f"  {r.probe} [{r.judge}, {r.stage}] {r.claim} {r.citation}: {r.explanation}"
                         + (" (answer from the response cache)" if r.cached else ""))
        if any(r.cached for r in self.failures()):
            lines.append("  answers from the cache are what the judge said when they were asked: after fixing the "
                         "server, use a fresh --cache (and a new --out: items judged meanwhile were judged the same way)")
        lines.append("  figures of this run may be wrong without any other sign; 'murgat judge check' shows the table, "
                     "'--probes require' stops a run on a failed probe")
        return lines
