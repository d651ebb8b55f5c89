""":class:`JudgingConfig`: how the evidence of a run is cut and shown and how its requests are sent."""

from __future__ import annotations

from pydantic import BaseModel, Field

from murgat.judges.types import GenerateConfig
from murgat.media.evidence import EvidenceConfig
from murgat.media.limits import EvidenceLimits


class JudgingConfig(BaseModel):
    """The settings every command that asks about media carries into its item context: the
    evidence recipe (part of every evidence cache key), the text channels and the request
    settings. ``score``'s :class:`~murgat.settings.score_resolved.ScoreConfig` extends it with the metric's
    own settings; the other commands need no more than this."""

    evidence: EvidenceConfig = Field(default_factory=EvidenceConfig)
    evidence_text: bool = Field(default=False, description="send ASR/OCR text with media (forced on for text-only judges)")
    asr_model: str | None = Field(default=None, description="ASR model for evidence text (None: bundled Whisper base)")
    ocr_fps: float = 1.0
    sound_events: bool = Field(default=True, description="with evidence text: also list the AudioSet classes a sound "
                               "tagger (YAMNet) hears in each cited audio segment")
    end_tolerance_s: float = Field(default=1.0, description="citations may end this far past the stream (then clipped)")
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    #: what one request may carry (audio seconds, images, bytes): the documented limits of the
    #: provider that is sent the evidence (:func:`murgat.judges.evidence.limits_for`), set by the
    #: command once its judges are made. Not in the run's fingerprint: the judge spec and its ``-J``
    #: options, which are, decide it; and in a cache key only where a limit changed the request
    #: (:mod:`murgat.judging.context`), so short files key as before.
    evidence_limits: EvidenceLimits = Field(default_factory=EvidenceLimits)
    #: verify/entail requests go out with an answer cap sized to the prompt
    #: (:func:`murgat.judges.budget.sized_for`): ``False`` when the user passed ``--max-tokens``
    sized_answers: bool = False
