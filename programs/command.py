"""``murgat program`` as a run command (:class:`~murgat.engine.command.Command`), given its
:class:`~murgat.settings.program.ProgramSettings`: plan-then-execute answers for a dataset, one stream per
variant, optionally scored by ``murgat score`` (run through the engine, by name).

Output folder (a run folder of kind ``program``: one process at a time, resumable like ``score``)::

    OUT/config.json                 kind and settings; a rerun with different ones is refused
    OUT/cache.sqlite                planner/executor/checker answers (shared by variants)
    OUT/<variant>/results.jsonl     one line per item: {id, record, trace} (what the engine appends)
    OUT/<variant>/responses.jsonl   ``murgat score`` input, one line per item, in input order
    OUT/<variant>/traces.jsonl      program, validation, every operation, verdict and timing
    OUT/summary.json                per variant: items, errors, calls per item, check outcomes
    OUT/<variant>/run/              with --score: the ``murgat score`` run of that variant

``responses.jsonl`` and ``traces.jsonl`` are rewritten from ``results.jsonl`` at the end of each
run (:class:`murgat.engine.folder.PairFolder`), so a crash can never leave them disagreeing.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from murgat.core.comparison import compare, fmt
from murgat.core.datasets import load_dataset
from murgat.core.metric import accuracy_figures, record_answer_state
from murgat.core.schema import Item
from murgat.engine.command import Command, load_selected
from murgat.engine.errors import SettingsError
from murgat.engine.fingerprint import Late, Where, fingerprint
from murgat.engine.folder import PairFolder, RunFolder
from murgat.engine.guards import Outputs, select_items
from murgat.engine.options import judging_config, scoring_values
from murgat.engine.preflight import MediaPlace, require_asr
from murgat.engine.roles import JudgeFactory, options_of
from murgat.engine.run_state import Run, Stream, Work
from murgat.judges.evidence import limit_overrides, limits_for, strictest
from murgat.judging.config import JudgingConfig
from murgat.judging.pool import CallPool
from murgat.judging.probes.paths import EntailPath, ProbePath
from murgat.programs.ops import OpSettings
from murgat.programs.runner import VARIANTS, ProgramRoles
from murgat.programs.safety import Limits
from murgat.programs.task import ProgramTask
from murgat.report.steps import program_run_report
from murgat.settings.program import ProgramSettings

#: program folders record every deciding setting by its own name, the options as given; the transcript model
#: (--asr-model, for find by transcript) was not recorded before
PROGRAM_NAMES: dict[str, Where] = {"asr_model": Late("asr_model")}
#: the files of a variant's folder (every one of them goes with --overwrite)
VARIANT_FILES = ("results.jsonl", "results.corrupt.jsonl", "responses.jsonl", "traces.jsonl")
#: what --score's judge must answer
SCORING = ("verify", "decompose", "entail")


def _variants(spec: str) -> list[str]:
    if spec.strip() == "all":
        return list(VARIANTS)
    out = [v.strip() for v in spec.split(",") if v.strip()]
    bad = [v for v in out if v not in VARIANTS]
    if bad or not out:
        raise SettingsError(f"unknown variant(s) {', '.join(bad) or '(none)'}; choose from {', '.join(VARIANTS)} or all")
    return out


def _roles(s: ProgramSettings) -> dict[str, tuple[str, dict[str, str]] | None]:
    """(spec, options) of each role: the executor defaults to the planner, the checker to the executor."""
    popts = options_of(s.planner_option)
    eopts = options_of(s.executor_option) if s.executor_option else popts
    jopts = options_of(s.judge_option) if s.judge_option else eopts
    executor = s.executor or s.planner
    return {"planner": (s.planner, popts), "executor": (executor, eopts),
            "checker": None if s.no_check else (s.judge or executor, jopts)}


def _check_asr(s: ProgramSettings, cfg: JudgingConfig, made: dict[str, Any]) -> None:
    """Refuse an ASR model this install lacks before any item (exit 2), where a transcript is needed:
    ``--find transcript``, evidence text (``--evidence-text`` or a judge that reads text), ``--asr-model``."""
    if s.find == "transcript":
        require_asr(s.asr_model, "--find transcript")
    elif cfg.evidence.text or s.evidence_text or any(j.needs_evidence_text for j in made.values()):
        require_asr(s.asr_model, "evidence text")
    elif s.asr_model is not None:
        require_asr(s.asr_model, "--asr-model")


class ProgramCommand(Command[ProgramSettings]):
    """``murgat program``: every variant's program answers, one stream (folder) per variant."""

    kind = "program"
    judge_account = True

    def needs(self, s: ProgramSettings) -> dict[str, tuple[str, ...]]:
        return {"planner": ("plan",), "executor": ("find", "describe", "synthesize"), "checker": ("entail",),
                "scorer": SCORING}

    def refuse(self, s: ProgramSettings) -> None:
        if s.executor in ("ray", "local"):
            raise SettingsError(f"--executor names the model that executes programs (provider:model); to run on Ray "
                                f"use --run-on {s.executor}")
        _variants(s.variant)

    def load(self, s: ProgramSettings) -> list[Item]:
        return select_items(load_selected(lambda: load_dataset(s.data)), s.ids, s.limit)

    def outputs(self, s: ProgramSettings) -> Outputs:
        out = Path(s.out)
        return Outputs(out, files=[out / v / name for v in _variants(s.variant) for name in VARIANT_FILES[::2]],
                       inputs=[s.data, s.baseline])

    def reset(self, s: ProgramSettings, folder: RunFolder) -> None:
        folder.reset()
        for v in VARIANTS:  # every variant's folder: --overwrite starts the whole run again
            for name in VARIANT_FILES:
                (folder.path / v / name).unlink(missing_ok=True)

    def label(self, s: ProgramSettings) -> None:
        return None  # one bar per variant, each named by it

    def _check_scorer(self, s: ProgramSettings, run: Run, cfg: JudgingConfig) -> None:
        judge = s.judge or s.executor or s.planner
        run.judges.role(judge, options_of(s.judge_option or s.executor_option or s.planner_option), cfg.generate,
                        self.needs(s)["scorer"])

    def open(self, s: ProgramSettings, run: Run) -> Work:
        cfg = judging_config(s)  # every request of the run (planner, executor, checker) is sent with these
        roles, needs = _roles(s), self.needs(s)
        made = {role: run.judges.role(*spec, cfg.generate, needs[role]) for role, spec in roles.items() if spec}
        if s.score:
            self._check_scorer(s, run, cfg)
        if "checker" in made and (made["checker"].needs_evidence_text or s.evidence_text):
            cfg.evidence.text = True
        _check_asr(s, cfg, made)
        sent_to = [(made[r], spec[1]) for r in ("executor", "checker") if (spec := roles.get(r)) and r in made]
        try:  # what one request may carry: the limits of every provider that is sent evidence, -J overrides
            cfg.evidence_limits = strictest(*(limits_for(j.provider, limit_overrides(opts)) for j, opts in sent_to))
        except ValueError as exc:
            raise SettingsError(f"evidence limits: {exc}") from None
        # the check's entailment answers capped to the prompt while --max-tokens is at its default (a chain's)
        cfg.sized_answers = s.max_tokens == type(s).model_fields["max_tokens"].default
        common = {"config": cfg.model_dump(mode="json"), "replan": s.replan,
                  "settings": dataclasses.asdict(OpSettings(find_backend=s.find, check=not s.no_check,
                                                            check_retries=s.check_retries, asr_model=s.asr_model)),
                  "limits": dataclasses.asdict(Limits(max_ops=s.max_ops, max_seconds=s.program_timeout,
                                                      max_response_chars=s.max_response_chars)),
                  "place": MediaPlace.of(s).resolved().to_json(),
                  "judges": {role: {"spec": v[0], "options": v[1]} if v else None for role, v in roles.items()}}
        variants = _variants(s.variant)
        streams = [Stream(v, _variant_folder(run.folder.path, v), {**common, "variant": v},
                          concurrency=s.item_concurrency or 4) for v in variants]
        fp = fingerprint(s, PROGRAM_NAMES)
        return Work(streams, fp, {**fp, "data": s.data, "media_root": s.media_root, "variants": variants})

    def probe_paths(self, s: ProgramSettings, run: Run, work: Work) -> list[ProbePath]:
        """The runtime check's entailment question (its checker, the run's evidence settings), when the
        check is on; ``--score`` probes its scoring judge in each score run, as ``murgat score`` does."""
        payload = work.streams[0].payload
        checker = payload["judges"].get("checker")
        if checker is None:
            return []
        cfg = JudgingConfig.model_validate(payload["config"])
        return [EntailPath(run.judges(checker["spec"], checker["options"], cfg.generate), cfg, CallPool())]

    def task(self, payload: dict[str, Any], judge: JudgeFactory) -> ProgramTask:
        cfg = JudgingConfig.model_validate(payload["config"])
        specs = payload["judges"]

        def role(name: str) -> Any:
            spec = specs.get(name)
            return None if spec is None else judge(spec["spec"], spec["options"], cfg.generate)

        roles = ProgramRoles(planner=role("planner"), executor=role("executor"), checker=role("checker"))
        return ProgramTask(payload["variant"], roles, cfg, OpSettings(**payload["settings"]), Limits(**payload["limits"]),
                           payload["replan"], MediaPlace(**payload["place"]))

    def summarize(self, s: ProgramSettings, run: Run, work: Work) -> dict[str, Any]:
        ids = set(run.order)
        doc: dict[str, Any] = {"variants": {st.label: variant_summary(st.folder, ids) for st in work.streams},
                               "judges": {n: st.model_dump() for n, st in run.counts()[2].items()},
                               "check": not s.no_check, "find": s.find}
        if run.ray:
            doc["ray"] = run.ray_extra()
        return doc

    def report(self, s: ProgramSettings, run: Run, work: Work, summary: dict[str, Any]) -> None:
        program_run_report(run.folder.path, [st.label for st in work.streams], set(run.order), summary,
                str(MediaPlace.of(s).roots()[0]))  # where the items' media were read

    def follow_up(self, s: ProgramSettings, run: Run, work: Work, summary: dict[str, Any]) -> dict[str, Any] | None:
        """``--score``: each variant (and ``--baseline``) scored by ``murgat score``, then compared
        against the baseline or the first variant."""
        if not s.score:
            return None
        out = run.folder.path
        judge = s.judge or s.executor or s.planner
        targets = [(st.label, out / st.label / "responses.jsonl", out / st.label / "run") for st in work.streams]
        if s.baseline:
            targets.insert(0, ("baseline", Path(s.baseline), out / "baseline-run"))
        runs = []
        for name, responses, folder in targets:
            # --overwrite starts the scoring folders again too (else another --judge is refused)
            run.others_run("score", scoring_values(s, input=str(responses), judge=judge, out=str(folder),
                                                   judge_option=s.judge_option or s.executor_option or s.planner_option,
                                                   cache=str(out / "score-cache.sqlite")))
            scored = RunFolder(folder, repair=False)
            runs.append((name, scored.latest_results(), scored.summary()))
        return {**summary, "comparison": compare(runs, n_resamples=2000, seed=0)}

    def show(self, s: ProgramSettings, run: Run, work: Work, summary: dict[str, Any]) -> None:
        print_variants(summary)
        if summary.get("comparison"):
            print_comparison(summary["comparison"])

    def notes(self, s: ProgramSettings, run: Run, work: Work, summary: dict[str, Any]) -> list[str]:
        """Items whose program stopped or chose no option: not failures of the run (their responses are
        written and scored, exit 0), but said out loud — their answers count as not correct."""
        stopped = sum(v["status"].get("program_stopped", 0) for v in summary["variants"].values())
        unanswered = sum(v["status"].get("no_answer", 0) for v in summary["variants"].values())
        if not (stopped or unanswered):
            return []
        return [f"note: {stopped} item-variant(s) stopped by a program budget or a failing operation "
                f"(program_stopped) and {unanswered} gave no readable answer (no_answer): their responses are "
                "kept and scored, their answers count as not correct (n_answer_unknown; see traces.jsonl)"]

    def failure(self, s: ProgramSettings, run: Run, work: Work, summary: dict[str, Any]) -> str | None:
        errors = sum(v["errors"] for v in summary["variants"].values())
        return f"FAILED: {errors} item-variant(s) produced no program answer (see traces.jsonl)" if errors else None


