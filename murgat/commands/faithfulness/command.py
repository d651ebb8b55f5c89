"""``murgat faithfulness`` as a run command (:class:`~murgat.engine.command.Command`), given its
:class:`~murgat.settings.faithfulness.FaithfulnessSettings`: its judge and labeller, the task that
labels one chain, its summary (UPR with CIs), ``report.html`` and its tables; the lifecycle is the
engine's (:func:`~murgat.engine.command.run_command`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from murgat.commands.faithfulness.runner import FaithTask
from murgat.core.inputs import load_items
from murgat.core.schema import Item
from murgat.core.steps import FaithResult, StepLabel
from murgat.core.upr import summarize_faithfulness
from murgat.engine.command import Command, load_selected
from murgat.engine.errors import SettingsError
from murgat.engine.fingerprint import fingerprint
from murgat.engine.folder import RunFolder
from murgat.engine.guards import Outputs, select_items
from murgat.engine.options import judging_config
from murgat.engine.outcome import failure_line
from murgat.engine.preflight import MediaPlace
from murgat.engine.roles import JudgeFactory, options_of
from murgat.engine.run_state import Run, Stream, Work
from murgat.judges.evidence import limit_overrides, limits_for
from murgat.judging.config import JudgingConfig
from murgat.judging.pool import CallPool
from murgat.judging.probes.paths import FaithPath, ProbePath
from murgat.judging.steps import Labeller
from murgat.report.step_groups import (
    FAITH_OUTCOME_FIELDS,
    by_fields,
    faithfulness_breakdown,
    pct,
    print_faithfulness_breakdown,
)
from murgat.report.steps import faithfulness_report
from murgat.settings.faithfulness import FAITHFULNESS_NAMES, FaithfulnessSettings


class FaithfulnessCommand(Command[FaithfulnessSettings]):
    """``murgat faithfulness``: label every step of every chain (see the module docstring)."""

    kind = "faithfulness"
    judge_account = True

    def needs(self, s: FaithfulnessSettings) -> dict[str, tuple[str, ...]]:
        return {"judge": (f"faith_{s.granularity}",)}

    def load(self, s: FaithfulnessSettings) -> list[Item]:
        return select_items(load_selected(lambda: load_items(s.input, None if s.ids else s.limit,
                                                             max_response_chars=s.max_response_chars)), s.ids, s.limit)

    def outputs(self, s: FaithfulnessSettings) -> Outputs:
        return Outputs(Path(s.out), inputs=[s.input])

    def check(self, s: FaithfulnessSettings, run: Run) -> None:
        if s.by:  # a field no item has: refused before any judge is asked
            by_fields(s.by, run.items, FAITH_OUTCOME_FIELDS)

    def folder(self, s: FaithfulnessSettings, outputs: Outputs) -> RunFolder:
        return RunFolder(outputs.folder, record=FaithResult, required=frozenset({"case", "steps"}))

    def open(self, s: FaithfulnessSettings, run: Run) -> Work:
        opts = options_of(s.judge_option)
        cfg = judging_config(s)
        judge = run.judges.role(s.judge, opts, cfg.generate, self.needs(s)["judge"])
        if judge.needs_evidence_text:
            cfg.evidence.text = True
        try:  # what one request may carry: the judge's provider's limits, with -J overrides
            cfg.evidence_limits = limits_for(judge.provider, limit_overrides(opts))
        except ValueError as exc:
            raise SettingsError(f"-J evidence limits: {exc}") from None
        place = MediaPlace.of(s).resolved()
        payload = {"config": cfg.model_dump(mode="json"), "judge": s.judge, "options": opts, "variant": s.variant,
                   "granularity": s.granularity, "segmentation": s.segmentation, "max_frames": s.max_frames,
                   "place": place.to_json()}
        fp = fingerprint(s, FAITHFULNESS_NAMES, {"options": dict(sorted(opts.items())),
                                                 "evidence": cfg.evidence.model_dump(),
                                                 "generate": cfg.generate.cache_fields()})
        return Work([Stream("items", run.folder, payload, concurrency=s.item_concurrency or 8,
                            transcribes=cfg.evidence.text)], fp,
                    {**fp, "input": str(s.input), "media_root": place.media_root}, state={"fp": fp})

    def probe_paths(self, s: FaithfulnessSettings, run: Run, work: Work) -> list[ProbePath]:
        """The run's labeller (its judge, variant, granularity and frames), labelling probe steps."""
        task = self.task(work.streams[0].payload, run.judges)
        return [FaithPath(task.labeller, task.cfg, StepLabel)]

    def task(self, payload: dict[str, Any], judge: JudgeFactory) -> FaithTask:
        cfg = JudgingConfig.model_validate(payload["config"])
        labeller = Labeller(judge=judge(payload["judge"], payload["options"], cfg.generate), pool=CallPool(),
                            variant=payload["variant"], granularity=payload["granularity"],
                            max_frames=payload["max_frames"])
        return FaithTask(labeller, cfg, payload["segmentation"], MediaPlace(**payload["place"]))

    def summarize(self, s: FaithfulnessSettings, run: Run, work: Work) -> dict[str, Any]:
        results = run.folder.latest_results(want=set(run.order), order=run.order)
        work.state["results"] = results
        doc = summarize_faithfulness(results, s.bootstrap, s.seed)
        requests, deduplicated, stats = run.counts()
        one = next(iter(stats.values()), None)
        doc["this_invocation"] = {**(one.model_dump() if one else {}), "requests": requests,
                                  "deduplicated": deduplicated}
        doc["settings"] = work.state["fp"]
        if run.ray:
            doc["ray"] = run.ray_extra()
        if s.by:  # only when asked: the summary without --by is the one it always was
            doc["breakdown"] = faithfulness_breakdown(results, s.by, run.items, s.bootstrap, s.seed)
        return doc

    def report(self, s: FaithfulnessSettings, run: Run, work: Work, summary: dict[str, Any]) -> None:
        faithfulness_report(run.folder.path / "report.html", work.state["results"], summary,
                            str(MediaPlace.of(s).roots()[0]))  # where the items' media were read

    def show(self, s: FaithfulnessSettings, run: Run, work: Work, summary: dict[str, Any]) -> None:
        print_faithfulness(summary, str(run.folder.path))
        if summary.get("breakdown"):
            print_faithfulness_breakdown(summary["breakdown"])

    def failure(self, s: FaithfulnessSettings, run: Run, work: Work, summary: dict[str, Any]) -> str | None:
        return failure_line(work.state["results"], s.max_undetermined)


