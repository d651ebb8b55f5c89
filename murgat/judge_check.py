"""``murgat judge check``: the probes asked of one judge, as a table (or one JSON document).

The judge is built and asked exactly as a run would build and ask it: ``--stage entail`` takes
its configuration from ``score``'s own builder (:func:`murgat.score.command.score_config`: the same
evidence options, prompt variant and request settings as ``murgat score``), ``--stage
faith-step``/``faith-chain`` from ``faithfulness``' (:func:`murgat.engine.options.judging_config`
and the same :class:`~murgat.faithfulness.label.Labeller`). Answers go to a response cache
(``--cache``; by default ``judge-check.sqlite`` in murgat's cache folder), so checking the same
judge again asks nothing. The probes themselves are :mod:`murgat.probes`.

Exit status: 0 every probe passed (abstentions allowed), 1 a probe failed or went unanswered,
2 bad settings or a judge that cannot answer the stage, 4 the judge cannot be reached.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

import murgat.engine.options as o
from media.cache import cache_root
from murgat.engine.errors import CommandError, SettingsError, stopped
from murgat.faithfulness.label import Labeller
from murgat.faithfulness.records import StepLabel
from murgat.faithfulness.settings import FaithfulnessSettings
from murgat.judges import make_judge, parse_options
from murgat.judges.base import Judge
from murgat.judges.cache import ResponseCache
from murgat.judging.config import JudgingConfig
from murgat.judging.pool import CallPool
from murgat.probes.paths import EntailPath, FaithPath, ProbePath
from murgat.probes.results import ProbeReport
from murgat.probes.runner import run_probes
from murgat.score.command import score_config
from murgat.score.config import ScoreConfig
from murgat.score.settings import ScoreSettings


class JudgeCheckSettings(o.Settings, o.JudgeOption, o.Frames, o.EvidenceText, o.Transcripts, o.Output, o.Requests,
                         o.Effort):
    """``murgat judge check --judge J [-J KEY=VALUE ...] [options]``."""

    command: ClassVar[str] = "judge check"

    judge: str = Field(description="provider[:model] of the judge to probe, e.g. gemini:gemini-2.5-flash, embedded")
    stage: Literal["entail", "faith-step", "faith-chain"] = Field(
        "entail", description="how the judge is asked: entail (score, program), faith-step (faithfulness "
                              "--granularity step, reflect's detector) or faith-chain (faithfulness' default)")
    probe_seed: int = Field(0, ge=0, description="seed of the probe clip (other numbers and words)")
    cache: str | None = Field(None, description="response cache file (default: judge-check.sqlite in murgat's cache "
                                                "folder, $MURGAT_CACHE_DIR)")
    record: str | None = Field(None, description="append every judge exchange to this JSONL cassette")
    # the evidence options of ``murgat score`` (same names, defaults and help)
    entail_variant: Literal["simple", "json"] = Field("simple", description="entailment prompt: simple (yes/no) or json")
    pad: float = Field(0.0, ge=0, description="seconds that widen every evidence segment on each side")
    max_frames: int | None = Field(None, ge=1, description="most frames sent for one cited visual segment (default: "
                                                             "8 as in score; faith stages: 16 as in faithfulness)")
    visual_as: Literal["frames", "clip"] = Field(
        "frames", description="send visual segments as sampled frames or as a picture-only clip")
    audio_point_pad: float = Field(1.0, ge=0, description="seconds on each side of a point audio citation")
    ocr_fps: float = Field(1.0, gt=0, description="frames per second read for on-screen text")
    sound_events: bool = Field(True, description="do not tag sound events (music, engines, silence…) in cited audio "
                                                 "(for --evidence-text and the embedded judge, whose sound claims then "
                                                 "get 'unknown')", json_schema_extra={"flag": "--no-sound-events"})
    # the role defaults of the command whose path is probed (None: score's for entail, faithfulness' for faith
    # stages), so Requests' two fields are widened to take None
    max_tokens: int | None = Field(  # type: ignore[assignment]
        None, ge=1, description="cap on answer tokens (default: 1,024 for entail as in score; 2,048 for faith stages "
                                "as in faithfulness)")
    timeout: float | None = Field(  # type: ignore[assignment]
        None, gt=0, description="seconds before one attempt is abandoned (default: 120 for entail, 300 for faith "
                                "stages, as in those commands)")
    # one attempt each: a probe is a question about the judge, not work to finish (a slow server's
    # retries kept the first check of a tiny model busy for minutes); --retries N asks again
    retries: int = Field(0, ge=0, description="retries after the first attempt (default 0: one attempt per probe)")
    deadline: float = Field(300.0, gt=0, description="seconds the whole check may take: probes unfinished by then "
                                                     "are unanswered and named, so a slow server ends in bounded time")
    variant: Literal["vanilla", "grounding", "grounding+rationale"] = Field(
        "grounding", description="faith stages: labelling prompt (as murgat faithfulness --variant)")

    def cache_path(self) -> Path:
        return Path(self.cache) if self.cache else cache_root() / "judge-check.sqlite"


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
            report = asyncio.run(_check(s, judge, cfg, fs))
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
                                  max_frames=fs.max_frames), cfg, step=StepLabel)
    try:
        return await run_probes([path], seed=s.probe_seed, setting="check")
    finally:
        await judge.aclose()


def print_report(report: Any, con: Any = None) -> None:
    """The probes as a table: probe, claim and citation, expected, answer, result, what was sent."""
    from rich.table import Table  # rich: only when a table is drawn
    from rich.text import Text

    from murgat.console import console

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
        for a in j.tokens:  # what the server's own token counts say (murgat.probes.tokens)
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