def _variant_folder(out: Path, variant: str) -> PairFolder:
    """``OUT/VARIANT/``: the variant's :class:`~murgat.engine.folder.PairFolder` (made, repaired, adopted)."""
    folder = PairFolder(out / variant)
    for note in folder.notices:
        print(f"warning: {note}", file=sys.stderr)
    return folder


def variant_summary(folder: RunFolder, ids: set[str]) -> dict[str, Any]:
    """One variant's figures: items, errors, statuses, check outcomes, calls and accuracy (an answer
    that could not be read counts as not correct; ``n_answer_unknown`` and ``accuracy_answered``
    beside it)."""
    rows = folder.latest_results(want=ids)
    recs = {r["id"]: r["record"] for r in rows}
    trs = {r["id"]: r["trace"] for r in rows}
    statuses: dict[str, int] = {}
    checks: dict[str, int] = {}
    regenerations = 0
    for t in trs.values():
        statuses[t["status"]] = statuses.get(t["status"], 0) + 1
        for op in t.get("ops", []):
            if op["op"] == "describe":
                checks[op["status"]] = checks.get(op["status"], 0) + 1
                regenerations += max(0, len(op.get("check", [])) - 1)
    calls = [t.get("judge_calls", 0) for t in trs.values()]
    acc = accuracy_figures([record_answer_state(r) for r in recs.values()])
    return {
        "items": len(recs), "errors": sum(1 for r in recs.values() if r.get("generation_error")), "status": statuses,
        "descriptions": checks, "regenerations": regenerations,
        "calls_per_item": (sum(calls) / len(calls)) if calls else 0.0,
        # over the items with a gold option; an answer that could not be read counts as not correct
        "accuracy": acc.accuracy.value if acc.accuracy else None,
        "n_answer_unknown": acc.n_answer_unknown,
        "accuracy_answered": acc.accuracy_answered.value if acc.accuracy_answered else None,
        "interpreter_seconds_per_item": (sum(t.get("interpreter_seconds", 0.0) for t in trs.values()) / len(trs))
        if trs else 0.0,
    }