def print_faithfulness(doc: dict[str, Any], title: str) -> None:
    """The UPR table and the answer × faithfulness table, on stdout."""
    from rich.table import Table

    from murgat.core.console import console

    t = Table(title=f"step faithfulness — {title}")
    t.add_column("measure")
    t.add_column("value (95% CI)")
    t.add_row("UPR (unfaithful / perception steps)",
              f"{pct(doc['upr'])}  ({doc['unfaithful_steps']}/{doc['perception_steps']})")
    for m, row in doc["upr_by_modality"].items():
        t.add_row(f"  UPR {m}", f"{pct(row)}  ({row['unfaithful_steps']}/{row['perception_steps']})")
    t.add_row("mean per-response UPR", pct(doc["upr_per_response_mean"]))
    t.add_row("accuracy (an answer not read counts as not correct)", pct(doc["accuracy"]))
    if doc.get("accuracy") is not None:
        t.add_row("answers not read", str(doc.get("n_answer_unknown", 0)))
        if doc.get("n_answer_unknown"):
            t.add_row("accuracy over the answers read", pct(doc.get("accuracy_answered")))
    t.add_row("responses without perception steps", str(doc["n_no_perception"]))
    t.add_row("undetermined steps", f"{doc['undetermined_steps']} {doc['undetermined_causes'] or ''}")
    con = console()
    con.print(t)
    x = doc["answer_x_faithfulness"]
    t2 = Table(title="answer × chain faithfulness (responses)")
    t2.add_column("")
    t2.add_column("faithful chain")
    t2.add_column("some unfaithful step")
    t2.add_row("correct answer", str(x["correct_faithful"]), str(x["correct_unfaithful"]))
    t2.add_row("wrong answer", str(x["wrong_faithful"]), str(x["wrong_unfaithful"]))
    if x.get("unknown_faithful") or x.get("unknown_unfaithful"):
        t2.add_row("answer not read", str(x["unknown_faithful"]), str(x["unknown_unfaithful"]))
    con.print(t2)
