"""The inspect_ai task and scorer, offline: inspect's own ``mockllm/model`` is the model under test
(its custom outputs are the bundled cited example answers), murgat's embedded and replay judges
score, ``inspect_ai.eval`` runs in process and writes a real ``.eval`` log.

Must hold (#38): the eval of the task on the bundled examples finishes offline, its log holds the
murgat metrics, and its MURGAT-S (with CIs) equals ``murgat score`` of the same outputs with the
same judge; ``murgat import inspect`` of the log, scored again, gives the same figures.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="the inspect_ai integration needs: pip install 'murgat[inspect]'")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ContentAudio, ContentImage, ContentText, ContentVideo, ModelOutput, ModelUsage, get_model

from murgat.api import score as murgat_score
from murgat.cli import main
from murgat.commands.imports.samples import INPUT, MARKER
from murgat.core.citations import strip_citations
from murgat.core.text import preprocess, split_sentences
from murgat.integrations.inspect_ai import murgat_cited_qa, murgat_scorer, scorer_folder
from murgat.integrations.media_parts import media_pieces

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "responses.jsonl"
MEDIA = ROOT / "examples" / "media"
WORLDSENSE = ROOT / "tests" / "data" / "worldsense"
ANSWERS = {r["question"]: r["response"] for r in map(json.loads, EXAMPLES.read_text().splitlines())}
#: the log's metric → the run summary's figure
FIGURES = {"murgat_s": "murgat_s", "coverage": "coverage", "precision": "precision", "recall": "recall", "f1": "f1",
           "answer_accuracy": "accuracy", "attributed_accuracy": "attributed_accuracy"}


@pytest.fixture(autouse=True)
def _inspect_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Any:
    """inspect keeps traces and buffers under the user's data folder: a temporary one here. And no test
    may leave inspect's process-wide ``nest_asyncio`` patch behind (it makes every later ``asyncio.run``
    reuse one event loop, which other tests of the suite rely on not happening)."""
    import inspect_ai._util._async as inspect_async

    base = tmp_path_factory.getbasetemp() / "inspect-home"
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
    yield
    assert not inspect_async._initialised_nest_asyncio, "inspect patched asyncio for the whole process"


class Answers:
    """The model under test: answers each prompt with the cited example answer to its question,
    and keeps every input it was sent (to check what media reached the model)."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers, self.inputs = answers, []  # type: ignore[var-annotated]

    def __call__(self, messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        self.inputs.append(messages)
        prompt = messages[-1].text
        text = next((a for q, a in self.answers.items() if q in prompt), "I cannot tell.\nAnswer: A")
        out = ModelOutput.from_content(model="mockllm/model", content=text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else mockllm counts with tiktoken (online)
        return out


def _eval(task: Task, answers: Answers, logs: Path, **options: Any) -> EvalLog:
    [log] = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=answers), log_dir=str(logs),
                         display="none", **options)
    return log


def _replay_judge(tmp: Path, answers: dict[str, str], denied: tuple[str, ...] = ()) -> str:
    """Every sentence verifiable, one fact per sentence, entailed unless it is one of ``denied``."""
    sents = [s.text for a in answers.values() for s in split_sentences(preprocess(a, 4).reasoning)]
    rows = [{"match": {"task": "verify"}, "output": {"text": "yes"}},
            *({"match": {"task": "decompose", "inputs": {"sentence": s}}, "output": {"text": json.dumps({"facts": [s]})}}
              for s in sents),
            *({"match": {"task": "entail", "inputs": {"fact": strip_citations(s)}}, "output": {"text": "no"}}
              for s in sents if any(d in s for d in denied)),
            {"match": {"task": "entail"}, "output": {"text": "yes"}}]
    p = tmp / "judge.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f"replay:{p}"


def _metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    [scores] = log.results.scores
    return {k: m.value for k, m in scores.metrics.items()}


