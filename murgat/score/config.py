"""The resolved configuration of one ``murgat score`` run (written to ``config.json``): the judging
settings every command shares (:class:`~murgat.judging.config.JudgingConfig`) and the metric's own."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from murgat.boxes import BoxConvention
from murgat.judging.config import JudgingConfig

#: request caps (``--max-citations-per-fact``, ``--max-evidence-s``): a sentence with 10,000
#: citations made 10,003 calls and one 834 MB request before these existed
DEFAULT_MAX_CITATIONS_PER_FACT = 16
DEFAULT_MAX_EVIDENCE_S = 900.0

#: judge options that change how answers are fetched or billed, never what they are
TRANSPORT_OPTIONS = frozenset({"delay_s", "log", "api_key", "price_in", "price_out", "cleanup", "upload_timeout_s"})


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
                         "majority is the verdict (murgat.score.repeats)")
    boxes: BoxConvention = Field(default_factory=BoxConvention,
                                 description="how boxes in citations are read (--box-units/--box-order/--box-frame-size)")
    bootstrap_resamples: int = 2000
    seed: int = 0
    cluster_by_video: bool = False
    attributed_threshold: float = 0.5
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    versions: dict[str, Any] = Field(default_factory=dict)

    def scoring_fingerprint(self) -> dict[str, Any]:
        """The part of the config that must match for a resumed run to be consistent."""
        d = self.model_dump(exclude={"versions", "bootstrap_resamples", "seed", "cluster_by_video",
                                     "attributed_threshold", "max_response_chars"})
        d["generate"] = self.generate.cache_fields()
        if self.boxes.is_default():
            d.pop("boxes")  # runs from before box options existed resume with the same fingerprint
        # the request caps enter only when changed: runs made before they existed still resume
        if self.max_citations_per_fact == DEFAULT_MAX_CITATIONS_PER_FACT:
            d.pop("max_citations_per_fact", None)
        if self.max_evidence_s == DEFAULT_MAX_EVIDENCE_S:
            d.pop("max_evidence_s", None)
        if self.repeats == 1:
            d.pop("repeats", None)
        for k in ("judge_verify", "judge_decompose", "judge_entail", "judge_decontextualize"):
            if d.get(k):
                d[k]["options"] = {o: v for o, v in d[k]["options"].items() if o not in TRANSPORT_OPTIONS}
        return d