def print_variants(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from murgat.core.console import console

    t = Table(title="murgat program — per variant")
    for c in ("variant", "items", "errors", "status", "descriptions (check)", "regenerated", "calls/item", "accuracy",
              "answer not read", "acc. (read)"):
        t.add_column(c)
    for v, s in doc["variants"].items():
        answered = s.get("accuracy_answered")
        t.add_row(v, str(s["items"]), str(s["errors"]), ", ".join(f"{k} {n}" for k, n in sorted(s["status"].items())),
                  ", ".join(f"{k} {n}" for k, n in sorted(s["descriptions"].items())) or "–", str(s["regenerations"]),
                  f"{s['calls_per_item']:.1f}", "–" if s["accuracy"] is None else f"{s['accuracy']:.3f}",
                  str(s.get("n_answer_unknown", 0)), "–" if answered is None else f"{answered:.3f}")
    console().print(t)


def print_comparison(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from murgat.core.console import console

    t = Table(title="program variants scored with MURGAT-S (95% bootstrap CIs; Δ = paired difference vs the first row)")
    cols = ("coverage", "precision", "recall", "f1", "murgat_s", "accuracy")
    t.add_column("run")
    for c in cols:
        t.add_column(c)
    for r in doc["runs"]:
        t.add_row(r["run"], *(fmt(r.get(c)) for c in cols))
    for d in doc["differences"]:
        t.add_row(f"Δ {d['run']}", *(fmt(d[c]) if d.get(c) else "" for c in cols))
    console().print(t)