def _same_figures(metrics: dict[str, float], summary: dict[str, Any]) -> None:
    """The log's metrics are the run summary's figures (CIs and counts stay in summary.json, not metrics)."""
    assert set(metrics) == {*FIGURES, "murgat_s_stderr"}
    for name, figure in FIGURES.items():
        assert metrics[name] == summary[figure]["value"], name


@pytest.mark.slow
def test_the_task_on_the_examples_equals_murgat_score_with_the_embedded_judge(tmp_path: Path) -> None:
    answers = Answers(ANSWERS)
    log = _eval(murgat_cited_qa(data=str(EXAMPLES), media_root=str(MEDIA), judge="embedded"), answers, tmp_path / "logs")
    assert log.status == "success", log.error
    metrics = _metrics(log)
    [ev] = log.results.scores  # type: ignore[union-attr]
    assert 0 < metrics["murgat_s"] < 1 and (ev.scored_samples or 0) + (ev.unscored_samples or 0) == 5
    run = Path(log.location).with_suffix(".murgat")
    # the same outputs (the examples' responses), the same judge; its answers to identical requests are shared
    direct = murgat_score(str(EXAMPLES), judge="embedded", media_root=str(MEDIA), out=str(tmp_path / "direct"),
                          cache=str(run / "cache.sqlite"))
    _same_figures(metrics, direct.summary)
    # a sample whose MURGAT-S is undefined is inspect's "unscored" (NaN), yet its answer counts in answer_accuracy
    assert ev.scored_samples == direct.summary["n_scored"] < 5
    assert json.loads((run / "summary.json").read_text())["murgat_s"] == direct.summary["murgat_s"]


def test_the_log_holds_murgat_figures_explanations_and_a_run_folder_beside_it(tmp_path: Path) -> None:
    judge = _replay_judge(tmp_path, ANSWERS, denied=("flag", "horn"))
    log = _eval(murgat_cited_qa(data=str(EXAMPLES), media_root=str(MEDIA), judge=judge), Answers(ANSWERS),
                tmp_path / "logs")
    assert log.status == "success", log.error
    run = Path(log.location).with_suffix(".murgat")
    summary = json.loads((run / "summary.json").read_text())
    _same_figures(_metrics(log), summary)
    assert summary["n_items"] == 5 and summary["accuracy"]["value"] == 1.0 and summary["murgat_s"]["value"] < 1
    assert json.loads((run / MARKER).read_text())["made_by"] == "murgat_scorer" and (run / "report.html").exists()
    samples = {s.id: s for s in read_eval_log(log.location).samples or []}
    jfk = samples["jfk-ask"].scores["murgat_scorer"]  # type: ignore[index]
    rec = jfk.metadata["murgat"]["record"]  # type: ignore[index]
    assert jfk.value == rec["scores"]["murgat_s"] and isinstance(jfk.value, float)  # one value: MURGAT-S
    assert rec["scores"]["recall"] == pytest.approx(0.75) and rec["correct"] is True and jfk.answer == "B"
    assert "He holds up a flag" in jfk.explanation and "invalid citation, no judge asked" in jfk.explanation  # type: ignore[operator]  # a flag "seen" in a sound-only file
    assert rec["id"] == "jfk-ask" and rec["sentences"][2]["verdicts"][0]["joint"] == "no"
    assert "raw" not in rec["sentences"][0]["verdicts"][0]["calls"][0]  # the judges' words stay in the run folder
    assert rec["meta"]["item"]["model"] == "mockllm/model" and rec["meta"]["item"]["source"].startswith("hand-written")


