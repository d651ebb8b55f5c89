"""The keyword arguments of the Python API (``murgat.score(...)`` and friends), typed: one ``TypedDict`` per
run command, its keys and value types those of the command's settings model, so that a type checker refuses a
misspelt option or a wrong value before anything runs (pydantic would refuse it too, but only at run time).

Written out rather than derived because a type checker reads only what is written; ``tests/test_api_types.py``
holds each one equal to its model, field by field. Each settings group of :mod:`murgat.engine.options` (``Folder``,
``Requests``, ``RunOn``, …) has one ``TypedDict`` of the same name here, and each command's ``TypedDict`` is made of
the same groups as its model, so a field shared by several commands is declared once. Where the API takes more
than the model's own type (the model's validator or :func:`murgat.api` converts it), the difference is declared
here: :data:`PATHS` take ``os.PathLike`` objects too, and :data:`WIDER` lists the other extra types accepted.
"""

from __future__ import annotations

import os
from typing import Literal, TypeAlias, TypedDict

#: a path given as text or as a ``pathlib.Path`` (the API turns it into text)
StrPath: TypeAlias = str | os.PathLike[str]

#: fields that name a file or folder: the API accepts ``os.PathLike`` objects for them
PATHS = frozenset({"asr_model", "base", "baseline", "cache", "from_", "gold", "media_root", "out", "record"})

#: other values the API accepts beyond the model's annotation (a list for a comma-separated field; None for a
#: cap, meaning its default), by field name: what each settings model's validators turn into the field's type
WIDER: dict[str, tuple[object, ...]] = {
    "ids": (list[str], tuple[str, ...]), "efforts": (list[str], tuple[str, ...]),
    "max_citations_per_fact": (type(None),), "max_evidence_s": (type(None),)}


# ----- the settings groups of murgat.engine.options, one TypedDict each -----

class JudgeOption(TypedDict, total=False):
    """:class:`murgat.engine.options.JudgeOption`."""

    judge_option: list[str]


class ModelOption(TypedDict, total=False):
    """:class:`murgat.engine.options.ModelOption`."""

    model_option: list[str]


class Frames(TypedDict, total=False):
    """:class:`murgat.engine.options.Frames`."""

    fps: float


class EvidenceText(TypedDict, total=False):
    """:class:`murgat.engine.options.EvidenceText`."""

    evidence_text: bool


class Transcripts(TypedDict, total=False):
    """:class:`murgat.engine.options.Transcripts`."""

    asr_model: StrPath | None


class Place(TypedDict, total=False):
    """:class:`murgat.engine.options.Place`."""

    media_root: StrPath | None
    allow_media_outside_root: bool


class Folder(TypedDict, total=False):
    """:class:`murgat.engine.options.Folder`."""

    out: StrPath
    cache: StrPath | None
    overwrite: bool
    retry_errors: bool


class Pace(TypedDict, total=False):
    """:class:`murgat.engine.options.Pace` (a command's own default aside: the type is the same)."""

    item_concurrency: int | None


class Undetermined(TypedDict, total=False):
    """:class:`murgat.engine.options.Undetermined`."""

    max_undetermined: float | None


class Json(TypedDict, total=False):
    """:class:`murgat.engine.options.Json`."""

    print_json: bool


class Output(Json, total=False):
    """:class:`murgat.engine.options.Output`."""

    quiet: bool


class Requests(TypedDict, total=False):
    """:class:`murgat.engine.options.Requests` (``ChainRole`` and ``GenerateRole`` change two of its
    defaults, not its fields)."""

    temperature: float
    max_tokens: int
    timeout: float
    retries: int
    backoff_max: float
    max_retry_time: float
    concurrency: int
    rpm: float | None
    tpm: float | None


class Effort(TypedDict, total=False):
    """:class:`murgat.engine.options.Effort`."""

    effort: str | None


class Selection(TypedDict, total=False):
    """:class:`murgat.engine.options.Selection`."""

    limit: int | None
    ids: str | list[str] | tuple[str, ...] | None


class ResponseCap(TypedDict, total=False):
    """:class:`murgat.engine.options.ResponseCap`."""

    max_response_chars: int


class Stats(TypedDict, total=False):
    """:class:`murgat.engine.options.Stats`."""

    bootstrap: int
    seed: int


class GroupBy(TypedDict, total=False):
    """:class:`murgat.engine.options.GroupBy`."""

    by: list[str]


class Probes(TypedDict, total=False):
    """:class:`murgat.engine.options.Probes`."""

    probes: Literal["auto", "on", "off", "require"]
    probe_seed: int


class RunOn(TypedDict, total=False):
    """:class:`murgat.engine.options.RunOn`."""

    run_on: Literal["local", "ray"]
    ray_address: str | None
    ray_cpus: int | None
    ray_group_size: int
    ray_task_cpus: float | None
    ray_task_retries: int


