"""``murgat generate`` and ``murgat sweep`` as run commands (:class:`~murgat.engine.command.Command`),
given their settings (:mod:`murgat.settings.generate`). ``generate`` is one stream of answers;
``sweep`` runs ``generate`` and then ``score`` once per effort, through the engine
(:class:`~murgat.engine.command.Others`): its summary is the table of those runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from murgat.commands.generate.sweep import plot_sweep, sweep_table
from murgat.commands.generate.task import GenerateTask, accuracy_table
from murgat.core.comparison import answers_note
from murgat.core.datasets import load_dataset
from murgat.core.inputs import responses_by_id
from murgat.core.schema import Item
from murgat.engine.command import Command, load_selected
from murgat.engine.errors import SettingsError
from murgat.engine.fingerprint import Where, fingerprint
from murgat.engine.folder import RunConfigMismatch, RunFolder
from murgat.engine.guards import Outputs, select_items
from murgat.engine.loop import Digest
from murgat.engine.options import scoring_values
from murgat.engine.preflight import MediaPlace, missing_hint
from murgat.engine.roles import JudgeFactory, JudgeMaker, options_of
from murgat.engine.run_state import Run, Stream, Work
from murgat.engine.runs import load_run
from murgat.judges.effort import check
from murgat.judges.types import GenerateConfig
from murgat.settings.generate import GenerateSettings
from murgat.settings.sweep import SweepSettings

#: generate folders record the model's options parsed ("options"), the request settings that change answers
#: ("generate", with this run's effort) and --base by its absolute path
GENERATE_NAMES: dict[str, Where] = {"model_option": None, "effort": None, "base": None,
                                    "temperature": "generate.temperature", "max_tokens": "generate.max_tokens"}
#: what a sweep's judge must answer (it scores every effort)
SCORING = ("verify", "decompose", "entail")


def output_paths(out: str | Path) -> tuple[Path, Path]:
    """(run folder, responses file) of ``generate --out``.

    ``--out DIR`` is a run folder like every command's: ``DIR/responses.jsonl`` (the input of
    ``murgat score``), ``config.json``, ``cache.sqlite``, ``summary.json``. ``--out FILE.jsonl``
    (the spelling of earlier versions, kept working) writes the responses to ``FILE.jsonl`` and
    keeps the rest of the run folder beside it in ``FILE.run/``."""
    p = Path(out)
    if p.suffix == ".jsonl" and not p.is_dir() and not str(out).endswith(("/", "\\")):
        return p.with_suffix(".run"), p
    return p, p / "responses.jsonl"


def _items(s: GenerateSettings | SweepSettings) -> list[Item]:
    return select_items(load_selected(lambda: load_dataset(s.data)), s.ids, s.limit)


class GenerateCommand(Command[GenerateSettings]):
    """``murgat generate``: one answer per question (0 done, 1 some items have no response, 2 bad input)."""

    kind = "generate"

    def needs(self, s: GenerateSettings) -> dict[str, tuple[str, ...]]:
        return {"model": ("generate",)}

    def load(self, s: GenerateSettings) -> list[Item]:
        return _items(s)

    def outputs(self, s: GenerateSettings) -> Outputs:
        folder, responses = output_paths(s.out)
        # the responses file is locked too: `--out DIR` and `--out DIR/responses.jsonl` name one file
        return Outputs(folder, files=[responses], inputs=[s.data, s.base], locked_files=[responses])

    def folder(self, s: GenerateSettings, outputs: Outputs) -> RunFolder:
        return RunFolder(outputs.folder, record=None, results=outputs.files[0].resolve(),
                         required=frozenset({"response"}))

    def judge_maker(self, s: GenerateSettings) -> JudgeMaker:
        """The run's cache: ``--cache``, else the legacy ``FILE.jsonl.cache.sqlite`` where one exists, else the folder's."""
        folder, responses = output_paths(s.out)
        legacy = Path(f"{responses}.cache.sqlite")
        return JudgeMaker(Path(s.cache) if s.cache else (legacy if legacy.exists() else folder / "cache.sqlite"))

    def check(self, s: GenerateSettings, run: Run) -> None:
        """A responses file from before run folders (no config.json yet) is adopted only when its records
        were made by this model, mode and effort (each record names them): otherwise one file would mix
        two settings under one accuracy."""
        if run.folder.config_path.exists():
            return
        for r in run.folder.latest_results(slim=True):
            made = (r.get("model"), r.get("mode"), r.get("effort"))
            if made[0] not in (None, s.model) or made[1] not in (None, s.mode) or made[2] not in (None, s.effort):
                raise RunConfigMismatch(f"{run.folder.results_path} holds responses of {made[0]} (mode {made[1]}, "
                                        f"effort {made[2]}), not of {s.model} (mode {s.mode}, effort {s.effort}); use "
                                        "another --out, or --overwrite")

    def label(self, s: GenerateSettings) -> str:
        return f"generate ({s.effort})" if s.effort else "generate"

    def open(self, s: GenerateSettings, run: Run) -> Work:
        if s.mode == "posthoc" and not s.base:
            raise SettingsError("--mode posthoc needs --base RESPONSES (a base-mode responses file)")
        base_file = s.base if s.mode == "posthoc" else None
        # a base response over --max-response-chars marks its item (an error record, never read)
        base = load_selected(lambda: responses_by_id(base_file, run.items, max_response_chars=s.max_response_chars)) \
            if base_file else {}
        opts = options_of(s.model_option)
        cfg = s.generate_config()
        run.judges.role(s.model, opts, cfg, self.needs(s)["model"])
        place = MediaPlace.of(s).resolved()
        payload = {"config": cfg.model_dump(mode="json"), "model": s.model, "options": opts, "mode": s.mode,
                   "place": place.to_json(), "fps": s.fps, "max_frames": s.max_frames,
                   "base": {i: base[i] for i in run.order if i in base}, "max_response_chars": s.max_response_chars}
        fp = fingerprint(s, GENERATE_NAMES, {"options": opts, "generate": cfg.cache_fields(),
                                             "base": str(Path(s.base).resolve()) if s.base else None})
        return Work([Stream("items", run.folder, payload, concurrency=s.item_concurrency or 8)], fp,
                    {**fp, "data": s.data, "media_root": s.media_root}, state={"place": place})

    def task(self, payload: dict[str, Any], judge: JudgeFactory) -> GenerateTask:
        cfg = GenerateConfig.model_validate(payload["config"])
        return GenerateTask(judge(payload["model"], payload["options"], cfg), payload["mode"], cfg,
                            MediaPlace(**payload["place"]), fps=payload["fps"], max_frames=payload["max_frames"],
                            base=payload["base"], max_chars=payload["max_response_chars"])

    def digest(self, payload: dict[str, Any]) -> Digest:
        place, base = MediaPlace(**payload["place"]), payload["base"]
        return lambda item: place.digest(item, base.get(item.id))

    def summarize(self, s: GenerateSettings, run: Run, work: Work) -> dict[str, Any]:
        records = run.folder.latest_results(want=set(run.order), order=run.order)
        work.state["records"] = records
        table = accuracy_table(records)
        one = next(iter(run.counts()[2].values()), None)
        table["judge"] = one.model_dump() if one else {}
        table["responses"] = str(run.outputs.files[0])
        return table

    def show(self, s: GenerateSettings, run: Run, work: Work, summary: dict[str, Any]) -> None:
        acc = summary["accuracy"]
        print(f"wrote {summary['responses']}: {summary['n']} responses, {summary['n_errors']} errors, "
              f"{summary['n_posthoc_rejected']} post-hoc rewrites rejected")
        if acc:
            print(f"accuracy {acc['value']:.3f} [{acc['ci_low']:.3f}, {acc['ci_high']:.3f}] on {summary['n_with_gold']}"
                  f"{answers_note(summary)}")
            for t, row in summary["by_type"].items():
                print(f"  {t:<24} n={row['n']:<5} accuracy {row['accuracy']:.3f}"
                      + (f" ({row['n_answer_unknown']} answer(s) not read)" if row.get("n_answer_unknown") else ""))
        if summary.get("n_gold_unusable"):
            print(f"  {summary['n_gold_unusable']} item(s) have a gold answer that names no option (left out of "
                  "accuracy)")
        st = summary["judge"]
        if st:
            print(f"model calls {st['calls']}, cache hits {st['cache_hits']}, retries {st['retries']}, cost "
                  f"${st['cost_usd']:.4f}")

    def notes(self, s: GenerateSettings, run: Run, work: Work, summary: dict[str, Any]) -> list[str]:
        hint = missing_hint(work.state["records"], work.state["place"])
        return [hint] if hint else []

    def failure(self, s: GenerateSettings, run: Run, work: Work, summary: dict[str, Any]) -> str | None:
        if not summary["n_errors"]:
            return None
        return (f"FAILED: {summary['n_errors']} of {summary['n']} item(s) have no response (see generation_error in "
                f"{summary['responses']}); rerun with --retry-errors once fixed")


class SweepCommand(Command[SweepSettings]):
    """``murgat sweep``: ``generate`` and ``score`` per effort, then ``sweep.json`` and ``sweep.png``.

    Its summary is the table of those runs, so summarizing a sweep runs them; each run is a command
    of its own (its folder, fingerprint, lock and resume), run through the engine by name."""

    kind = "sweep"
    summary_file = "sweep.json"

    def needs(self, s: SweepSettings) -> dict[str, tuple[str, ...]]:
        return {"model": ("generate",), "judge": SCORING}

    def efforts(self, s: SweepSettings) -> list[str]:
        try:
            efforts = [check(e) for e in s.efforts.split(",") if e.strip()]
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        if not efforts:  # an empty sweep would exit 0 with an empty table
            raise SettingsError(f"--efforts {s.efforts!r} names no effort; e.g. --efforts low,high")
        return [e for e in efforts if e is not None]

    def load(self, s: SweepSettings) -> list[Item]:
        self.efforts(s)
        return _items(s)

    def judge_maker(self, s: SweepSettings) -> JudgeMaker:
        return JudgeMaker(Path(s.out) / "score-cache.sqlite")  # the scoring runs' shared cache

    def open(self, s: SweepSettings, run: Run) -> Work:
        """Both roles checked before any effort is generated: a model that cannot answer, or a judge
        that cannot score, is refused first."""
        needs, cfg = self.needs(s), s.generate_config()
        run.judges.role(s.model, options_of(s.model_option), cfg, needs["model"])
        run.judges.role(s.judge, options_of(s.judge_option), cfg, needs["judge"])
        return Work([], None)

    def summarize(self, s: SweepSettings, run: Run, work: Work) -> dict[str, Any]:
        root, rows, failed = Path(s.out), [], []
        for effort in self.efforts(s):
            d = root / f"effort-{effort}"
            values = {**s.model_dump(exclude={"efforts", "judge", "judge_option", "out", "print_json", "quiet",
                                                "probes", "probe_seed"}),
                      "effort": effort, "out": str(d), "quiet": s.quiet or s.print_json}
            made = run.others_run("generate", values)
            scored = run.others_run("score", scoring_values(s, input=made.summary["responses"], judge=s.judge,
                                                            judge_option=s.judge_option, out=str(d / "run"),
                                                            cache=str(root / "score-cache.sqlite")))
            if made.summary.get("n_errors") or scored.code == 1:  # items without a response or a score
                failed.append(effort)
            rows.append({"effort": effort, "summary": load_run(d / "run").summary})
        work.state["failed"] = failed
        return sweep_table(rows)

    def report(self, s: SweepSettings, run: Run, work: Work, summary: dict[str, Any]) -> None:
        work.state["png"] = plot_sweep(summary, Path(s.out) / "sweep.png")

    def show(self, s: SweepSettings, run: Run, work: Work, summary: dict[str, Any]) -> None:
        print_sweep(s, summary, Path(s.out), work.state["png"])

    def failure(self, s: SweepSettings, run: Run, work: Work, summary: dict[str, Any]) -> str | None:
        if not work.state["failed"]:
            return None
        return (f"FAILED: effort(s) {', '.join(work.state['failed'])} have items without a response or a score "
                f"(see each {s.out}/effort-*/run/results.jsonl); rerun with --retry-errors once fixed")


def print_sweep(s: SweepSettings, doc: dict[str, Any], root: Path, png: Path) -> None:
    """The sweep's table on stdout."""
    from rich.table import Table

    from murgat.core.console import console

    t = Table(title=f"{s.model} — {s.mode} — accuracy and MURGAT-S by reasoning effort")
    for col in ("effort", "accuracy [95% CI]", "MURGAT-S [95% CI]", "coverage", "F1", "items", "errors"):
        t.add_column(col)
    for r in doc["rows"]:
        t.add_row(r["effort"], r["accuracy_text"], r["murgat_s_text"], r["coverage_text"], r["f1_text"], str(r["n_items"]),
                  str(r["n_errors"]))
    con = console()
    con.print(t)
    con.print(f"wrote {root / 'sweep.json'} and {png}")
