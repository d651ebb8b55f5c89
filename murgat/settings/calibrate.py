"""``CalibrateSettings``: every setting of ``murgat calibrate`` (judge runs against human labels, and the
judge's figures corrected with them, PPI++)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

import murgat.engine.options as o


class Corrected(BaseModel):
    """How the corrected figures (prediction-powered inference) are estimated, or planned."""

    title: ClassVar[str] = "corrected figures (prediction-powered inference, PPI++)"

    # no bounds on --alpha and --half-width here: the command says what is wrong with the value given (exit 2)
    alpha: float = Field(0.05, description="1 − confidence of the corrected intervals (0.05: 95%)")
    cluster_by_video: bool = Field(False, description="whole videos are the sampling unit (always so for a sample "
                                                      "drawn with --by video)")
    ci: Literal["normal", "bootstrap"] = Field(
        "normal", description="normal-approximation intervals, or a bootstrap of the whole estimator (--bootstrap "
                              "resamples)")
    assume_random: bool = Field(False, description="compute corrected figures from labels that record no random "
                                                   "sampling design (murgat annotate --sample) and say so in the output")
    plan: bool = Field(False, description="with --human PILOT: how many labelled responses give a CI of "
                                          "±--half-width, from the pilot's variances (nothing else is computed)")
    half_width: float = Field(0.05, description="the CI half-width --plan aims at")
    strata: str | None = Field(None, description="with --plan: plan a stratified sample by this item field, labels "
                                                 "per stratum by Neyman allocation (default: the pilot's strata when "
                                                 "it was drawn with murgat annotate --strata)",
                               json_schema_extra={"metavar": "FIELD"})
    prior_sd: float = Field(0.5, gt=0, description="with --plan --strata: the standard deviation of human − judge "
                                                   "assumed in a stratum where the pilot has under two labels (or "
                                                   "they all agree), and everywhere without --human")
    attributed_threshold: float | None = Field(None, ge=0, le=1, description="MURGAT-S threshold of attributed "
                                                                             "accuracy (default: the run's, from "
                                                                             "summary.json)")


class CalibrateSettings(o.Settings, o.Output, Corrected):
    """``murgat calibrate --human LABELS [--run RUN ...] [--task T] [--out DIR] [options]``."""

    command: ClassVar[str] = "calibrate"

    human: list[str] = Field(default_factory=list, description="label JSONL (murgat schema) or faithscore:PATH; once for every run (the "
                                         "same responses, several judges), or once per --run in the same order (each "
                                         "run's own responses, e.g. model A vs model B: their difference is corrected "
                                         "too); required except for --plan --strata (a plan from a prior)")
    run: list[str] = Field(default_factory=list, description="a murgat score run folder (or, with --task "
                                                             "faithfulness, a murgat faithfulness folder); repeatable")
    task: Literal["attribution", "faithfulness"] = Field(
        "attribution", description="attribution: MURGAT-S stages; faithfulness: step counts (ICC) and step labels")
    out: str | None = Field(None, description="folder for calibration.json and PNG plots")
    bootstrap: int = Field(10_000, ge=1, le=100_000, description="bootstrap resamples (correlations; --ci bootstrap)")
    seed: int = Field(0, ge=0, description="seed of the bootstrap resampling")
    similarity: Literal["lexical", "embedding"] = Field(
        "lexical", description="fact matching by word overlap (lexical) or MiniLM embeddings")
    threshold: float = Field(0.5, ge=0, le=1, description="minimum similarity for two facts to match")
    rules_baseline: bool = Field(False, description="also score murgat's rule-based verifier on the labels")
    faithscore_polarity: Literal["data", "readme"] = Field(
        "data", description="how to read FaithScore's 0/1 labels (see human_eval.labels.load_faithscore)")
