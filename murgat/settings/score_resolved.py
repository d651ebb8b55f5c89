"""The resolved configuration of one ``murgat score`` run (written to ``config.json``): the judging
settings every command shares (:class:`~murgat.judging.config.JudgingConfig`) and the metric's own, and
:func:`score_config`, the one builder from :class:`~murgat.settings.score.ScoreSettings` (``murgat score`` and
``murgat judge check --stage entail`` resolve a judge's configuration with it)."""

from __future__ import annotations

import sys
from importlib.metadata import version
from typing import Any, Literal

import pydantic
from pydantic import BaseModel, Field

from murgat import __version__, prompts
from murgat.core.boxes import BoxConvention, parse_frame_size
from murgat.engine.errors import SettingsError
from murgat.engine.fingerprint import derive
from murgat.judges import parse_options  # the one list of options that never change answers
from murgat.judging.config import JudgingConfig
from murgat.settings.score import DEFAULT_MAX_CITATIONS_PER_FACT, DEFAULT_MAX_EVIDENCE_S, SCORE_NAMES, ScoreSettings


class JudgeSpec(BaseModel):
    """A judge as named on the command line."""

    spec: str = Field(description="provider[:model]")
    options: dict[str, str] = Field(default_factory=dict, description="-J key=value options")


class ScoreConfig(JudgingConfig):
    """Every setting that changes scores. Resuming a run with different values is refused."""

    judge_verify: JudgeSpec
    judge_decompose: JudgeSpec
    judge_entail: JudgeSpec
    judge_decontextualize: JudgeSpec | None = Field(default=None, description="None: no decontextualization step")
    verify_variant: Literal["simple", "cot", "json"] = "simple"
    decompose_variant: Literal["sentence", "response", "single-pass"] = "sentence"
    entail_variant: Literal["simple", "json"] = "simple"
    precision_mode: Literal["alce", "strict", "individual"] = "alce"
    empty_policy: Literal["zero", "exclude"] = "zero"
    decompose_context_sentences: int = Field(
        default=3, ge=0, description="earlier sentences shown to the decomposer for resolving references (bounded, "
        "so prompt size and memory stay linear in response length)")
    decompose_context_chars: int = Field(default=1500, ge=0, description="character cap on that context (its end is kept)")
    max_response_chars: int = Field(
        default=200_000, ge=1, description="longer responses get an error record instead of being scored")
    max_citations_per_fact: int = Field(
        default=DEFAULT_MAX_CITATIONS_PER_FACT, ge=1, description="a fact citing more segments is not judged: it is "
        "undetermined with that reason (precision asks up to 2 questions per citation, each carrying the evidence)")
    max_evidence_s: float = Field(
        default=DEFAULT_MAX_EVIDENCE_S, gt=0, description="most seconds of media (segments after padding, summed) "
        "one entailment request may carry; a fact whose cited evidence is longer is undetermined with that reason")
    repeats: int = Field(default=1, ge=1, description="times each yes/no question is asked (repeat r with seed +r); the "
                         "majority is the verdict (murgat.commands.score.repeats)")
    boxes: BoxConvention = Field(default_factory=BoxConvention,
                                 description="how boxes in citations are read (--box-units/--box-order/--box-frame-size)")
    bootstrap_resamples: int = 2000
    seed: int = 0
    cluster_by_video: bool = False
    attributed_threshold: float = 0.5
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    versions: dict[str, Any] = Field(default_factory=dict)


def _versions() -> dict[str, Any]:
    # numpy's version from its metadata: importing numpy here would put ~0.1 s before the first request
    return {"murgat": __version__, "numpy": version("numpy"), "pydantic": pydantic.__version__,
            "python": sys.version.split()[0]}


def score_config(s: ScoreSettings) -> ScoreConfig:
    """The scoring configuration these settings make: each setting at its place in
    :data:`~murgat.settings.score.SCORE_NAMES`, then what the settings imply (the stages' judges,
    the box convention, the prompts' hashes)."""
    try:
        opts = parse_options(s.judge_option)
        frame = parse_frame_size(s.box_frame_size) if s.box_frame_size else None
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    specs = {f"judge_{stage}": JudgeSpec(spec=getattr(s, f"judge_{stage}") or s.judge, options=opts)
             for stage in ("verify", "decompose", "entail")}
    contextual = s.decontextualize or s.judge_decontextualize
    used = [f"verify_{s.verify_variant}", "decompose_sentence", "decompose_response", "decompose_single_pass",
            f"entail_{s.entail_variant}", f"entail_{s.entail_variant}_question", "decontextualize"]
    return derive(ScoreConfig, s, SCORE_NAMES, extra={
        **specs, "generate": s.generate_config(),
        "judge_decontextualize": JudgeSpec(spec=s.judge_decontextualize or s.judge, options=opts) if contextual else None,
        "boxes": BoxConvention(units=s.box_units, order=s.box_order, frame_size=frame),
        "prompt_hashes": {n: prompts.template_hash(n) for n in used}, "versions": _versions()})
