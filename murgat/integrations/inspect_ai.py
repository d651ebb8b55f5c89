"""murgat in inspect_ai: the task ``murgat_cited_qa``, the solver ``murgat_media`` and the scorer
``murgat_scorer`` (extra ``murgat[inspect]``; registered for inspect as ``murgat/…``).

::

    inspect eval murgat/murgat_cited_qa -T data=examples/responses.jsonl -T media_root=examples/media \\
        --model google/gemini-2.5-flash --model-role judge=openai/gpt-4o

**The task** reads any dataset murgat reads (:func:`murgat.core.datasets.load_dataset`: murgat
JSONL/JSON, CSV, HF folders, Video-MMMU, NExT-GQA, WorldSense) and asks the model under test
murgat's own generation prompt (:func:`murgat.judging.answering.generate_prompt`; ``mode`` ``cite``
or ``base``), so any inspect provider can be the model whose citations are checked. The media is
attached by :func:`murgat_media` when the sample runs (resolved inside ``media_root`` as ``murgat
score`` resolves it, converted once into murgat's media cache), as ``media``:

``video`` (default)
    the file itself as :class:`~inspect_ai.model.ContentVideo` when inspect takes its container
    (mp4, mov, mpeg: picture and sound in one file, as murgat's own Gemini generation sends it);
    another container (webm, mkv, …) becomes a picture-only mp4 plus its sound as 16 kHz WAV
    :class:`~inspect_ai.model.ContentAudio`; an audio-only file is sent as audio;
``video+audio``
    a picture-only mp4 and the sound as WAV, for providers that take a video's frames but not its sound;
``frames+audio``
    frames at ``fps`` (at most ``max_frames``, evenly spread), each after a text label with its
    time (``(frame at 3.00 s)``, as murgat's OpenAI-compatible client sends them), then the WAV —
    for providers that take images and audio;
``frames``
    the labelled frames only, for image-only providers (the model then cannot hear: its audio
    citations are checked against sound it never got, which is what MURGAT-S should show).

**The scorer** scores each sample's final output with MURGAT-S through :func:`murgat.score` — the
same judges, settings, response cache and run folder as ``murgat score`` — and writes that run
folder beside the log (``LOG.murgat/``: ``responses.jsonl`` is the input, the rest is a normal score
run: ``murgat view``, ``summarize``, ``export``, ``calibrate`` read it; ``murgat score LOG.murgat
--media-root ROOT --judge OTHER --out RUN2`` rescores the same outputs with another judge). A task
other than ``murgat_cited_qa`` can use the scorer when its samples' metadata name their media
(:mod:`murgat.commands.imports.samples`); pass ``media_root=`` then.

*Batching.* inspect scores samples one at a time, concurrently, while murgat's command scores a
file of items and resumes a folder. So the scorer group-commits: a sample's scoring waits for the
one murgat run in progress (a lock), and whoever takes the lock next scores every sample that
arrived meanwhile in one ``murgat.score`` call (after ``batch_wait`` seconds, so samples finishing
together share a call). Each call rewrites ``responses.jsonl`` with every sample so far and
resumes the folder: finished items are skipped, judge answers are cached, ``summary.json`` and
``report.html`` always cover every sample. The cost of a call beyond its new items is linear in
the items so far (planning, summary, report), so a large eval with samples trickling in one by one
pays O(n²/batch) bookkeeping; a larger ``batch_wait`` trades latency for fewer calls.

*Metrics.* Each sample's score value is its MURGAT-S (NaN where undefined: inspect counts it
unscored); its explanation lists every sentence and fact with citations and verdicts, and its metadata
the record (judge answers' text left to the run folder). The metric :func:`murgat_metrics` rebuilds
the records and summarises them with murgat's own :func:`murgat.core.metric.summarize_results` and
the run's settings: ``murgat_s`` with ``murgat_s_stderr``, ``coverage``, ``precision``, ``recall``,
``f1``, ``answer_accuracy`` and ``attributed_accuracy`` equal ``summary.json`` (which keeps the
bootstrap CIs and the counts); an undefined figure is NaN, never 0. With several epochs each epoch's
answer is its own item (``ID#2``), and the metric takes every epoch (``scores="unreduced"``).

*The judge* is ``judge=`` (a murgat judge) or, without it, the model of inspect's ``judge`` role
(:mod:`murgat.integrations.inspect_judge`); ``murgat/replay`` is the offline model under test
(:mod:`murgat.integrations.inspect_models`).
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ContentAudio, ContentImage, ContentText, ContentVideo, get_model, model_roles
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from inspect_ai.util import materialize_media

from murgat.commands.imports.samples import KEY, item_of_sample, media_root_of, sample_metadata
from murgat.core.inputs import InputError, resolve_media
from murgat.core.schema import Item, ResponseResult
from murgat.integrations.batching import SUMMARY_OPTIONS, Batcher, explain, metric_values, strip_raw
from murgat.integrations.inspect_judge import BRIDGE, PROVIDER, Bridge
from murgat.integrations.inspect_judge import register as register_inspect_judge
from murgat.integrations.inspect_models import ReplayAnswers  # registers murgat/replay with inspect

__all__ = ["ReplayAnswers", "murgat_cited_qa", "murgat_media", "murgat_metrics", "murgat_scorer"]
from murgat.integrations.media_parts import MediaPiece, check_media_as, media_pieces

#: score options the scorer decides itself (where to read and write, what to select)
SCORER_OWNS = frozenset({"input", "out", "media_root", "ids", "limit", "overwrite", "dry_run", "print_json", "quiet"})


# ---------------------------------------------------------------------------------------------- task


@task
def murgat_cited_qa(data: str, media_root: str | None = None, mode: str = "cite", media: str = "video",
                    fps: float = 1.0, max_frames: int = 64, judge: str | None = None, out: str | None = None,
                    **score_options: Any) -> Task:
    """Questions of ``data`` answered by the model under test with murgat's prompt (``mode``: ``cite``
    asks for citations, ``base`` does not), the media attached as ``media`` (see the module
    docstring); with ``judge`` the answers are scored by :func:`murgat_scorer` (``score_options``:
    any ``murgat score`` option, e.g. ``precision_mode="strict"``, ``judge_option=["k=v"]``).
    Without ``judge`` the log holds the answers only: ``murgat import inspect`` then scores them."""
    from murgat.core.datasets import dataset_path, load_dataset
    from murgat.core.inputs import media_roots
    from murgat.judging.answering import generate_prompt

    if mode not in ("cite", "base"):
        raise ValueError(f"mode {mode!r}: the task asks 'cite' or 'base' (a post-hoc rewrite needs its base answer: "
                         "murgat generate --mode posthoc)")
    check_media_as(media)
    role = judge == PROVIDER or (judge is None and "judge" in model_roles())  # roles are set before eval makes a task
    if judge not in (None, PROVIDER) and "judge" in model_roles():
        raise ValueError(f"judge={judge!r} and the model role 'judge' both name the judge: give one")
    if judge is None and not role and score_options:
        raise ValueError(f"score options {sorted(score_options)} given without judge= (or a 'judge' model role)")
    items = load_dataset(data)
    root = media_roots(media_root, dataset_path(data))[0]  # where murgat generate/score would look
    samples = [Sample(id=it.id, input=generate_prompt(it, mode), target=it.gold or "",  # type: ignore[arg-type]
                      metadata=sample_metadata(it, root, mode)) for it in items]
    scorers = [murgat_scorer(judge=None if role else judge, out=out, **score_options)] if judge or role else None
    return Task(dataset=MemoryDataset(samples, name=dataset_path(data).stem, location=data),
                solver=[murgat_media(media=media, fps=fps, max_frames=max_frames), generate()], scorer=scorers,
                metadata={"murgat": {"data": data, "media_root": str(root), "mode": mode, "media": media}})


# -------------------------------------------------------------------------------------------- solver


async def _content(piece: MediaPiece) -> Any:
    if piece.kind == "text":
        return ContentText(text=piece.text or "")
    if piece.kind == "image":
        return ContentImage(image="data:image/jpeg;base64," + base64.b64encode(piece.data or b"").decode("ascii"))
    uri = await materialize_media(str(piece.path))
    if piece.kind == "video":
        return ContentVideo(video=uri, format=piece.format)  # type: ignore[arg-type]
    return ContentAudio(audio=uri, format=piece.format)  # type: ignore[arg-type]


@solver
def murgat_media(media: str = "video", fps: float = 1.0, max_frames: int = 64) -> Solver:
    """Put the sample's media before its prompt (the user message), as ``media`` says; an item whose
    media is missing, unreadable or outside its media root fails with that reason."""
    check_media_as(media)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        info = state.metadata.get(KEY) or {}
        item = Item.model_validate({**info.get("item", {}), "id": str(state.sample_id)})
        root = media_root_of(state.metadata)
        where = f"item {item.id}"
        try:
            path = resolve_media(item, root)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from exc
        if path is None:
            raise InputError(f"{where}: media {item.media!r} not found in {root}")
        try:
            pieces = await anyio.to_thread.run_sync(media_pieces, path, media, fps, max_frames)
        except Exception as exc:  # a corrupt file, a missing ffmpeg: say which item and why
            raise InputError(f"{where}: {path}: {exc}") from exc
        prompt = state.user_prompt
        contents = [await _content(p) for p in pieces]
        prompt.content = [*contents, ContentText(text=prompt.text)]
        return state

    return solve


# -------------------------------------------------------------------------------------------- scorer


#: the records each scorer scored in this process, by run folder and item id: a sample whose MURGAT-S is
#: undefined has the value NaN, which inspect leaves out of the scores a metric is given, yet its answer
#: counts in the answer accuracy (as in ``murgat score``)
_SCORED: dict[str, dict[str, dict[str, Any]]] = {}


@metric(scores="unreduced")
def murgat_metrics() -> Metric:
    """MURGAT-S with its standard error, coverage, precision, recall, F1, the answer accuracy and the
    strict attributed accuracy: murgat's own run summary of the records behind the scores
    (:func:`~murgat.integrations.batching.metric_values`), so each equals ``summary.json``."""

    def compute(scores: list[SampleScore]) -> Value:
        records: dict[str, dict[str, Any]] = {}
        opts: dict[str, Any] = {}
        for s in scores:
            md = (s.score.metadata or {}).get(KEY)
            if isinstance(md, dict) and "record" in md:
                records.update(_SCORED.get(str(md.get("run")), {}))
                records[str(md["record"]["id"])] = md["record"]
                opts = md.get("summary_options") or opts
        return metric_values([ResponseResult.model_validate(r) for r in records.values()], opts)

    return compute


def scorer_folder(explicit: str | None) -> tuple[Path, dict[str, Any]]:
    """Where the scorer writes its run: ``out`` when given, else beside the log being written."""
    try:
        from inspect_ai.log._samples import sample_active  # where the running sample's log is written
        active = sample_active()
    except ImportError:  # pragma: no cover - an inspect_ai that moved it: out= is then needed
        active = None
    made_by: dict[str, Any] = {"made_by": "murgat_scorer"}
    if active is not None:
        made_by.update(log=str(active.log_location), eval_id=active.eval_id, task=active.task, model=active.model)
    if explicit:
        return Path(explicit), made_by
    loc = str(active.log_location) if active is not None else ""
    if not loc or "://" in loc:
        raise ValueError("murgat_scorer: no local log is being written (inspect score re-scores a log; a remote "
                         "log_dir): pass out=FOLDER for the murgat run folder")
    log = Path(loc).resolve()
    return log.with_name(log.name.removesuffix(".eval").removesuffix(".json") + ".murgat"), made_by


def _judge_of(judge: str | None) -> tuple[str, Bridge | None]:
    """The ``murgat score`` judge of a scorer: ``judge`` as given, else the model of inspect's ``judge``
    role as ``inspect:MODEL`` with the bridge its calls go through (:mod:`murgat.integrations.inspect_judge`)."""
    if judge not in (None, PROVIDER):
        return str(judge), None
    model = get_model(role="judge", required=True)
    register_inspect_judge()
    return f"{PROVIDER}:{model}", Bridge(asyncio.get_running_loop(), model)


@scorer(metrics=[murgat_metrics()])
def murgat_scorer(judge: str | None = None, out: str | None = None, media_root: str | None = None,
                  batch_wait: float = 0.5, judge_cache: bool = False, **score_options: Any) -> Scorer:
    """MURGAT-S of each sample's output (see the module docstring): ``judge`` and ``score_options``
    are ``murgat score``'s (``judge_option=["k=v"]``, ``precision_mode``, ``cache``, …); without
    ``judge`` the model of inspect's ``judge`` role judges (``--model-role judge=…``; ``judge_cache``:
    inspect's cache for its calls); ``out``: the run folder (default: beside the log,
    ``LOG.murgat``); ``media_root``: where media names resolve (default: the one the task recorded in
    each sample)."""
    from murgat.settings.score import ScoreSettings

    clash = sorted(set(score_options) & SCORER_OWNS)
    if clash:
        raise ValueError(f"murgat_scorer decides {', '.join(clash)} itself (out=, media_root= are its own arguments)")
    # the options are checked now, not at the first sample: a typo fails before any model call
    settings = ScoreSettings.model_validate({"input": "-", "out": "-", "judge": judge or PROVIDER, **score_options})
    summary_options = {k: getattr(settings, k) for k in SUMMARY_OPTIONS}
    batchers: dict[Path, Batcher] = {}
    resolved: list[tuple[str, Bridge | None]] = []

    async def score(state: TaskState, target: Target) -> Score:
        if not resolved:
            resolved.append(_judge_of(judge))
        spec, bridge = resolved[0]
        if bridge is not None and judge_cache:
            bridge.cache = True
        folder, made_by = scorer_folder(out)
        root = media_root or media_root_of(state.metadata)
        choices = [c.value for c in state.choices] if state.choices else None
        item = item_of_sample(state.sample_id, state.epoch, state.metadata, target.text, choices,
                              state.output.completion if state.output else "", str(state.model))
        b = batchers.get(folder)
        if b is None:
            b = batchers[folder] = Batcher(folder, root, spec, dict(score_options), batch_wait,
                                           {**made_by, "judge": spec})
        elif b.media_root != root:
            raise ValueError(f"item {item.id}: media root {root} differs from {b.media_root}, the one of the run "
                             f"{folder} (pass media_root=)")
        if bridge is not None:  # the judge's calls for this item are booked to this sample (inspect_judge, *Two event loops*)
            BRIDGE.set(bridge)
            bridge.contexts[item.id] = contextvars.copy_context()
        try:
            rec = await b.score(item)
        finally:
            if bridge is not None:
                bridge.contexts.pop(item.id, None)
        doc = strip_raw(rec.model_dump(mode="json"))
        _SCORED.setdefault(str(folder), {})[rec.id] = doc
        return Score(value=float("nan") if rec.scores.murgat_s is None else float(rec.scores.murgat_s),
                     answer=rec.predicted_option, explanation=explain(rec),
                     reason="scoring_failed" if rec.error else None,
                     metadata={KEY: {"run": str(folder), "id": rec.id, "judge": spec,
                                     "summary_options": summary_options, "record": doc}})

    return score