def test_import_round_trips_to_the_same_figures(tmp_path: Path) -> None:
    judge = _replay_judge(tmp_path, ANSWERS, denied=("dim",))
    log = _eval(murgat_cited_qa(data=str(EXAMPLES), media_root=str(MEDIA), judge=judge), Answers(ANSWERS),
                tmp_path / "logs")
    scorer_run = Path(log.location).with_suffix(".murgat")
    out = tmp_path / "imported"
    assert main(["import", "inspect", log.location, "--out", str(out)]) == 0
    assert (out / INPUT).read_text() == (scorer_run / INPUT).read_text()  # the same items, written the same way
    assert main(["score", str(out), "--media-root", str(MEDIA), "--judge", judge, "--out", str(out), "--quiet",
                 "--json"]) == 0
    _same_figures(_metrics(log), json.loads((out / "summary.json").read_text()))
    assert main(["import", "inspect", log.location, "--out", str(out)]) == 0  # again: nothing changes, nothing refused
    assert main(["summarize", str(out), str(scorer_run)]) == 0 and main(["view", str(out)]) == 0


def test_what_reaches_the_model_in_each_media_mode(tmp_path: Path) -> None:
    kinds = {m: [(p.kind, p.format) for p in media_pieces(MEDIA / "friday.mp4", m, max_frames=3)]
             for m in ("video", "video+audio", "frames+audio", "frames")}
    assert kinds["video"] == [("video", "mp4")]  # the file itself, picture and sound
    assert kinds["video+audio"] == [("video", "mp4"), ("audio", "wav")]
    assert kinds["frames+audio"] == [("text", None), ("image", "jpeg")] * 3 + [("text", None), ("audio", "wav")]
    assert kinds["frames"] == [("text", None), ("image", "jpeg")] * 3
    labels = [p.text for p in media_pieces(MEDIA / "friday.mp4", "frames", max_frames=3) if p.kind == "text"]
    assert labels[0] == "(frame at 0.00 s)" and len(set(labels)) == 3
    webm = media_pieces(MEDIA / "flower.webm", "video")  # a container inspect does not take: picture + sound apart
    assert [(p.kind, p.format) for p in webm] == [("video", "mp4"), ("audio", "wav")] and webm[0].path != str(MEDIA)
    assert [(p.kind, p.format) for p in media_pieces(MEDIA / "jfk.flac", "video")] == [("audio", "wav")]
    assert [(p.kind, p.format) for p in media_pieces(MEDIA / "bikes.mp4", "frames+audio", max_frames=1)] == \
        [("text", None), ("image", "jpeg")]  # no sound track: nothing claims one
    with pytest.raises(ValueError, match="choose one of"):
        media_pieces(MEDIA / "friday.mp4", "audio")

    answers = Answers(ANSWERS)
    log = _eval(murgat_cited_qa(data=str(EXAMPLES), media_root=str(MEDIA), media="video+audio"), answers,
                tmp_path / "logs")
    assert log.status == "success" and log.results is not None and not log.results.scores  # no judge: answers only
    sent = {type(c) for msgs in answers.inputs for c in msgs[-1].content}
    assert {ContentVideo, ContentAudio, ContentText} <= sent and ContentImage not in sent
    for msgs in answers.inputs:
        media = [c for c in msgs[-1].content if isinstance(c, ContentVideo | ContentAudio)]
        assert media and all((c.video if isinstance(c, ContentVideo) else c.audio).startswith("data:") for c in media)
        assert "(visual, MM:SS)" in msgs[-1].text  # murgat's citation prompt


