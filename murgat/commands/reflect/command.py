"""``murgat reflect`` as a run command: Algorithm 2 over a dataset, with before/after UPR and accuracy.

A run folder of kind ``reflect`` (:mod:`murgat.engine`), resumable like every command's::

    OUT/config.json       kind and settings (model, detector, its prompt, judge, K, caps, …); other ones are refused
    OUT/results.jsonl     one line per item: {id, record, trace} — the only file the engine appends to
    OUT/responses.jsonl   final responses (input for ``murgat score`` and ``murgat faithfulness``), input order
    OUT/traces.jsonl      per item: every checked step, regeneration attempt, verdict, reason, continuation
    OUT/cache.sqlite      every model, detector and judge answer
    OUT/summary.json      UPR (measured by --judge) and accuracy before vs after (paired bootstrap CIs of the
                          differences), the detector's own view, regenerations, successes after 1/2/3 attempts,
                          unresolved, extra calls and cost per item

``responses.jsonl`` and ``traces.jsonl`` are exported from ``results.jsonl`` at the end of each run
(:class:`~murgat.engine.folder.PairFolder`): a crash between two appends can no longer leave an
item in one and not the other. ``--retry-errors`` does failed items again, ``--overwrite``
starts over (the cache stays), an edited question or replaced video is redone.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from murgat.commands.reflect.task import ReflectTask, build_roles
from murgat.core.datasets import load_dataset
from murgat.core.inputs import responses_by_id
from murgat.core.schema import Item
from murgat.core.steps import StepLabel
from murgat.core.upr import summarize_reflection
from murgat.engine.command import Command, load_selected
from murgat.engine.fingerprint import fingerprint
from murgat.engine.folder import PairFolder, RunFolder
from murgat.engine.guards import Outputs, select_items
from murgat.engine.loop import Digest
from murgat.engine.options import judging_config
from murgat.engine.preflight import MediaPlace
from murgat.engine.roles import JudgeFactory, options_of
from murgat.engine.run_state import Run, Stream, Work
from murgat.judging.config import JudgingConfig
from murgat.judging.probes.paths import FaithPath, ProbePath
from murgat.judging.steps import STEP_PROMPTS
from murgat.media.cache import file_digest
from murgat.report.step_groups import (
    REFLECT_OUTCOME_FIELDS,
    by_fields,
    pct,
    print_reflection_breakdown,
    reflection_breakdown,
)
from murgat.report.steps import reflect_report
from murgat.settings.reflect import REFLECT_NAMES, ReflectSettings

#: the model's requests: a chain (without --from), regenerated steps and continuations
MODEL_TASKS = ("generate", "reflect_regenerate", "reflect_regenerate_again", "reflect_continue")


def judge_note(s: ReflectSettings) -> str:
    """Why UPR before/after is not an independent measurement when ``--judge`` is not given."""
    return (f"--judge not given: before/after UPR are measured by the detector's judge ({s.detector}"
            + (", i.e. the model grading itself" if s.detector == "self" else "")
            + "), the one that drove the regenerations — not an independent measurement")


class ReflectCommand(Command[ReflectSettings]):
    """``murgat reflect``: reflect every item (see the module docstring)."""

    kind = "reflect"
    judge_account = True

    def needs(self, s: ReflectSettings) -> dict[str, tuple[str, ...]]:
        return {"model": MODEL_TASKS[1:] if s.from_ else MODEL_TASKS,
                "detector": (STEP_PROMPTS[s.detector_prompt],), "judge": (f"faith_{s.granularity}",)}

    def load(self, s: ReflectSettings) -> list[Item]:
        return select_items(load_selected(lambda: load_dataset(s.data)), s.ids, s.limit)

    def outputs(self, s: ReflectSettings) -> Outputs:
        out = Path(s.out)
        return Outputs(out, files=[out / "responses.jsonl", out / "traces.jsonl"], inputs=[s.data, s.from_])

    def folder(self, s: ReflectSettings, outputs: Outputs) -> RunFolder:
        return PairFolder(outputs.folder)

    def check(self, s: ReflectSettings, run: Run) -> None:
        if s.by:  # a field no item has: refused before any model is asked
            by_fields(s.by, run.items, REFLECT_OUTCOME_FIELDS)

    def reset(self, s: ReflectSettings, folder: RunFolder) -> None:
        folder.reset()
        for name in ("responses.jsonl", "traces.jsonl"):
            (folder.path / name).unlink(missing_ok=True)

    def _check_roles(self, s: ReflectSettings, run: Run, payload: dict[str, Any], cfg: JudgingConfig) -> None:
        """A provider that cannot do its part (the embedded judge cannot write or label chains) is refused
        before any work, as in ``murgat faithfulness``."""
        needs = self.needs(s)
        run.judges.role(s.model, payload["model_options"], cfg.generate, needs["model"])
        if s.detector == "self":
            run.judges.role(s.model, payload["model_options"], cfg.generate, needs["detector"])
        else:
            run.judges.role(s.detector, payload["detector_options"], cfg.generate, needs["detector"])
        measurer = (s.judge, payload["judge_options"]) if s.judge else (
            (s.model, payload["model_options"]) if s.detector == "self" else (s.detector, payload["detector_options"]))
        run.judges.role(*measurer, cfg.generate, needs["judge"])

    def open(self, s: ReflectSettings, run: Run) -> Work:
        cfg = judging_config(s)
        chains = s.from_
        # a chain over --max-response-chars marks its item (an error record, never read)
        start = load_selected(lambda: responses_by_id(chains, run.items, max_response_chars=s.max_response_chars)) \
            if chains else None
        place = MediaPlace.of(s).resolved()
        payload = {"config": cfg.model_dump(mode="json"), "model": s.model, "model_options": options_of(s.model_option),
                   "detector": s.detector, "detector_options": options_of(s.detector_option),
                   "detector_prompt": s.detector_prompt, "judge": s.judge, "judge_options": options_of(s.judge_option),
                   "variant": s.variant, "granularity": s.granularity, "max_frames": s.max_frames, "k": s.k,
                   "mode": s.mode, "max_regenerations": s.max_regenerations, "max_steps": s.max_steps,
                   "place": place.to_json(), "fps": s.fps, "max_response_chars": s.max_response_chars,
                   "start": {i: start[i] for i in run.order if i in start} if start is not None else None}
        self._check_roles(s, run, payload, cfg)
        if not s.judge:
            print(f"warning: {judge_note(s)}", file=sys.stderr)
        fp = fingerprint(s, REFLECT_NAMES, {
            "model_options": payload["model_options"], "detector_options": payload["detector_options"],
            "judge_options": payload["judge_options"], "from": file_digest(Path(s.from_)) if s.from_ else None})
        return Work([Stream("items", run.folder, payload, concurrency=s.item_concurrency or 8,
                            transcribes=cfg.evidence.text)], fp, {**fp, "data": s.data, "media_root": s.media_root})

    def probe_paths(self, s: ReflectSettings, run: Run, work: Work) -> list[ProbePath]:
        """The detector's labeller (per step, its step prompt) and the measuring judge's (its granularity):
        the two ways a reflect run asks about the media (one set when they are the same questions)."""
        payload = work.streams[0].payload
        roles = build_roles(payload, run.judges)
        cfg = JudgingConfig.model_validate(payload["config"])
        return [FaithPath(roles.reflector.detector, cfg, StepLabel), FaithPath(roles.judge, cfg, StepLabel)]

    def task(self, payload: dict[str, Any], judge: JudgeFactory) -> ReflectTask:
        return ReflectTask(build_roles(payload, judge), JudgingConfig.model_validate(payload["config"]),
                           MediaPlace(**payload["place"]), mode=payload["mode"], fps=payload["fps"],
                           start=payload["start"], max_chars=payload["max_response_chars"])

    def digest(self, payload: dict[str, Any]) -> Digest:
        place, start = MediaPlace(**payload["place"]), payload["start"] or {}
        return lambda item: place.digest(item, start.get(item.id))

    def summarize(self, s: ReflectSettings, run: Run, work: Work) -> dict[str, Any]:
        ids = set(run.order)
        rows = run.folder.latest_results(want=ids, order=run.order)
        work.state["rows"] = rows
        traces = [r["trace"] for r in rows if "trace" in r.get("trace", {})]
        variant = "vanilla" if s.detector == "self" else s.variant
        # --by, only when asked: the summary without it is the one it always was
        grouped = {"breakdown": reflection_breakdown(rows, s.by, run.items, s.bootstrap, s.seed)} if s.by else {}
        return {**summarize_reflection(traces, len(ids), s.bootstrap, s.seed), **grouped,
                "k": s.k, "detector": s.detector, "detector_variant": variant,
                "detector_prompt": s.detector_prompt, "max_regenerations": s.max_regenerations,
                "max_steps": s.max_steps,
                "measured_by": {"judge": s.judge or s.detector, "note": None if s.judge else judge_note(s),
                                # the same provider:model as the detector (or, for 'self', the model) is not independent
                                "independent": s.judge not in (None, s.detector, s.model if s.detector == "self"
                                                                  else None),
                                "variant": s.variant, "granularity": s.granularity}}

    def report(self, s: ReflectSettings, run: Run, work: Work, summary: dict[str, Any]) -> None:
        rows = work.state["rows"]
        reflect_report(run.folder.path / "report.html", [r["trace"] for r in rows], {r["id"]: r["record"] for r in rows},
                       summary, str(MediaPlace.of(s).roots()[0]))  # where the items' media were read

    def show(self, s: ReflectSettings, run: Run, work: Work, summary: dict[str, Any]) -> None:
        print_reflection(summary)
        if summary.get("breakdown"):
            print_reflection_breakdown(summary["breakdown"])

    def failure(self, s: ReflectSettings, run: Run, work: Work, summary: dict[str, Any]) -> str | None:
        if not summary["errors"]:
            return None
        return (f"FAILED: {summary['errors']} of {summary['items']} item(s) could not be reflected (see traces.jsonl); "
                "rerun with --retry-errors once fixed")


def print_reflection(doc: dict[str, Any]) -> None:
    """The before/after table of a reflect run, on stdout."""
    from rich.table import Table

    from murgat.core.console import console

    t = Table(title=f"murgat reflect (K = {doc['k']}, detector {doc['detector']})")
    t.add_column("measure")
    t.add_column("before")
    t.add_column("after")
    t.add_column("difference (95% CI)")
    who = doc["measured_by"]["judge"] + ("" if doc["measured_by"]["independent"] else ", not independent")
    t.add_row(f"UPR (judge: {who})", pct(doc["upr_before"]), pct(doc["upr_after"]), pct(doc["upr_difference"]))
    dv = doc.get("detector_view")
    if dv:
        t.add_row("UPR (detector's own verdicts)", pct(dv["upr_before"]), pct(dv["upr_after"]),
                  pct(dv["upr_difference"]))
    if doc["accuracy_before"] is not None:
        t.add_row("accuracy (an answer not read counts as not correct)", f"{doc['accuracy_before']:.1%}",
                  f"{doc['accuracy_after']:.1%}", pct(doc["accuracy_difference"]))
        t.add_row("answers not read", str(doc.get("n_answer_unknown_before", 0)),
                  str(doc.get("n_answer_unknown_after", 0)), "")
        if doc.get("n_answer_unknown_before") or doc.get("n_answer_unknown_after"):
            def share(x: float | None) -> str:
                return "–" if x is None else f"{x:.1%}"

            t.add_row("accuracy over the answers read", share(doc.get("accuracy_answered_before")),
                      share(doc.get("accuracy_answered_after")), "")
    con = console()
    con.print(t)
    con.print(f"regenerations {doc['regenerations_invoked']} · resolved after attempts "
              f"{doc['resolved_after_attempts']} · unresolved {doc['unresolved']} · undetermined checks "
              f"{doc['undetermined_steps']} · extra calls/item "
              f"{doc['extra_calls_per_item']:.1f} · cost/item ${doc['cost_usd_per_item']:.4f}")
