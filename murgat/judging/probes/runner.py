"""Running the probes, and the gate a run passes before its first item.

:func:`run_probes` asks every probe of every path (judge × how it is asked) concurrently and
reads the outcomes; :func:`probes_before_run` is what ``score``, ``faithfulness``, ``reflect`` and
``program`` (its runtime check; ``--score`` runs ``score``) call before their first item, with ``--probes``:

* ``off`` — nothing is asked and nothing printed: the run's requests are exactly those it made
  before probes existed; the function returns ``None``;
* ``auto`` (the run commands' default) — as ``on`` for the judges that are models murgat cannot see
  into (behind an endpoint or loaded locally: ``openai``, ``gemini``, ``hf``, and any provider not in
  :data:`NOT_PROBED_BY_DEFAULT`); the ``embedded`` judge (rules over ASR/OCR text, whose perception is
  murgat's own, ~10 s of ASR/OCR on the probe clip) and ``replay`` cassettes (which answer the probes
  only when they were recorded with them) are probed when asked with ``on`` or ``require``
  (:func:`paths_to_probe` chooses);
* ``on`` — the probes run for every judge path (about a dozen requests per judge and path, cached
  like any other, so a rerun asks nothing); a failed probe prints a loud warning before the first
  item, which the run repeats with its summary (:meth:`ProbeReport.warning_lines`);
* ``require`` — as ``on``, and a failed probe (or probes that could not run) stops the command
  with exit status 2 before any item (:func:`gate_exit`; the caller raises the error whose message
  is the report's headline, printed last).

A judge that stops the run while being probed (:class:`~murgat.judges.base.JudgeUnreachable`, a
replay cassette miss is *not* such a stop here) propagates: the run would have stopped on its first
item anyway, and says why in the same words.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import IO

from murgat.judges.base import JudgeUnreachable
from murgat.judging.probes.clip import ProbeClip
from murgat.judging.probes.paths import UNFINISHED, Answer, ProbePath
from murgat.judging.probes.probeset import PROBES_VERSION, Probe, probe_set
from murgat.judging.probes.results import UNANSWERED, JudgeProbes, ProbeReport, ProbeResult, Setting, outcome_of
from murgat.judging.probes.store import probe_clip
from murgat.judging.probes.tokens import dropped
from murgat.media.errors import MediaError


async def run_probes(paths: Sequence[ProbePath], *, seed: int = 0, setting: str = "check") -> ProbeReport:
    """Every probe through every path; the report of what came back."""
    report = ProbeReport(setting=setting, seed=seed, probes_version=PROBES_VERSION)  # type: ignore[arg-type]
    try:
        clip = await asyncio.to_thread(probe_clip, seed)
    except (MediaError, OSError, ValueError) as exc:
        report.problem = f"the probe clip could not be made ({exc})"
        return report
    report.clip_sha256, report.clip_version, report.espeak = clip.sha256, clip.version, clip.espeak
    probes = probe_set(clip)
    done = await asyncio.gather(*(_one_path(path, probes, clip) for path in paths), return_exceptions=True)
    for path, got in zip(paths, done, strict=True):
        if isinstance(got, BaseException):
            if isinstance(got, JudgeUnreachable | asyncio.CancelledError | KeyboardInterrupt):
                raise got
            # anything else a path raised (a replay miss, a refused task, broken media) leaves its probes unanswered
            got = [_error_result(path, p, f"{type(got).__name__}: {got}") for p in probes]
        report.results.extend(got)
        report.judges.append(_tally(path, got))
    return report


def _error_result(path: ProbePath, p: Probe, error: str) -> ProbeResult:
    if not path.applies(p):
        return _result(path, p, None)
    return ProbeResult(judge=path.judge.name, stage=path.stage, probe=p.name, checks=p.checks, claim=p.claim,
                       citation=p.citation, expected=p.expected, answer="error", outcome="error", error=error[:500],
                       means=UNANSWERED)


def _result(path: ProbePath, p: Probe, a: Answer | None) -> ProbeResult:
    base = ProbeResult(judge=path.judge.name, stage=path.stage, probe=p.name, checks=p.checks, claim=p.claim,
                       citation=p.citation, expected=p.expected, answer="-", outcome="skipped")
    if a is None:
        return base
    outcome = outcome_of(p.expected, a.verdict)
    fresh = [o for o in a.outputs if not o.cached]
    sent = next((o.sent for o in reversed(a.outputs) if o.sent is not None), None)
    return base.model_copy(update={
        "answer": a.verdict, "outcome": outcome, "raw": a.raw, "error": a.error,
        "cached": bool(a.outputs) and not fresh, "calls": len(fresh), "cost_usd": sum(o.cost_usd for o in fresh),
        "sent": sent, "means": p.failure_means if outcome == "fail" else UNANSWERED if outcome == "error" else None})


async def _one_path(path: ProbePath, probes: list[Probe], clip: ProbeClip) -> list[ProbeResult]:
    refusal = getattr(path.judge, "refusal", None)  # a wrapper (a dry run's) may not have one
    why = refusal(path.stage) if callable(refusal) else None
    if why is not None:  # e.g. the embedded judge asked to label steps: a run refuses it the same way
        return [_error_result(path, p, why) for p in probes]
    asked = [p for p in probes if path.applies(p)]
    answers = dict(zip((p.name for p in asked), await path.ask_all(asked, clip), strict=True))
    return [_result(path, p, answers.get(p.name)) for p in probes]


def _tally(path: ProbePath, results: list[ProbeResult]) -> JudgeProbes:
    t = JudgeProbes(judge=path.judge.name, stage=path.stage)
    for r in results:
        if r.outcome == "pass":
            t.passed += 1
        elif r.outcome == "fail":
            t.failed += 1
        elif r.outcome == "abstain":
            t.abstained += 1
        elif r.outcome == "error":
            t.errors += 1
        else:
            t.skipped += 1
        t.calls += r.calls
        t.cache_hits += 1 if r.cached else 0
        t.cost_usd += r.cost_usd
    ident = getattr(path.judge, "identity", None)
    t.identity = ident() if callable(ident) else None
    t.tokens = list(getattr(path, "tokens", []))  # the token account (murgat.judging.probes.tokens), where the path keeps one
    t.dropped = dropped(t.tokens)
    t.calls += sum(a.twin_calls for a in t.tokens)
    t.unfinished = [r.probe for r in results if r.error and r.error.startswith(UNFINISHED)]
    return t


#: providers whose answers come from no model of their own (rules over murgat's ASR/OCR text, a
#: recorded cassette, a Python function): probed with ``--probes on|require``, not by ``auto``
NOT_PROBED_BY_DEFAULT = frozenset({"embedded", "replay", "scripted"})


def paths_to_probe(setting: Setting, paths: Sequence[ProbePath]) -> list[ProbePath]:
    """The paths a run with ``--probes setting`` asks: none for ``off``; for ``auto`` those whose judge
    is not in :data:`NOT_PROBED_BY_DEFAULT`; each distinct path once (:meth:`ProbePath.key`: the same
    judge asked the same way for several roles or stages is one set of probes)."""
    if setting == "off":
        return []
    out: list[ProbePath] = []
    seen: set[tuple[object, ...]] = set()
    for path in paths:
        if setting == "auto" and path.judge.provider in NOT_PROBED_BY_DEFAULT:
            continue
        key = path.key()
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


async def probes_before_run(setting: Setting, paths: Sequence[ProbePath], *, seed: int = 0,
                            stream: IO[str] | None = None) -> ProbeReport | None:
    """The probes a run asks before its first item (see the module docstring); ``None`` for ``off``.

    Failures are printed to ``stream`` (stderr) at once (with ``require``, their details: the caller
    stops with :func:`require_message`); the caller keeps the report for
    ``config.json``/``summary.json`` (``probes``), repeats :meth:`ProbeReport.warning_lines` with its
    summary, and exits with :func:`gate_exit` when it is not ``None``."""
    if setting == "off":
        return None
    if setting not in ("auto", "on", "require"):
        raise ValueError(f"--probes must be auto, on, off or require, not {setting!r}")
    report = await run_probes(paths, seed=seed, setting=setting)
    out = stream if stream is not None else sys.stderr
    for w in report.identity_warnings():
        print(f"warning: {w}", file=out)
    if not report.ok:
        if setting == "require":  # the headline is the error the caller stops with (exit 2), printed last
            for line in report.warning_lines()[1:]:
                if "'--probes require' stops" not in line:
                    print(line, file=out)
        else:
            for line in report.warning_lines():
                print(line, file=out)
    return report


def gate_exit(report: ProbeReport | None) -> int | None:
    """2 when ``--probes require`` found a failure (the command stops before any item), else ``None``."""
    if report is not None and report.setting == "require" and not report.ok:
        return 2
    return None


def require_message(report: ProbeReport) -> str:
    """The one line a run stopped by ``--probes require`` ends with (its exit-2 error)."""
    return f"{report.headline()} (--probes require: no item was started)"