def test_a_log_made_without_a_judge_is_scored_afterwards(tmp_path: Path) -> None:
    """``inspect score`` (its Python form, in a process of its own: inspect's ``score()`` patches asyncio for
    the whole process with nest_asyncio, which later tests of the suite must not inherit)."""
    log = _eval(murgat_cited_qa(data=str(EXAMPLES), media_root=str(MEDIA)), Answers(ANSWERS), tmp_path / "logs")
    judge = _replay_judge(tmp_path, ANSWERS, denied=("horn",))
    with pytest.raises(ValueError, match="pass out=FOLDER"):  # no log is being written: where the run goes is asked
        scorer_folder(None)
    run = tmp_path / "run"
    code = ("import json, sys; from inspect_ai import score; from inspect_ai.log import read_eval_log; "
            "from murgat.integrations.inspect_ai import murgat_scorer; "
            f"s = score(read_eval_log({log.location!r}), scorers=murgat_scorer(judge={judge!r}, out={str(run)!r}), "
            "display='none'); print(json.dumps({k: m.value for k, m in s.results.scores[0].metrics.items()}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    metrics = json.loads(done.stdout.strip().splitlines()[-1])
    _same_figures(metrics, json.loads((run / "summary.json").read_text()))


def test_a_sample_whose_media_is_missing_fails_naming_it_and_import_lists_it(tmp_path: Path) -> None:
    data = tmp_path / "q.jsonl"
    rows = [{"id": "here", "media": "friday.mp4", "question": "According to the operator, what mood is the man in?",
             "options": ["happy", "bad humor"], "gold": "B"},
            {"id": "gone", "media": "nothing.mp4", "question": "What is shown?", "options": ["a", "b"]}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    judge = _replay_judge(tmp_path, ANSWERS)
    log = _eval(murgat_cited_qa(data=str(data), media_root=str(MEDIA), judge=judge), Answers(ANSWERS),
                tmp_path / "logs", fail_on_error=False)
    samples = {s.id: s for s in read_eval_log(log.location).samples or []}
    assert samples["gone"].error is not None and "item gone: media 'nothing.mp4' not found" in samples["gone"].error.message
    assert samples["here"].scores["murgat_scorer"].as_float() >= 0  # type: ignore[index]
    out = tmp_path / "imported"
    assert main(["import", "inspect", log.location, "--out", str(out)]) == 1  # done, with a sample left out
    made = json.loads((out / MARKER).read_text())
    assert made["n_imported"] == 1 and made["skipped"][0]["sample"] == "gone"
    assert "the sample errored" in made["skipped"][0]["reason"]


def test_epochs_are_items_of_their_own(tmp_path: Path) -> None:
    judge = _replay_judge(tmp_path, ANSWERS)
    data = tmp_path / "two.jsonl"
    data.write_text("".join(line + "\n" for line in EXAMPLES.read_text().splitlines()[:2]))
    log = _eval(murgat_cited_qa(data=str(data), media_root=str(MEDIA), judge=judge), Answers(ANSWERS),
                tmp_path / "logs", epochs=2)
    assert log.status == "success", log.error
    ids = sorted(json.loads(x)["id"] for x in (Path(log.location).with_suffix(".murgat") / INPUT).read_text().splitlines())
    assert ids == ["friday-mood", "friday-mood#2", "nasa-where", "nasa-where#2"]
    summary = json.loads((Path(log.location).with_suffix(".murgat") / "summary.json").read_text())
    assert summary["n_items"] == 4 and _metrics(log)["murgat_s"] == summary["murgat_s"]["value"]


def test_the_task_is_found_by_its_registered_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``inspect eval murgat/murgat_cited_qa -T …`` resolves: the entry point in pyproject.toml. (Run
    from a folder holding a ``murgat/`` folder, such as a clone's root, inspect reads the name as a path.)"""
    from importlib.metadata import entry_points

    monkeypatch.chdir(tmp_path)

    from inspect_ai._util.registry import registry_info

    if not any(ep.value == "murgat.integrations.inspect_ai" for ep in entry_points(group="inspect_ai")):
        pytest.skip("murgat is not installed with its metadata here (pip install -e .): no inspect_ai entry point")
    if registry_info(murgat_cited_qa).name != "murgat/murgat_cited_qa":
        # inspect names a package's objects PACKAGE/NAME only when it finds the package installed; a
        # murgat.egg-info in the working folder (left by an editable build) hides the installed metadata
        pytest.skip(f"inspect registered the task as {registry_info(murgat_cited_qa).name!r} here (an egg-info "
                    "in the working folder shadows murgat's installed metadata)")
    args = {"data": str(EXAMPLES), "media_root": str(MEDIA), "judge": _replay_judge(tmp_path, ANSWERS),
            "precision_mode": "strict"}  # a score option, as -T precision_mode=strict passes it
    [log] = inspect_eval("murgat/murgat_cited_qa", task_args=args, limit=2, log_dir=str(tmp_path / "logs"),
                         display="none", model=get_model("mockllm/model", custom_outputs=Answers(ANSWERS)))
    assert log.status == "success", log.error
    config = json.loads((Path(log.location).with_suffix(".murgat") / "config.json").read_text())
    assert config["config"]["precision_mode"] == "strict" and log.results.scores[0].scored_samples == 2  # type: ignore[union-attr]


def test_the_scorer_checks_its_options_before_any_model_call(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="decides input, limit itself"):
        murgat_scorer(judge="embedded", input="y", limit=3)
    with pytest.raises(ValueError, match="precision_mode"):
        murgat_scorer(judge="embedded", precision_mode="loose")
    with pytest.raises(ValueError, match="without judge"):
        murgat_cited_qa(data=str(EXAMPLES), precision_mode="strict")
    with pytest.raises(ValueError, match="posthoc"):
        murgat_cited_qa(data=str(EXAMPLES), mode="posthoc")


def test_the_scorer_never_writes_over_an_input_it_did_not_write(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / INPUT).write_text('{"id": "x", "response": "mine"}\n')
    data = tmp_path / "one.jsonl"
    data.write_text(EXAMPLES.read_text().splitlines()[0] + "\n")
    log = _eval(murgat_cited_qa(data=str(data), media_root=str(MEDIA), judge=_replay_judge(tmp_path, ANSWERS),
                                out=str(mine)), Answers(ANSWERS), tmp_path / "logs", fail_on_error=False)
    assert log.status == "error" or any(s.error for s in read_eval_log(log.location).samples or [])
    assert (mine / INPUT).read_text() == '{"id": "x", "response": "mine"}\n'


def test_a_worldsense_file_through_the_task_keeps_its_fields(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "videos").mkdir(parents=True)
    for name in ("friday.mp4", "nasa_13013.mp4", "bikes.mp4"):
        shutil.copy(MEDIA / name, root / "videos" / name)
    answers = {"operators say the man": "An operator says he is in a bad humor (audio, 0:03-0:04).\nAnswer: B",
               "What name": "She calls out Hildy (audio, 0:00-0:01).\nAnswer: C"}
    log = _eval(murgat_cited_qa(data=f"worldsense:{WORLDSENSE / 'worldsense_rows.json'}", media_root=str(root),
                                judge=_replay_judge(tmp_path, answers)), Answers(answers), tmp_path / "logs")
    assert log.status == "success", log.error
    samples = {s.id: s for s in read_eval_log(log.location).samples or []}
    assert samples["0"].target == "B" and "(B) A bad humor" in samples["0"].input  # type: ignore[operator]
    rec = samples["0"].scores["murgat_scorer"].metadata["murgat"]["record"]  # type: ignore[index]
    assert rec["correct"] is True and rec["meta"]["item"]["task_type"] == "Human Emotions"
    assert rec["meta"]["item"]["audio_class"] == ["speech"]


def test_a_foreign_tasks_samples_import_when_they_name_their_media(tmp_path: Path) -> None:
    question = "According to the operator, what mood is the man in?"
    samples = [Sample(id="v1", input=question, choices=["happy", "bad humor"], target="B",
                      metadata={"video": "friday.mp4", "question": question, "category": "emotion"}),
               Sample(id="t1", input="What is 2+2?", target="4")]
    log = _eval(Task(dataset=samples), Answers(ANSWERS), tmp_path / "logs")
    out = tmp_path / "imported"
    assert main(["import", "inspect", log.location, "--out", str(out)]) == 1
    [item] = [json.loads(x) for x in (out / INPUT).read_text().splitlines()]
    assert (item["id"], item["media"], item["options"], item["gold"], item["category"]) == \
        ("v1", "friday.mp4", ["happy", "bad humor"], "B", "emotion")
    assert item["response"] == ANSWERS[question]
    assert "names no media" in json.loads((out / MARKER).read_text())["skipped"][0]["reason"]
    assert main(["import", "inspect", str(tmp_path / "nope.eval"), "--out", str(tmp_path / "x")]) == 2


def test_murgat_starts_without_importing_inspect_ai() -> None:
    code = ("import sys; from murgat.cli import build_parser; build_parser(); import murgat.core.datasets, "
            "murgat.core.worldsense, murgat.core.breakdown; print('inspect_ai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_import_never_writes_into_a_score_runs_folder_or_an_unwritable_place(tmp_path: Path, capsys) -> None:
    """Before: ``--out`` a score run's folder put another input under its records; an ``--out`` that cannot
    be made was a traceback."""
    judge = _replay_judge(tmp_path, ANSWERS)
    log = _eval(murgat_cited_qa(data=str(EXAMPLES), media_root=str(MEDIA), judge=judge), Answers(ANSWERS),
                tmp_path / "logs")
    run = tmp_path / "run"
    assert main(["score", str(EXAMPLES), "--media-root", str(MEDIA), "--judge", judge, "--out", str(run),
                 "--quiet", "--json"]) in (0, 1)
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    assert main(["import", "inspect", log.location, "--out", str(run)]) == 2
    assert "'score' run folder" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
    (tmp_path / "a-file").write_text("x")
    assert main(["import", "inspect", log.location, "--out", str(tmp_path / "a-file" / "sub")]) == 2
    err = capsys.readouterr().err
    assert "cannot" in err and "Traceback" not in err


class JudgeAnswers:
    """A judge model for inspect's ``judge`` role (mockllm): every sentence verifiable, one fact per
    sentence, every fact entailed; each answer reports 7 input and 1 output tokens."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        self.calls += 1
        prompt = messages[-1].text
        text = json.dumps({"facts": ["The answer says so."]}) if '"facts"' in prompt else "yes"
        out = ModelOutput.from_content(model="mockllm/judge", content=text)
        out.usage = ModelUsage(input_tokens=7, output_tokens=1, total_tokens=8)
        return out


def test_a_judge_model_role_answers_through_inspect_and_its_tokens_are_in_the_log(tmp_path: Path) -> None:
    judge = JudgeAnswers()
    role = get_model("mockllm/judge", custom_outputs=judge)
    data = tmp_path / "two.jsonl"
    data.write_text("".join(line + "\n" for line in EXAMPLES.read_text().splitlines()[:2]))
    # judge="inspect": the role's model (a task made before the eval cannot see its roles; from the
    # command line, --model-role judge=… alone is enough)
    log = _eval(murgat_cited_qa(data=str(data), media_root=str(MEDIA), judge="inspect"), Answers(ANSWERS),
                tmp_path / "logs", model_roles={"judge": role})
    assert log.status == "success", log.error
    usage = log.stats.model_usage
    assert judge.calls > 0 and usage["mockllm/judge"].input_tokens == 7 * judge.calls
    assert usage["mockllm/judge"].output_tokens == judge.calls and "mockllm/model" in usage  # both models, apart
    samples = read_eval_log(log.location).samples or []
    # each sample's usage holds the judge calls of its own item (both scored in one batch or not)
    assert sum(s.model_usage["mockllm/judge"].input_tokens for s in samples) == 7 * judge.calls
    assert all(s.model_usage["mockllm/judge"].input_tokens > 0 for s in samples)
    md = samples[0].scores["murgat_scorer"].metadata["murgat"]  # type: ignore[index]
    assert md["judge"] == "inspect:mockllm/judge"
    run = Path(log.location).with_suffix(".murgat")
    _same_figures(_metrics(log), json.loads((run / "summary.json").read_text()))
    from murgat.judges import make_judge

    with pytest.raises(ValueError, match="only inside an inspect eval"):  # murgat score cannot reach an inspect model
        make_judge("inspect:mockllm/judge")


def test_the_inner_batches_print_nothing_on_stderr(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Before: "FAILED: 1 of 1 item(s) undetermined" from a batch of one, during an eval that succeeded."""
    capfd.readouterr()
    data = tmp_path / "one.jsonl"
    data.write_text(EXAMPLES.read_text().splitlines()[0] + "\n")
    log = _eval(murgat_cited_qa(data=str(data), media_root=str(MEDIA), judge="embedded"), Answers(ANSWERS),
                tmp_path / "logs")
    assert log.status == "success", log.error
    err = capfd.readouterr().err
    assert "FAILED" not in err and "item(s)" not in err, err


def test_import_names_the_judge_the_log_was_scored_with(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judge = _replay_judge(tmp_path, ANSWERS)
    data = tmp_path / "one.jsonl"
    data.write_text(EXAMPLES.read_text().splitlines()[0] + "\n")
    log = _eval(murgat_cited_qa(data=str(data), media_root=str(MEDIA), judge=judge), Answers(ANSWERS), tmp_path / "logs")
    capsys.readouterr()
    assert main(["import", "inspect", log.location, "--out", str(tmp_path / "imported")]) == 0
    out = capsys.readouterr().out
    assert f"--judge {judge} " in out and "JUDGE" not in out
    plain = _eval(murgat_cited_qa(data=str(data), media_root=str(MEDIA)), Answers(ANSWERS), tmp_path / "logs2")
    assert main(["import", "inspect", plain.location, "--out", str(tmp_path / "imported2")]) == 0
    assert "--judge JUDGE" in capsys.readouterr().out  # no judge recorded: the user names one


def test_the_standard_error_is_inspects_and_undefined_below_two_values() -> None:
    from murgat.integrations.batching import stderr_of

    assert stderr_of([0.5]) is None and stderr_of([]) is None
    assert stderr_of([0.0, 1.0]) == pytest.approx(0.5)  # sd 0.7071 / sqrt(2)
    assert stderr_of([0.0, 1.0, 1.0], ["a", "b", "b"]) == pytest.approx(math.sqrt(2 * ((2 / 3) ** 2 + (2 / 3) ** 2)) / 3)
    assert stderr_of([0.0, 1.0], ["a", "a"]) is None  # one cluster: no spread to speak of


SITE_NO_NETWORK = '''
import socket
_connect = socket.socket.connect
def _refuse(self, address):
    if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "::1", "localhost"):
        raise OSError("network cut by the test (sitecustomize)")
    return _connect(self, address)
socket.socket.connect = _refuse
'''


@pytest.mark.slow
def test_the_documented_cli_example_runs_with_the_network_cut(tmp_path: Path) -> None:
    """The command of docs/integrations/inspect_ai.md, as written (paths made absolute), with every
    connection off this machine refused: it succeeds and its MURGAT-S is ``murgat score``'s."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE_NO_NETWORK)
    doc = (ROOT / "docs" / "integrations" / "inspect_ai.md").read_text()
    [command] = [line.strip() for line in doc.splitlines() if line.strip().startswith("inspect eval murgat/murgat_cited_qa")
                 and "murgat/replay" in line]
    command = command.replace("examples/", f"{ROOT}/examples/")
    env = {**__import__("os").environ, "PYTHONPATH": f"{site}:{ROOT}", "HF_HUB_OFFLINE": "1",
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "TIKTOKEN_CACHE_DIR": str(tmp_path / "tk"),
           "XDG_DATA_HOME": str(tmp_path / "xdg"), "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
    inspect_cli = Path(sys.executable).with_name("inspect")
    done = subprocess.run(command.replace("inspect eval", f"{inspect_cli} eval", 1) + f" --log-dir {tmp_path / 'logs'}",
                          shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and not any(s.error for s in log.samples or [])
    assert not (tmp_path / "tk").exists() or not any((tmp_path / "tk").iterdir())  # no encoding fetched
    direct = murgat_score(str(EXAMPLES), judge="embedded", media_root=str(MEDIA), out=str(tmp_path / "direct"))
    assert _metrics(log)["murgat_s"] == direct.summary["murgat_s"]["value"]
    assert _metrics(log)["answer_accuracy"] == direct.summary["accuracy"]["value"]