# ----- the commands: the same groups as their settings models, then their own fields -----

class ScoreOptions(JudgeOption, Frames, EvidenceText, Transcripts, Place, Folder, Pace, Undetermined, Output, Requests,
                   Effort, Selection, ResponseCap, Stats, GroupBy, Probes, RunOn, total=False):
    """``murgat.score(...)``'s keyword arguments: the fields of
    :class:`~murgat.settings.score.ScoreSettings` (its positional ``input`` aside)."""

    judge: str
    judge_verify: str | None
    judge_decompose: str | None
    judge_entail: str | None
    judge_decontextualize: str | None
    decontextualize: bool
    verify_variant: Literal["simple", "cot", "json"]
    decompose_variant: Literal["sentence", "response", "single-pass"]
    entail_variant: Literal["simple", "json"]
    precision_mode: Literal["alce", "strict", "individual"]
    empty_policy: Literal["zero", "exclude"]
    pad: float
    max_frames: int
    visual_as: Literal["frames", "clip"]
    audio_point_pad: float
    end_tolerance: float
    box_units: Literal["norm", "1000", "px"]
    box_order: Literal["xyxy", "yxyx"]
    box_frame_size: str | None
    ocr_fps: float
    sound_events: bool
    cluster_by_video: bool
    attributed_threshold: float
    gold: StrPath | None
    dry_run: bool
    record: StrPath | None
    modality_check: int
    max_citations_per_fact: int | None
    max_evidence_s: float | None
    repeats: int
    decompose_context: int
    decompose_context_chars: int
    copy_media: bool
    save_evidence: bool


class LabellingOptions(JudgeOption, Frames, EvidenceText, Place, Folder, Pace, Output, Requests, Effort, Selection,
                       ResponseCap, Stats, GroupBy, Probes, RunOn, total=False):
    """What ``murgat.faithfulness(...)`` and ``murgat.reflect(...)`` share: the fields of
    :class:`~murgat.settings.faithfulness.Labelling`."""

    variant: Literal["vanilla", "grounding", "grounding+rationale"]
    granularity: Literal["chain", "step"]
    max_frames: int


class FaithfulnessOptions(LabellingOptions, Undetermined, total=False):
    """``murgat.faithfulness(...)``'s keyword arguments: the fields of
    :class:`~murgat.settings.faithfulness.FaithfulnessSettings` (its positional ``input`` aside)."""

    judge: str
    segmentation: Literal["sentences", "judge"]


class ReflectOptions(LabellingOptions, ModelOption, total=False):
    """``murgat.reflect(...)``'s keyword arguments: the fields of
    :class:`~murgat.settings.reflect.ReflectSettings` (its positional ``data`` aside)."""

    model: str
    detector: str
    detector_option: list[str]
    detector_prompt: Literal["detect", "label"]
    judge: str | None
    k: int
    max_regenerations: int
    max_steps: int
    from_: StrPath | None
    mode: Literal["base", "cite"]


class ProgramOptions(JudgeOption, Frames, EvidenceText, Transcripts, Place, Folder, Pace, Output, Requests, Effort,
                     Selection, ResponseCap, Probes, RunOn, total=False):
    """``murgat.program(...)``'s keyword arguments: the fields of
    :class:`~murgat.settings.program.ProgramSettings` (its positional ``data`` aside)."""

    variant: str
    planner: str
    executor: str | None
    judge: str | None
    planner_option: list[str]
    executor_option: list[str]
    find: Literal["model", "transcript", "ocr"]
    no_check: bool
    check_retries: int
    replan: int
    max_ops: int
    program_timeout: float
    max_frames: int
    score: bool
    baseline: StrPath | None


class GeneratingOptions(ModelOption, Frames, Place, Folder, Pace, Output, Requests, Selection, ResponseCap, RunOn,
                        total=False):
    """What ``murgat.generate(...)`` and ``murgat.sweep(...)`` share: the fields of
    :class:`~murgat.settings.generate.Generating`."""

    model: str
    mode: Literal["base", "cite", "posthoc"]
    base: StrPath | None
    max_frames: int


class GenerateOptions(GeneratingOptions, Effort, total=False):
    """``murgat.generate(...)``'s keyword arguments: the fields of
    :class:`~murgat.settings.generate.GenerateSettings` (its positional ``data`` aside)."""


class SweepOptions(GeneratingOptions, JudgeOption, Probes, total=False):
    """``murgat.sweep(...)``'s keyword arguments: the fields of
    :class:`~murgat.settings.sweep.SweepSettings` (its positional ``data`` aside)."""

    efforts: str | list[str] | tuple[str, ...]
    judge: str
