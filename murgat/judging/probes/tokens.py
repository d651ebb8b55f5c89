"""The token account: does the server count the media it was sent?

A serving stack that drops a media part it cannot take still answers 200, and a model that then
answers nothing usable makes every probe "unanswered": deaf and blind look the same. The server's
own prompt-token count tells them apart. For the probe that carries one modality alone
(``hearing``: audio; ``seeing``: an image), murgat reads either the provider's per-modality count
(``prompt_tokens_details.audio_tokens`` / ``image_tokens``, Gemini's details) or, where it gives
none, the prompt tokens of a **twin**: the same request with its media parts removed (text, frame
labels and settings as they were, one answer token), sent once per judge and cached like any
request. A part that adds no prompt token was not read: the judge is reported **dropped by the
server** — "deaf (audio parts not counted)", "blind (images not counted)" — whatever the model
answered, and ``--probes require`` refuses it. A server that reports no prompt tokens at all
leaves the account undecided (said, never taken as a drop).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pydantic import BaseModel, Field

from murgat.judges.types import AudioPart, ImagePart, JudgeOutput, JudgeRequest, MediaPart, VideoPart

Modality = Literal["audio", "image"]
#: what a dropped modality makes of the judge, in the report's words
DROPPED = {"audio": "deaf (audio parts not counted)", "image": "blind (images not counted)"}
#: the per-modality count a provider reports for each (murgat.judges.openai_compat.modality_tokens' names)
REPORTED = {"audio": ("audio",), "image": ("image", "video")}


class TokenAccount(BaseModel):
    """What the server's token counts say about one modality of one judge."""

    modality: Modality
    probe: str = Field(description="the probe whose request carried this modality alone")
    how: Literal["reported", "twin", "none"] = Field(description="the provider's per-modality count, a twin request "
                                                                 "without the media, or nothing to go by")
    with_media: int | None = Field(default=None, description="prompt tokens of the probe's request")
    without_media: int | None = Field(default=None, description="prompt tokens of its twin without media parts")
    reported: int | None = Field(default=None, description="the provider's own count of this modality's tokens")
    counted: bool | None = Field(default=None, description="the part added tokens; None: the account cannot tell")
    note: str = ""
    twin_calls: int = Field(default=0, description="requests the twin sent (0: none, or answered from the cache)")


class Recorder:
    """A judge as the probe asks it, keeping the request it built (for the twin); otherwise the judge itself."""

    def __init__(self, judge: Any) -> None:
        self._judge = judge
        self.built: JudgeRequest | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)

    async def generate(self, req: JudgeRequest, materialize: Any = None) -> JudgeOutput:
        async def keep() -> JudgeRequest:
            self.built = await materialize()
            return self.built

        out: JudgeOutput = await (self._judge.generate(req, keep) if materialize is not None
                                  else self._judge.generate(req))
        if self.built is None:  # answered from the cache: the request is built here (the probe clip is small)
            self.built = await materialize() if materialize is not None else req
        return out


def twin_of(req: JudgeRequest) -> JudgeRequest:
    """``req`` without its media parts, asking for one answer token (only its prompt count is read);
    its own task (``token_twin``), so that a cassette or a rule-based judge never takes it for the probe."""
    media = ImagePart | AudioPart | VideoPart | MediaPart
    return dataclasses.replace(req, parts=[p for p in req.parts if not isinstance(p, media)], key_hint=None,
                               config=req.config.model_copy(update={"max_tokens": 1}), key_config=None,
                               schema=None, expects="text", evidence_notes=[], task="token_twin",
                               inputs={"of": req.task, **req.inputs})


def carries_only(out: JudgeOutput | None, modality: Modality) -> bool:
    """Whether the request behind ``out`` carried this modality and no other media."""
    s = out.sent if out is not None else None
    if s is None:
        return False
    pictures = s.images + s.video_clips + s.whole_files
    return (s.audio_parts > 0 and pictures == 0) if modality == "audio" else (pictures > 0 and s.audio_parts == 0)


def from_reported(probe: str, modality: Modality, out: JudgeOutput) -> TokenAccount | None:
    """The account from the provider's own per-modality count, when it gives one for this modality."""
    tokens = out.modality_tokens or {}
    keys = [k for k in REPORTED[modality] if k in tokens]
    if not keys:
        return None
    n = sum(tokens[k] for k in keys)
    return TokenAccount(modality=modality, probe=probe, how="reported", reported=n, with_media=out.usage.input_tokens,
                        counted=n > 0, note=f"the server counted {n} {'/'.join(keys)} tokens")


def from_twin(probe: str, modality: Modality, out: JudgeOutput, twin: JudgeOutput | None) -> TokenAccount:
    """The account from the probe's prompt tokens and its twin's."""
    with_media = out.usage.input_tokens
    without = twin.usage.input_tokens if twin is not None and twin.error is None else None
    acc = TokenAccount(modality=modality, probe=probe, how="twin", with_media=with_media, without_media=without,
                       twin_calls=int(twin is not None and not twin.cached))
    if twin is None or twin.error is not None:
        acc.how, acc.note = "none", f"the twin request without media got no answer ({twin.error if twin else 'not sent'})"
    elif not with_media or not without:
        acc.how, acc.note = "none", "the server reports no prompt tokens: whether it read the media cannot be told"
    else:
        acc.counted = with_media > without
        acc.note = f"prompt tokens {with_media} with the {modality}, {without} without"
    return acc


def dropped(accounts: list[TokenAccount]) -> list[str]:
    """The report's words for each modality the server did not count."""
    return [f"{DROPPED[a.modality]}: {a.note} (probe {a.probe})" for a in accounts if a.counted is False]
