"""``murgat score`` as a run command (:class:`~murgat.engine.command.Command`), given its
:class:`~murgat.settings.score.ScoreSettings`: what is its own — the scoring configuration and
fingerprint it derives from the settings, the judges of its stages, the task that scores one
response, its summary (``this_invocation``, the ``--gold`` grounding figures), ``report.html``
and its tables. The lifecycle (lock, load, fingerprint check, plan, run here or on Ray, compact,
summary, exit status) is the engine's: :func:`~murgat.engine.command.run_command`.

Exit statuses: 0 scored, 1 scored with failed or undetermined items beyond ``max_undetermined``,
2 bad input or settings, 3 a replay miss, 5 the run folder could not be written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from murgat.commands.score.dryrun import DryRunJudge, estimate, estimate_table
from murgat.commands.score.modality_check import modality_check
from murgat.commands.score.runner import ScoreTask, breakdown_of, summary_of
from murgat.commands.score.stages import StageJudges
from murgat.core.breakdown import OUTCOME_FIELDS, UnknownField, check_by, fields_available, item_fields, record_fields
from murgat.core.datasets import dataset_path, load_responses
from murgat.core.metric import fact_modality
from murgat.core.schema import Item, ResponseResult, RunSummary
from murgat.engine.command import Command, load_selected
from murgat.engine.errors import SettingsError
from murgat.engine.fingerprint import fingerprint
from murgat.engine.folder import RunFolder
from murgat.engine.guards import Outputs, select_items
from murgat.engine.outcome import failure_line
from murgat.engine.preflight import MediaPlace, missing_hint, require_asr
from murgat.engine.roles import JudgeFactory, JudgeMaker
from murgat.engine.run_state import Run, Stream, Work
from murgat.judges import TRANSPORT_OPTIONS
from murgat.judges.evidence import limit_overrides, limits_for
from murgat.judging.pool import CallPool
from murgat.judging.probes.paths import EntailPath, ProbePath
from murgat.media.interrupt import run_async
from murgat.media.provenance import text_channels
from murgat.report.groups import print_breakdown
from murgat.report.pages import build_report
from murgat.report.tables import print_summary
from murgat.settings.score import SCORE_NAMES, ScoreSettings
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig, score_config

#: the stages, by the name of their settings (``--judge-verify`` …)
STAGES = ("verify", "decompose", "entail", "decontextualize")


def score_fingerprint(s: ScoreSettings, cfg: ScoreConfig) -> dict[str, Any]:
    """What must match for a folder to be resumed: the settings marked as deciding, and what the run
    derived from them — the judges (without the options that only change how answers are fetched or
    billed), the evidence recipe, the request settings that change answers, the prompts' hashes;
    the box convention only when it is not the default (folders from before boxes resume)."""
    def judge(js: JudgeSpec | None) -> dict[str, Any] | None:
        return None if js is None else {"spec": js.spec, "options": {o: v for o, v in js.options.items()
                                                                     if o not in TRANSPORT_OPTIONS}}

    derived: dict[str, Any] = {f"judge_{k}": judge(getattr(cfg, f"judge_{k}")) for k in STAGES}
    derived |= {"evidence": cfg.evidence.model_dump(), "generate": cfg.generate.cache_fields(),
                "prompt_hashes": cfg.prompt_hashes}
    if not cfg.boxes.is_default():
        derived["boxes"] = cfg.boxes.model_dump()
    return fingerprint(s, SCORE_NAMES, derived)


class ScoreCommand(Command[ScoreSettings]):
    """``murgat score``: MURGAT-S of every response (see the module docstring)."""

    kind = "score"
    judge_account = True

    def needs(self, s: ScoreSettings) -> dict[str, tuple[str, ...]]:
        """Each stage's judge answers its stage's requests (``--decompose-variant response``: one per response)."""
        return {"verify": ("verify",), "entail": ("entail",), "decontextualize": ("decontextualize",),
                "decompose": ("decompose_response",) if s.decompose_variant == "response" else ("decompose",)}

    def refuse(self, s: ScoreSettings) -> None:
        if s.record and s.run_on == "ray":
            # the exchanges happen in Ray workers, which would each need the cassette file: refused, not silently empty
            raise SettingsError("--record works with --run-on local only (record the exchanges locally, then replay "
                                "them on Ray)")

    def load(self, s: ScoreSettings) -> list[Item]:
        # --limit alone reads N; a response over --max-response-chars is marked (the engine gives it its error record);
        # a dataset spec (worldsense:FILE) is read by its loader, its own fields kept for --by
        items = load_selected(lambda: load_responses(s.input, None if s.ids else s.limit,
                                                     max_response_chars=s.max_response_chars))
        if s.ids:
            wanted = [i.strip() for i in s.ids.split(",") if i.strip()]
            unknown = sorted(set(wanted) - {i.id for i in items})
            if unknown:
                raise SettingsError(f"--ids not in {s.input}: {', '.join(unknown)}")
        return select_items(items, s.ids, s.limit)

    def outputs(self, s: ScoreSettings) -> Outputs:
        out = Path(s.out)
        cache = [(Path(s.cache).parent, "--cache")] if s.cache else []
        return Outputs(out / ".dry-run" if s.dry_run else out, inputs=[s.input], writable=[(out, "--out"), *cache],
                       scratch=s.dry_run)

    def folder(self, s: ScoreSettings, outputs: Outputs) -> RunFolder:
        return RunFolder(outputs.folder)

    def check(self, s: ScoreSettings, run: Run) -> None:
        """``--by`` a field no item has: refused before any judge is asked (a typo is not a table of one group)."""
        if s.by:
            try:
                check_by(s.by, fields_available([*(item_fields(it) for it in run.items), dict.fromkeys(OUTCOME_FIELDS)]))
            except (UnknownField, ValueError) as exc:
                raise SettingsError(str(exc)) from None

    def judge_maker(self, s: ScoreSettings) -> JudgeMaker:
        return JudgeMaker(s.cache_path(), dry_run=s.dry_run, record=s.record or None,
                          wrap=DryRunJudge if s.dry_run else None)

    def open(self, s: ScoreSettings, run: Run) -> Work:
        cfg = score_config(s)
        judges = {stage: run.judges.role(js.spec, js.options, cfg.generate, self.needs(s)[stage])
                  for stage in STAGES if (js := getattr(cfg, f"judge_{stage}")) is not None}
        if judges["entail"].needs_evidence_text or cfg.evidence_text:
            why = "--evidence-text" if cfg.evidence_text else f"judge {judges['entail'].name}"
            require_asr(cfg.asr_model, why)  # one early exit 2, not a tool_missing record per item
            cfg.evidence.text = True
            cfg.versions["text_channels"] = text_channels(cfg.asr_model, cfg.sound_events)
        elif s.asr_model is not None:
            require_asr(s.asr_model, "--asr-model")
        try:  # what one entailment request may carry: the entailment judge's provider's limits, -J overrides
            cfg.evidence_limits = limits_for(judges["entail"].provider, limit_overrides(cfg.judge_entail.options))
        except ValueError as exc:
            raise SettingsError(f"-J evidence limits: {exc}") from None
        # judge answers capped to what the prompts ask for while --max-tokens is left at its default
        # (murgat.judges.budget; the command line cannot tell a default from the same value typed)
        cfg.sized_answers = s.max_tokens == type(s).model_fields["max_tokens"].default
        notes = ["judge 'embedded' is rule-based and reads only ASR/OCR text: not a research-grade judge; 'unknown' "
                 "answers are abstentions"] if any(j.provider == "embedded" for j in run.judges.made) else []
        place = MediaPlace.of(s).resolved()  # resolved here: a Ray worker has another working folder
        stream = Stream("items", run.folder, {"config": cfg.model_dump(mode="json"), "place": place.to_json()},
                        concurrency=s.item_concurrency or max(4, cfg.generate.concurrency),
                        transcribes=cfg.evidence.text)
        full = {**cfg.model_dump(), "input": str(dataset_path(s.input).resolve()),
                "media_root": str(Path(s.media_root).resolve()) if s.media_root else None}
        return Work([stream], score_fingerprint(s, cfg), full, local_only=s.dry_run,
                    state={"cfg": cfg, "notes": notes, "place": place})

    def probe_paths(self, s: ScoreSettings, run: Run, work: Work) -> list[ProbePath]:
        """The entailment question, as the entail stage asks it (its judge, prompt variant and evidence
        settings, evidence text on when the run has it): the one stage whose answer rests on the media."""
        if s.dry_run:
            return []
        cfg: ScoreConfig = work.state["cfg"]
        assert cfg.judge_entail is not None
        judge = run.judges(cfg.judge_entail.spec, cfg.judge_entail.options, cfg.generate)
        return [EntailPath(judge, cfg, CallPool(), variant=cfg.entail_variant)]

    def task(self, payload: dict[str, Any], judge: JudgeFactory) -> ScoreTask:
        cfg = ScoreConfig.model_validate(payload["config"])

        def of(js: JudgeSpec | None) -> Any:
            return None if js is None else judge(js.spec, js.options, cfg.generate)

        judges = StageJudges(verify=of(cfg.judge_verify), decompose=of(cfg.judge_decompose),
                             entail=of(cfg.judge_entail), decontextualize=of(cfg.judge_decontextualize))
        return ScoreTask(cfg, judges, CallPool(), MediaPlace(**payload["place"]))

    def summarize(self, s: ScoreSettings, run: Run, work: Work) -> Any:
        if s.dry_run:
            doc = estimate(run.judges.made, len(run.items))
            return self._dry_modality_check(s, run, work, doc) if s.modality_check else doc
        results: list[ResponseResult] = run.folder.latest_results(slim=True, want=set(run.order), order=run.order)
        work.state["results"] = results  # summaries need no per-sentence detail
        summary = summary_of(results, work.state["cfg"], self._extra(s, run, work),
                             full=run.folder.iter_latest(set(run.order)))
        if s.modality_check:
            summary.extra["modality_check"] = self._modality_check(s, run, work)
        if s.by:
            summary.extra["breakdown"] = breakdown_of(results, work.state["cfg"], s.by, self._fields(run)).as_dict()
        return summary

    def _modality_check(self, s: ScoreSettings, run: Run, work: Work) -> dict[str, Any]:
        """``--modality-check N`` (:mod:`murgat.commands.score.modality_check`) with the run's entail judge, cache and media."""
        cfg: ScoreConfig = work.state["cfg"]
        assert cfg.judge_entail is not None
        judge = run.judges(cfg.judge_entail.spec, cfg.judge_entail.options, cfg.generate)

        async def go() -> dict[str, Any]:
            try:
                return await modality_check(run.folder.iter_latest(set(run.order)), {it.id: it for it in run.items},
                                            cfg, judge, work.state["place"], s.modality_check, s.seed)
            finally:
                await judge.aclose()  # its clients belong to this loop

        return run_async(go())

    def _dry_modality_check(self, s: ScoreSettings, run: Run, work: Work, doc: dict[str, Any]) -> dict[str, Any]:
        """The dry run's estimate with the check's requests: one entailment request per sampled fact, at most
        ``N`` and at most the facts citing one modality (the dry judge's verdicts say nothing of support)."""
        cfg: ScoreConfig = work.state["cfg"]
        facts = sum(1 for r in run.folder.iter_latest(set(run.order)) if r.error is None for sr in r.sentences
                    for f in sr.facts if fact_modality(f.citations) in ("audio", "visual"))
        n = min(s.modality_check, facts)
        assert cfg.judge_entail is not None
        entail = run.judges(cfg.judge_entail.spec, cfg.judge_entail.options, cfg.generate)
        if isinstance(entail, DryRunJudge):  # priced as the entail requests it already counted
            per_call = entail.est_tokens / entail.calls if entail.calls else 0
            entail.calls += n
            entail.est_tokens += int(per_call * n)
        out = estimate(run.judges.made, len(run.items))
        out["modality_check_calls_upper_bound"] = n
        return out

    @staticmethod
    def _fields(run: Run) -> Any:
        """What ``--by`` groups a record on: its own fields and its item's, the input's as it is now
        winning over those the record kept (a folder resumed from an input that gained fields)."""
        now = {it.id: item_fields(it) for it in run.items}
        return lambda r: {**record_fields(r), **now.get(r.id, {})}

    def _extra(self, s: ScoreSettings, run: Run, work: Work) -> dict[str, Any]:
        requests, deduplicated, by_judge = run.counts()
        stats = list(by_judge.values())
        extra: dict[str, Any] = {
            "this_invocation": {
                "requests": requests, "deduplicated": deduplicated,
                "sent": sum(st.calls for st in stats), "cache_hits": sum(st.cache_hits for st in stats),
                "retries": sum(st.retries for st in stats), "errors": sum(st.errors for st in stats),
                "input_tokens": sum(st.input_tokens for st in stats),
                "output_tokens": sum(st.output_tokens for st in stats), "cost_usd": sum(st.cost_usd for st in stats),
                **run.judges.cache_counts(),
            },
            "judges": sorted({j.name for j in run.judges.made}),
            "judge_notes": "; ".join(work.state["notes"]) or None,
        }
        if run.ray:
            extra["ray"] = run.ray_extra()
        if s.gold:
            extra.update(run.others_run("ground", {
                "input": s.input, "gold": s.gold, "run": str(run.folder.path), "bootstrap": s.bootstrap,
                "seed": s.seed, "attributed_threshold": s.attributed_threshold,
                "cluster_by_video": s.cluster_by_video, "end_tolerance": s.end_tolerance,
                "max_response_chars": s.max_response_chars, "by": list(s.by)}).summary)
        return extra

    def report(self, s: ScoreSettings, run: Run, work: Work, summary: Any) -> None:
        build_report([run.folder.path], run.folder.path / "report.html", copy_media=s.copy_media,
                     with_evidence=s.save_evidence, allow_outside_root=s.allow_media_outside_root,
                     by=s.by, fields_of=self._fields(run), open_folders={run.folder.path: run.folder})

    def show(self, s: ScoreSettings, run: Run, work: Work, summary: Any) -> None:
        from murgat.core.console import console  # rich: only when a table is drawn

        if s.dry_run:  # the estimate as a table (--json: the document)
            console().print(estimate_table(summary))
            return
        print_summary(summary, work.state["results"][:50],
                      f"MURGAT-S ({work.state['cfg'].precision_mode} precision) — {run.folder.path}", console())
        if summary.extra.get("breakdown"):
            print_breakdown(summary.extra["breakdown"], console())

    def notes(self, s: ScoreSettings, run: Run, work: Work, summary: Any) -> list[str]:
        if s.dry_run:
            unknown = summary["price_unknown"]
            lines = [f"note: price unknown for {', '.join(unknown)}: the estimated cost leaves those calls out "
                     "(a lower bound, or none at all); -J price_in=USD -J price_out=USD (per million tokens) prices "
                     "them"] if unknown else []
            if s.probes != "off":
                lines.append(f"note: not in this estimate: the judge probes (--probes {s.probes}) ask up to 14 "
                             "requests of the entail judge (12 probes, 2 token-account twins) before the first item "
                             "(answered from the cache once asked; "
                             "auto skips the embedded and replay judges; --probes off sends none)")
            return lines
        hint = missing_hint(work.state["results"], work.state["place"])
        lines = [hint] if hint else []
        capped = summary.evidence_notes
        if capped:  # never silent: the judge saw a sample of some cited media
            what = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in capped.items())
            lines.append(f"note: evidence limits changed what the judge was sent ({what}); each judge call's "
                         "evidence_notes in results.jsonl (and the report) say what was cited and what was sent")
        return lines

    def failure(self, s: ScoreSettings, run: Run, work: Work, summary: RunSummary) -> str | None:
        return None if s.dry_run else failure_line(work.state["results"], s.max_undetermined)
