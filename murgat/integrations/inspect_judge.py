"""An inspect_ai model as murgat's judge: ``--judge inspect:MODEL`` inside an inspect eval.

The scorer (:func:`murgat.integrations.inspect_ai.murgat_scorer`) scores with the model of inspect's
``judge`` role (``--model-role judge=openai/gpt-4o``, ``model_roles={"judge": …}``) by naming it
``inspect:<model>`` as ``murgat score``'s judge. Each judge request is then asked through inspect's
model API — :meth:`inspect_ai.model.Model.generate` — so retries, rate limits, inspect's cache
(``judge_cache=``), the transcript's model events and the log's ``model_usage`` (and role usage) are
inspect's, like those of any model-graded scorer.

*Two event loops.* ``murgat.score`` runs in a worker thread with its own event loop while inspect's
models belong to inspect's loop (their clients, semaphores and limits are bound to it). So each call is
handed to inspect's loop (:meth:`Bridge.run`) and its answer awaited from murgat's. It runs in the
context of the inspect sample whose item it judges (:data:`murgat.engine.loop.CURRENT_ITEM` names the
item; the scorer registered each sample's context under its item id), so a batch of several samples
scored in one ``murgat.score`` call still books each judge call to its own sample.

*What it sends.* murgat's request parts as inspect content: text and evidence text as
``ContentText``, frames as ``ContentImage`` after their time label, sound as WAV ``ContentAudio``, a
video range as a picture-only mp4 ``ContentVideo`` (``-J media=frames``: its sampled frames instead,
for providers that take images only), a whole file as the task's ``video`` form
(:func:`murgat.integrations.media_parts.media_pieces`).

*Retries once.* inspect's ``generate`` retries on its own, so a failure reaching murgat is final
(never retried a second time by murgat's loop); murgat's ``--timeout`` still bounds each call. murgat's
response cache is not used: every request reaches inspect (whose cache is ``judge_cache=``), so the
log's usage counts what was asked.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextvars
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentAudio,
    ContentImage,
    ContentText,
    ContentVideo,
    Model,
    ModelOutput,
)
from inspect_ai.model import GenerateConfig as InspectConfig

from murgat.judges.base import Judge, JudgeError, RawAnswer
from murgat.judges.types import (
    AudioPart,
    EvidenceTextPart,
    ImagePart,
    JudgeRequest,
    MediaPart,
    TextPart,
    Usage,
    VideoPart,
    frame_label,
)

PROVIDER = "inspect"
T = TypeVar("T")


@dataclass
class Bridge:
    """What a judge made in murgat's thread needs of the eval: inspect's loop, the judge model and the
    context of each sample being scored (by murgat item id)."""

    loop: asyncio.AbstractEventLoop
    model: Model
    cache: bool | CachePolicy = False
    contexts: dict[str, contextvars.Context] = field(default_factory=dict)

    async def run(self, coro: Coroutine[Any, Any, T], item: str | None) -> T:
        """``coro`` run on inspect's loop, in the context of ``item``'s sample (the scoring sample's
        context when the item is not known), awaited from the calling loop."""
        ctx = self.contexts.get(item) if item else None
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def start() -> None:
            task = self.loop.create_task(coro, context=ctx) if ctx is not None else self.loop.create_task(coro)

            def finished(t: asyncio.Task[T]) -> None:
                if t.cancelled():
                    done.cancel()
                elif (exc := t.exception()) is not None:
                    done.set_exception(exc)
                else:
                    done.set_result(t.result())

            task.add_done_callback(finished)
            done.add_done_callback(lambda f: self.loop.call_soon_threadsafe(task.cancel) if f.cancelled() else None)

        self.loop.call_soon_threadsafe(start)
        return await asyncio.wrap_future(done)


#: the eval's bridge, set by the scorer around its ``murgat.score`` call (the worker thread inherits it)
BRIDGE: contextvars.ContextVar[Bridge | None] = contextvars.ContextVar("murgat_inspect_bridge", default=None)


def _data(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _frames(frames: list[Any]) -> list[Content]:
    out: list[Content] = []
    for f in frames:
        out.append(ContentText(text=frame_label(f.time)))
        out.append(ContentImage(image=_data("image/jpeg", ImagePart(image=f.image, time=f.time).encoded())))
    return out


async def _video_range(p: VideoPart, media: str) -> list[Content]:
    if media == "frames" or p.end <= p.start:
        return _frames(p.frames)
    from murgat.media.clips import video_clip

    clip, _ = await asyncio.to_thread(video_clip, p.source, p.start, p.end)
    return [ContentVideo(video=_data("video/mp4", await asyncio.to_thread(Path(clip).read_bytes)), format="mp4")]


async def _whole_file(p: MediaPart, media: str) -> list[Content]:
    from murgat.integrations.media_parts import media_pieces

    pieces = await asyncio.to_thread(media_pieces, Path(p.path), "frames+audio" if media == "frames" else "video",
                                     p.fps, p.max_frames)
    out: list[Content] = []
    for piece in pieces:
        if piece.kind == "text":
            out.append(ContentText(text=piece.text or ""))
        elif piece.kind == "image":
            out.append(ContentImage(image=_data("image/jpeg", piece.data or b"")))
        else:
            raw = await asyncio.to_thread(Path(str(piece.path)).read_bytes)
            mime = f"{'video' if piece.kind == 'video' else 'audio'}/{piece.format}"
            out.append(ContentVideo(video=_data(mime, raw), format=piece.format)  # type: ignore[arg-type]
                       if piece.kind == "video" else ContentAudio(audio=_data(mime, raw), format=piece.format))  # type: ignore[arg-type]
    return out


async def inspect_content(req: JudgeRequest, media: str = "clip") -> list[Content]:
    """The parts of ``req`` as inspect content, in order (see the module docstring, *What it sends*)."""
    out: list[Content] = []
    for p in req.parts:
        if isinstance(p, TextPart):
            out.append(ContentText(text=p.text))
        elif isinstance(p, EvidenceTextPart):
            out.append(ContentText(text=p.as_text()))
        elif isinstance(p, ImagePart):
            out.append(ContentImage(image=_data(p.mime, p.encoded())))
        elif isinstance(p, AudioPart):
            out.append(ContentAudio(audio=_data("audio/wav", p.wav()), format="wav"))
        elif isinstance(p, VideoPart):
            out.extend(await _video_range(p, media))
        elif isinstance(p, MediaPart):
            out.extend(await _whole_file(p, media))
    return out


class InspectJudge(Judge):
    """murgat's judge interface over an inspect model (see the module docstring)."""

    provider = PROVIDER
    answer_options = ("media",)

    def __init__(self, model: str, options: dict[str, Any] | None = None, **kw: Any) -> None:
        kw["cache"] = None  # inspect's cache (judge_cache=), not murgat's: every request reaches inspect
        super().__init__(model, options, **kw)
        bridge = BRIDGE.get()
        if bridge is None:
            raise ValueError(f"judge {PROVIDER}:{model} is an inspect_ai model: it answers only inside an inspect "
                             "eval, scored by murgat/murgat_scorer (name another judge here)")
        if str(bridge.model) != model:
            raise ValueError(f"judge {PROVIDER}:{model}: the eval's judge model is {bridge.model}")
        self.bridge = bridge
        self.media = str(self.options.get("media", "clip"))
        if self.media not in ("clip", "frames"):
            raise ValueError(f"-J media={self.media}: the inspect judge sends video as 'clip' or 'frames'")

    def key_options(self) -> dict[str, Any]:
        """The options, and the model's own generation settings (a role's ``temperature``, …): what
        changes its answers enters the run's identity."""
        opts = super().key_options()
        own = self.bridge.model.config.model_dump(exclude_none=True)
        if own:
            opts["model_config"] = own
        return opts

    def classify(self, exc: BaseException) -> JudgeError:
        """Any failure inspect let through is final: it has already retried (see *Retries once*)."""
        if isinstance(exc, TimeoutError | asyncio.TimeoutError):
            return JudgeError(f"{self.name}: no answer within --timeout", retryable=False)
        return JudgeError(f"{self.name}: {type(exc).__name__}: {exc}", retryable=False)

    async def _call(self, req: JudgeRequest) -> RawAnswer:
        from murgat.engine.loop import CURRENT_ITEM

        messages: list[ChatMessage] = []
        if req.system:
            messages.append(ChatMessageSystem(content=req.system))
        messages.append(ChatMessageUser(content=await inspect_content(req, self.media)))
        cfg = req.config
        config = InspectConfig(temperature=cfg.temperature, max_tokens=cfg.max_tokens, seed=cfg.seed,
                               num_choices=cfg.samples if cfg.samples > 1 else None)
        out: ModelOutput = await self.bridge.run(
            self.bridge.model.generate(messages, config=config, cache=self.bridge.cache), CURRENT_ITEM.get())
        if out.error:
            raise JudgeError(f"{self.name}: {out.error}", retryable=False)
        usage = out.usage
        return RawAnswer(text=out.completion, model=out.model or self.model, truncated=out.stop_reason == "max_tokens",
                         usage=Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                                     thinking_tokens=usage.reasoning_tokens or 0) if usage else Usage(),
                         blocked=out.stop_reason == "content_filter",
                         block_reason="content filter" if out.stop_reason == "content_filter" else None)


def make_inspect_judge(model: str, options: dict[str, Any], **kw: Any) -> Judge:
    """The factory :func:`murgat.judges.register_provider` is given for ``inspect``."""
    return InspectJudge(model, options, **kw)


def register() -> None:
    """``--judge inspect:MODEL`` is known to :func:`murgat.judges.make_judge` from now on (idempotent)."""
    from murgat.judges import register_provider

    register_provider(PROVIDER, make_inspect_judge)
