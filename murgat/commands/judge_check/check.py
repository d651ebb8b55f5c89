"""``murgat judge check``: the probes asked of one judge, as a table (or one JSON document).

The judge is built and asked exactly as a run would build and ask it: ``--stage entail`` takes
its configuration from ``score``'s own builder (:func:`murgat.settings.score_resolved.score_config`: the same
evidence options, prompt variant and request settings as ``murgat score``), ``--stage
faith-step``/``faith-chain`` from ``faithfulness``' (:func:`murgat.engine.options.judging_config`
and the same :class:`~murgat.judging.steps.Labeller`). Answers go to a response cache
(``--cache``; by default ``judge-check.sqlite`` in murgat's cache folder), so checking the same
judge again asks nothing. The probes themselves are :mod:`murgat.judging.probes`.

Exit status: 0 every probe passed (abstentions allowed), 1 a probe failed or went unanswered,
2 bad settings or a judge that cannot answer the stage, 4 the judge cannot be reached.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import murgat.engine.options as o
from murgat.core.steps import StepLabel
from murgat.engine.errors import CommandError, SettingsError, stopped
from murgat.engine.guards import claim_judge_files, replay_cassettes
from murgat.judges import make_judge, parse_options
from murgat.judges.base import Judge
from murgat.judges.cache import ResponseCache
from murgat.judging.config import JudgingConfig
from murgat.judging.pool import CallPool
from murgat.judging.probes.paths import EntailPath, FaithPath, ProbePath
from murgat.judging.probes.results import ProbeReport
from murgat.judging.probes.runner import run_probes
from murgat.judging.steps import Labeller
from murgat.media.interrupt import run_async
from murgat.settings.faithfulness import FaithfulnessSettings
from murgat.settings.judge_check import JudgeCheckSettings
from murgat.settings.score import ScoreSettings
from murgat.settings.score_resolved import ScoreConfig, score_config


def _given(s: JudgeCheckSettings, *groups: Any) -> dict[str, Any]:
    """The request settings as given, leaving the role defaults (``None``) to the probed command."""
    names = {n for g in groups for n in g.model_fields}
    return {k: v for k, v in s.model_dump(include=names).items() if not (k in ("max_tokens", "timeout") and v is None)}


def entail_config(s: JudgeCheckSettings) -> ScoreConfig:
    """The configuration ``murgat score`` would run this judge with (its own builder)."""
    shared = {**s.model_dump(include={"judge_option", "fps", "evidence_text", "asr_model", "entail_variant", "pad",
                                      "visual_as", "audio_point_pad", "ocr_fps", "sound_events"}),
              **_given(s, o.Requests, o.Effort)}
    if s.max_frames is not None:
        shared["max_frames"] = s.max_frames
    cfg = score_config(ScoreSettings(input="(probes)", out="(probes)", judge=s.judge, **shared))
    # the answer budget a yes/no needs while --max-tokens is not given, as score sizes it (the cache
    # key keeps score's cap, so a run's probes and the check still share their answers)
    cfg.sized_answers = s.max_tokens is None
    return cfg


def faith_settings(s: JudgeCheckSettings) -> FaithfulnessSettings:
    """The ``murgat faithfulness`` settings whose labeller these probes ask (its own defaults otherwise)."""
    kw: dict[str, Any] = {"judge_option": list(s.judge_option), "fps": s.fps, "evidence_text": s.evidence_text,
                          "variant": s.variant, "granularity": "step" if s.stage == "faith-step" else "chain",
                          **_given(s, o.Requests, o.Effort)}
    if s.max_frames is not None:
        kw["max_frames"] = s.max_frames
    return FaithfulnessSettings(input="(probes)", out="(probes)", judge=s.judge, **kw)


def run_judge_check(s: JudgeCheckSettings, *, echo: bool = True, sink: dict[str, Any] | None = None) -> int:
    """Probe ``s.judge`` (see the module docstring); ``sink["report"]`` receives the report. Refusals
    and stops are :class:`~murgat.engine.errors.CommandError` (2, 4), rendered by the command line."""
    try:
        opts = parse_options(s.judge_option)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    fs = faith_settings(s) if s.stage != "entail" else None
    cfg: JudgingConfig = entail_config(s) if fs is None else o.judging_config(fs)
    path = s.cache_path()
    claim_judge_files(s, replay_cassettes(s))  # the output rule: refused before anything is opened (exit 2)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        cache = ResponseCache(path)
    except (OSError, sqlite3.Error) as exc:
        raise SettingsError(f"cannot open the response cache {path}: {exc}") from None
    try:
        try:
            judge = make_judge(s.judge, opts, cache=cache, config=cfg.generate, record=s.record)
        except (ValueError, FileNotFoundError, ImportError) as exc:
            raise SettingsError(str(exc)) from None
        why = judge.refusal("entail" if fs is None else f"faith_{fs.granularity}")
        if why is not None:  # as score and faithfulness refuse it, before any request
            raise SettingsError(why)
        if judge.needs_evidence_text or cfg.evidence_text:
            cfg.evidence.text = True  # what score and faithfulness do for a judge that reads ASR/OCR text
        try:
            report = run_async(_check(s, judge, cfg, fs))
        except CommandError:
            raise
        except BaseException as exc:
            err = stopped(exc)
            if err is None:
                raise
            raise err from None
    finally:
        cache.close()
    if sink is not None:
        sink["report"] = report
    if echo and s.print_json:
        print(report.model_dump_json(indent=2))
    elif echo:
        print_report(report)
    return 0 if report.ok else 1


async def _check(s: JudgeCheckSettings, judge: Judge, cfg: JudgingConfig, fs: FaithfulnessSettings | None
                 ) -> ProbeReport:
    pool = CallPool()
    path: ProbePath
    if fs is None:
        variant = cfg.entail_variant if isinstance(cfg, ScoreConfig) else "simple"
        path = EntailPath(judge, cfg, pool, variant=variant, deadline_s=s.deadline)
    else:
        path = FaithPath(Labeller(judge=judge, pool=pool, variant=fs.variant, granularity=fs.granularity,
                                  max_frames=fs.max_frames), cfg, step=StepLabel, deadline_s=s.deadline)
    try:
        return await run_probes([path], seed=s.probe_seed, setting="check")
    finally:
        await judge.aclose()


def print_report(report: Any, con: Any = None) -> None:
    """The probes as a table: probe, claim and citation, expected, answer, result, what was sent."""
    from rich.table import Table  # rich: only when a table is drawn
    from rich.text import Text

    from murgat.core.console import console

    con = con or console()
    if report.problem:
        con.print(Text(f"judge probes did not run: {report.problem}", style="bold red"))
        return
    colour = {"pass": "green", "fail": "bold red", "error": "bold red", "abstain": "yellow", "skipped": "dim"}
    for j in report.judges:
        table = Table(title=f"probes of {j.judge} ({j.stage}) — clip {report.clip_sha256[:12]} seed {report.seed}")
        for col in ("probe", "claim", "expected", "answer", "result", "sent"):
            table.add_column(col)
        for r in report.results:
            if r.judge != j.judge or r.stage != j.stage:
                continue
            sent = r.sent.brief() if r.sent is not None else ("cached" if r.cached else "-")
            table.add_row(Text(r.probe), Text(f"{r.claim} {r.citation}"), r.expected, Text(r.answer),
                          Text(r.outcome, style=colour[r.outcome]), Text(sent))
        con.print(table)
        ident = j.identity
        who = ""
        if ident is not None and (ident.reported or ident.system_fingerprints):
            who = " · answered as " + ", ".join(ident.reported) + (
                f" (system_fingerprint {', '.join(ident.system_fingerprints)})" if ident.system_fingerprints else "")
        con.print(f"{j.passed} passed, {j.failed} failed, {j.abstained} abstained, {j.errors} unanswered"
                  f"{f', {j.skipped} skipped' if j.skipped else ''} · {j.calls} calls, {j.cache_hits} from the cache"
                  f", ${j.cost_usd:.4f}{who}", soft_wrap=True)
        for w in (ident.warnings if ident is not None else []):
            con.print(Text(f"warning: {w}", style="yellow"), soft_wrap=True)
        for a in j.tokens:  # what the server's own token counts say (murgat.judging.probes.tokens)
            con.print(Text(f"token account, {a.modality}: {a.note}"
                           + (" — counted" if a.counted else " — NOT COUNTED" if a.counted is False else ""),
                           style="bold red" if a.counted is False else "dim"), soft_wrap=True)
        for d in j.dropped:
            con.print(Text(f"dropped by the server: {d}", style="bold red"), soft_wrap=True)
        if j.unfinished:
            con.print(Text(f"not finished before the deadline: {', '.join(j.unfinished)}", style="bold red"),
                      soft_wrap=True)
    for r in report.failures():
        con.print(Text(f"{r.probe}: {r.explanation}" + (f" ({r.error})" if r.error and r.outcome != "error" else ""),
                       style="red"), soft_wrap=True)
