"""``openai``: any OpenAI-compatible chat server (vLLM or SGLang serving Qwen-Omni /
Qwen-VL, or the OpenAI API) through the official async client.

Media go in the message as OpenAI content parts: images as ``image_url`` data URLs, audio
as ``input_audio`` (base64 WAV), and a visual range either as its sampled frames
(``-J video=frames``, default, each preceded by its time) or as one ``video_url`` data URL
of a picture-only mp4 (``-J video=clip``, what vLLM's video models take). A server that refuses
a clip (``transformers serve`` answers 500: it loads the clip's sound and its loader takes no
``data:`` URL) gets that request, and every later one, as sampled frames, with a note on stderr.

Options: ``base_url`` (else ``$OPENAI_BASE_URL`` or the OpenAI API), ``api_key`` (else
``$OPENAI_API_KEY``; local servers accept any), ``video=frames|clip``,
``extra_body='{"top_k": 20}'`` passed through unchanged (server knobs such as
``chat_template_kwargs``), ``thinking_switch=true`` to map effort onto
``chat_template_kwargs.enable_thinking`` for hybrid-thinking models served by vLLM.
A schema becomes ``response_format`` JSON schema; effort becomes ``reasoning_effort``.

Transport: by default the request body is built once as JSON and posted with one shared
``httpx.AsyncClient`` (``-J client=lean``): the same wire format the official SDK sends, at a
fraction of its CPU cost per call (the SDK's request transform walks every base64 payload).
``-J client=sdk`` uses the official client instead. Several replicas of one model:
``-J base_url=URL1,URL2,...`` spreads requests by least in-flight requests; an endpoint that
fails ``endpoint_failures`` (3) times in a row (connection errors, timeouts, 5xx) is taken out
for ``endpoint_cooldown_s`` (30 s), then tried again. The list enters the cache key sorted.

**Model families.** OpenAI's reasoning models (the o-series: ``o1``, ``o3``, ``o4-mini``, …, and
GPT-5: ``gpt-5``, ``gpt-5-mini``, ``gpt-5.1``, … but not ``gpt-5-chat``) reject ``max_tokens`` and
any ``temperature`` but the default. For a model whose name (its last path segment) is one of
those, murgat sends ``max_completion_tokens`` and no ``temperature``; since that cap also counts
the hidden reasoning tokens, it is ``--max-tokens`` plus a reasoning allowance chosen from the
effort (:data:`REASONING_ALLOWANCE`; ``-J reasoning_tokens=N`` sets it). Every other name (local
servers, ``gpt-4o``, ``gpt-4.1``) gets ``max_tokens`` and ``temperature`` as before.

A redirect (3xx) is not followed: the request fails at once naming where it points, so that
``-J base_url`` can be set to the address that answers (a POST's body would not be re-sent, and
the answers would come from a server the cache key does not name).

**Answers.** ``message.content`` given as a list of content parts is read as the concatenation of
its text parts; ``finish_reason: "length"`` marks the answer truncated (a cut-off label is never
read as a verdict); HTTP 200 with no ``choices`` is a judge error (retried, counted), not an
abstention. An error reply keeps its body's message with every client: the OpenAI error object's
``message``, FastAPI's ``detail`` (what ``transformers serve`` answers), else its first bytes.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from murgat.judges.account import Account
from murgat.judges.base import ERROR_BODY_CHARS, Judge, JudgeError, RawAnswer, body_excerpt
from murgat.judges.effort import HF_THINKING, OPENAI_EFFORT, check
from murgat.judges.types import AudioPart, EvidenceTextPart, ImagePart, JudgeRequest, MediaPart, TextPart, Usage, VideoPart, frame_label

OPENAI_API = "https://api.openai.com/v1"

_REASONING_NAME = re.compile(r"^(?:o\d+|gpt-5)(?:$|[-.])")

#: tokens of hidden reasoning allowed on top of ``--max-tokens`` for a reasoning model, per effort
#: (``None``: no ``--effort``, the server's default, which is medium)
REASONING_ALLOWANCE: dict[str | None, int] = {None: 16384, "none": 0, "minimal": 2048, "low": 4096, "medium": 16384,
                                              "high": 32768, "dynamic": 32768}


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` is an OpenAI reasoning model (o-series, GPT-5 but not ``gpt-5-chat``), which
    takes ``max_completion_tokens`` and no ``temperature``. Read from the name's last path segment."""
    name = model.rsplit("/", 1)[-1].strip().lower()
    return bool(_REASONING_NAME.match(name)) and "-chat" not in name


def error_message(content: bytes | str | None) -> str:
    """What an HTTP error reply says: the OpenAI error object's ``message`` (``{"error": {...}}``),
    a plain ``{"error": "..."}``, FastAPI's ``{"detail": ...}`` (a string or a list of problems), a
    top-level ``message``; else the body's first bytes. Every client shows the same words."""
    try:
        doc = json.loads(content) if content else None
    except (ValueError, TypeError):
        doc = None
    if isinstance(doc, dict):
        err = doc.get("error")
        if isinstance(err, dict) and err.get("message"):
            return _folded(str(err["message"]))
        if isinstance(err, str) and err.strip():
            return _folded(err)
        detail = doc.get("detail")
        if isinstance(detail, str) and detail.strip():
            return _folded(detail)
        if isinstance(detail, list | dict) and detail:
            return _folded(json.dumps(detail, ensure_ascii=False))
        if isinstance(doc.get("message"), str) and doc["message"].strip():
            return _folded(doc["message"])
    return body_excerpt(content)


def _folded(text: str) -> str:
    text = " ".join(text.split())
    return text[:ERROR_BODY_CHARS] + ("…" if len(text) > ERROR_BODY_CHARS else "")


def message_text(content: Any) -> str | None:
    """``message.content`` as text: a string as it is; a list of content parts (what some servers send)
    as its text parts joined; anything else is no text."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif hasattr(part, "text") and isinstance(part.text, str):
                texts.append(part.text)
        return "".join(texts)
    return None


#: HTTP statuses with which a server refuses a ``video_url`` clip it cannot read (then frames are sent)
CLIP_REFUSALS = frozenset({400, 415, 422, 500, 501})

#: the replica the current attempt was sent to (named by a timeout, which cancels the attempt)
_SENT_TO: contextvars.ContextVar[str | None] = contextvars.ContextVar("murgat_openai_sent_to", default=None)


def _b64(data: bytes) -> B64Text:
    return B64Text(base64.b64encode(data).decode("ascii"))


class B64Text(str):
    """A base64 payload (or a ``data:`` URL around one) made here from bytes: its characters
    never need a JSON escape, which :func:`encode_body` relies on instead of scanning it."""


def encode_body(payload: dict[str, Any]) -> bytes:
    """``json.dumps(payload, ensure_ascii=False).encode()``, byte for byte, at a fraction of the cost.

    The encoder scans every character of every string for escapes; a request's base64 images
    and audio are most of its bytes and never need one. Each :class:`B64Text` is swapped for a
    short unique token, the rest is encoded, and the payloads are joined back in (measured:
    0.27 → 0.02 ms for a request with one 60 kB image and one second of audio)."""
    blobs: list[str] = []

    def swap(node: Any) -> Any:
        if isinstance(node, B64Text):
            blobs.append(node)
            return f"\u2063murgat-blob-{_NONCE}-{len(blobs) - 1}\u2063"
        if isinstance(node, dict):
            return {k: swap(v) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v) for v in node]
        return node

    text = json.dumps({k: swap(v) if k == "messages" else v for k, v in payload.items()}, ensure_ascii=False)
    if not blobs:
        return text.encode()
    out: list[bytes] = []
    pos = 0
    for i, blob in enumerate(blobs):
        tok = f"\u2063murgat-blob-{_NONCE}-{i}\u2063"
        at = text.index(tok, pos)
        out.append(text[pos:at].encode())
        out.append(blob.encode("ascii"))
        pos = at + len(tok)
    out.append(text[pos:].encode())
    return b"".join(out)


_NONCE = base64.b32encode(os.urandom(10)).decode()
_MIME = re.compile(r"[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+")


def _data_url(mime: str, b64: str) -> str:
    """A ``data:`` URL; marked as needing no escapes only when the MIME type is a plain one."""
    url = f"data:{mime};base64,{b64}"
    return B64Text(url) if _MIME.fullmatch(mime) else url


def _frame_content(frames: list[Any], account: Account | None = None) -> list[dict[str, Any]]:
    """Sampled frames as OpenAI content parts, each after a text label with its time."""
    out: list[dict[str, Any]] = []
    for f in frames:
        img = ImagePart(image=f.image, time=f.time)
        label = frame_label(f.time)
        out.append({"type": "text", "text": label})
        out.append({"type": "image_url", "image_url": {"url": _data_url("image/jpeg", img.b64())}})
        if account is not None:
            account.text(label)
            account.image_array(f.image)
    return out


def _image_size(p: ImagePart, account: Account) -> None:
    if p.image is not None:
        account.image_array(p.image)
    else:
        account.image_bytes(p.encoded())


def modality_tokens(usage: Any) -> dict[str, int] | None:
    """The per-modality prompt tokens an OpenAI-compatible server reports, only those it counts:
    ``prompt_tokens_details.audio_tokens`` (OpenAI's audio models), ``image_tokens`` and
    ``text_tokens`` where a server adds them. ``None`` when it reports none of them."""
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    if not isinstance(details, dict):
        return None
    out = {name: int(details[key]) for key, name in (("audio_tokens", "audio"), ("image_tokens", "image"),
                                                     ("text_tokens", "text"))
           if isinstance(details.get(key), int) and not isinstance(details.get(key), bool)}
    return out or None


class Endpoint:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.in_flight = 0
        self.failures = 0
        self.down_until = 0.0
        self.sent = 0


class EndpointPool:
    """Least-in-flight choice among replicas, with a failure streak taking one out for a while."""

    def __init__(self, urls: list[str], failures: int = 3, cooldown_s: float = 30.0) -> None:
        self.endpoints = [Endpoint(u) for u in urls]
        self.max_failures = max(1, failures)
        self.cooldown_s = cooldown_s

    def pick(self) -> Endpoint:
        now = time.monotonic()
        up = [e for e in self.endpoints if e.down_until <= now]
        if not up:  # every replica is cooling down: try the one that comes back first
            return min(self.endpoints, key=lambda e: e.down_until)
        return min(up, key=lambda e: (e.in_flight, e.sent))

    def ok(self, e: Endpoint) -> None:
        e.failures = 0

    def fail(self, e: Endpoint) -> None:
        e.failures += 1
        if e.failures >= self.max_failures:
            e.down_until = time.monotonic() + self.cooldown_s
            e.failures = 0


class OpenAIJudge(Judge):
    provider = "openai"
    answer_options = ("video", "extra_body", "base_url", "thinking_switch", "reasoning_tokens")

    def key_options(self) -> dict[str, Any]:
        """``$OPENAI_BASE_URL`` picks the server when ``-J base_url`` is not given: it then enters
        the key exactly as the option would (the same server, the same key either way)."""
        opts = super().key_options()
        if self._env_url is not None:
            urls = sorted(u.strip() for u in self._env_url.split(",") if u.strip())
            opts["base_url"] = ",".join(urls) if len(urls) > 1 else self._env_url.strip()
        return opts

    def __init__(self, model: str, options: dict[str, Any] | None = None, *, http_client: Any = None, **kw: Any) -> None:
        super().__init__(model, options, **kw)
        if not model:
            raise ValueError("openai: name the served model, e.g. openai:Qwen/Qwen2.5-Omni-7B")
        self.base_url = self.options.get("base_url") or os.environ.get("OPENAI_BASE_URL") or OPENAI_API
        env_url = None if self.options.get("base_url") else os.environ.get("OPENAI_BASE_URL")
        self._env_url = env_url if env_url and env_url.strip() else None
        key = self.options.get("api_key") or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url.rstrip("/") == OPENAI_API and not kw.get("dry_run"):
                raise ValueError("openai: no API key; set OPENAI_API_KEY (or pass -J base_url=... for a local server)")
            key = "EMPTY"
        self._key = key
        self.video = str(self.options.get("video", "frames"))
        if self.video not in ("frames", "clip"):
            raise ValueError(f"openai: -J video must be frames or clip, not {self.video!r}")
        raw_extra = self.options.get("extra_body")
        try:
            self.extra_body: dict[str, Any] = json.loads(raw_extra) if isinstance(raw_extra, str) else dict(raw_extra or {})
        except json.JSONDecodeError as exc:
            raise ValueError(f"openai: -J extra_body is not valid JSON ({exc.msg})") from exc
        self.thinking_switch = str(self.options.get("thinking_switch", "false")).lower() in ("1", "true", "yes")
        self.transport = str(self.options.get("client", "lean"))
        if self.transport not in ("lean", "httpx", "sdk"):
            raise ValueError(f"openai: -J client must be lean, httpx or sdk, not {self.transport!r}")
        if http_client is not None and self.transport == "lean":
            self.transport = "httpx"  # a given httpx client (tests, proxies) is used as it is
        urls = [u.strip() for u in str(self.base_url).split(",") if u.strip()]
        if not urls:
            raise ValueError("openai: -J base_url is empty")
        self.base_url = urls[0]
        if len(urls) > 1:
            self.options["base_url"] = ",".join(sorted(urls))  # replicas: order does not change answers
        self.endpoints = EndpointPool(urls, int(self.options.get("endpoint_failures", 3)),
                                      float(self.options.get("endpoint_cooldown_s", 30.0)))
        self._http_client = http_client
        self._client: Any = None
        self._http: Any = None
        #: why the server refused a ``video_url`` clip (then visual ranges go as frames), or ``None``
        self.clip_refused: str | None = None

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI, DefaultAsyncHttpxClient

            from murgat.judges.bodycap import client_hooks

            # the SDK's own client with the SDK's defaults, its response bodies capped (murgat.judges.bodycap)
            http_client = self._http_client or DefaultAsyncHttpxClient(event_hooks=client_hooks())
            self._client = AsyncOpenAI(api_key=self._key, base_url=self.base_url, max_retries=0,
                                       http_client=http_client)
        return self._client

    @property
    def clips(self) -> bool:
        """Whether visual ranges go as ``video_url`` clips: ``-J video=clip``, until the server refused one."""
        return self.video == "clip" and self.clip_refused is None

    def _has_clips(self, req: JudgeRequest) -> bool:
        from murgat.judges.gemini import media_mime

        return any((isinstance(p, VideoPart) and p.end > p.start)
                   or (isinstance(p, MediaPart) and media_mime(p.path).startswith("video/")) for p in req.parts)

    async def build_messages(self, req: JudgeRequest, account: Account | None = None) -> list[dict[str, Any]]:
        """The chat messages of ``req``; ``account`` counts what they carry (:mod:`murgat.judges.account`)."""
        acct = account if account is not None else Account()
        content: list[dict[str, Any]] = []
        for p in req.parts:
            if isinstance(p, TextPart):
                content.append({"type": "text", "text": p.text})
                acct.text(p.text)
            elif isinstance(p, EvidenceTextPart):
                content.append({"type": "text", "text": p.as_text()})
                acct.text(p.as_text())
            elif isinstance(p, ImagePart):
                content.append({"type": "image_url", "image_url": {"url": _data_url(p.mime, p.b64())}})
                _image_size(p, acct)
            elif isinstance(p, AudioPart):
                content.append({"type": "input_audio", "input_audio": {"data": B64Text(p.wav_b64()), "format": "wav"}})
                acct.audio(len(p.samples) / max(p.sr, 1))
            elif isinstance(p, MediaPart):
                content.extend(await self._media_content(p, acct, req.evidence_notes))
            elif isinstance(p, VideoPart):
                if self.clips and p.end > p.start:
                    from murgat.media.clips import video_clip

                    clip, _ = await asyncio.to_thread(video_clip, p.source, p.start, p.end)
                    url = _data_url("video/mp4", _b64(Path(clip).read_bytes()))
                    content.append({"type": "video_url", "video_url": {"url": url}})
                    acct.clip(p.end - p.start)
                else:
                    content.extend(_frame_content(p.frames, acct))
        messages: list[dict[str, Any]] = []
        if req.system:
            messages.append({"role": "system", "content": req.system})
            acct.sent.text_chars += len(req.system)
        messages.append({"role": "user", "content": content})
        return messages

    async def _media_content(self, p: MediaPart, acct: Account, req_notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A whole file: one ``video_url`` (``-J video=clip``), or frames plus the sound track (a long
        file's as excerpts: :meth:`MediaPart.sound`, noted in ``req_notes``)."""
        from murgat.judges.gemini import media_mime
        from murgat.media.audio import wav_bytes
        from murgat.media.timefmt import fmt_range

        if self.clips and media_mime(p.path).startswith("video/"):
            data = await asyncio.to_thread(Path(p.path).read_bytes)
            acct.whole_file()
            return [{"type": "video_url", "video_url": {"url": _data_url(media_mime(p.path), _b64(data))}}]
        out = _frame_content(await asyncio.to_thread(p.frames), acct)
        pieces, sr, note = await asyncio.to_thread(p.sound)
        if note is None and pieces:
            out.append({"type": "text", "text": "(the sound track of the whole video)"})
            acct.text("(the sound track of the whole video)")
        elif note is not None:  # a long file: excerpts, each labelled with its times, and the model is told
            label = f"(the sound track, in part: {note.text})"
            out.append({"type": "text", "text": label})
            acct.text(label)
            if note.model_dump() not in req_notes:
                req_notes.append(note.model_dump())  # the answer's record says what was heard
        for a, b, x in pieces:
            if note is not None:
                out.append({"type": "text", "text": f"(sound {fmt_range(a, b)})"})
                acct.text(f"(sound {fmt_range(a, b)})")
            out.append({"type": "input_audio", "input_audio": {"data": _b64(wav_bytes(x, sr)), "format": "wav"}})
            acct.audio(len(x) / max(sr, 1))
        return out

    def where(self) -> str:
        return _SENT_TO.get() or self.base_url

    def build_kwargs(self, req: JudgeRequest) -> dict[str, Any]:
        cfg = req.config
        kw: dict[str, Any] = {"model": self.model}
        if is_reasoning_model(self.model):
            # max_tokens is refused by these models and max_completion_tokens counts the hidden reasoning too
            allowance = self.options.get("reasoning_tokens")
            extra_tokens = int(allowance) if allowance is not None else REASONING_ALLOWANCE[check(cfg.reasoning_effort)]
            kw["max_completion_tokens"] = cfg.max_tokens + extra_tokens
        else:
            kw["temperature"] = cfg.temperature
            kw["max_tokens"] = cfg.max_tokens
        if cfg.samples > 1:
            kw["n"] = cfg.samples
        if cfg.seed is not None:
            kw["seed"] = cfg.seed
        if req.schema is not None:
            kw["response_format"] = {"type": "json_schema",
                                     "json_schema": {"name": "answer", "schema": req.schema, "strict": False}}
        extra = dict(self.extra_body)
        effort = check(cfg.reasoning_effort)
        if effort is not None:
            if self.thinking_switch:
                kwargs = dict(extra.get("chat_template_kwargs", {}))
                kwargs["enable_thinking"] = HF_THINKING[effort]
                extra["chat_template_kwargs"] = kwargs
            elif OPENAI_EFFORT[effort] is not None:
                kw["reasoning_effort"] = OPENAI_EFFORT[effort]
        if extra:
            kw["extra_body"] = extra
        return kw

    @property
    def http(self) -> Any:
        if self._http is None:
            if self.transport == "lean":
                from murgat.judges.http import HttpPool

                self._http = HttpPool()
            else:
                import httpx

                from murgat.judges.bodycap import client_hooks

                self._http = self._http_client or httpx.AsyncClient(
                    timeout=httpx.Timeout(None), limits=httpx.Limits(max_connections=None, max_keepalive_connections=256),
                    event_hooks=client_hooks())
        return self._http

    async def _call(self, req: JudgeRequest) -> RawAnswer:
        if self.clips and self._has_clips(req):
            try:
                return await self._send(req)
            except JudgeError as err:
                if err.status not in CLIP_REFUSALS or not self.clips:
                    raise
                # transformers serve answers 500 to a video_url data URL (it loads the clip's audio, and its
                # loader takes no data: URLs): fall back to the sampled frames, for this request and the rest
                self.clip_refused = str(err)
                print(f"note: {self.name} at {self.where()} refused a video clip ({err}); sending sampled frames "
                      "for visual ranges instead (-J video=frames)", file=sys.stderr)
        return await self._send(req)

    async def _send(self, req: JudgeRequest) -> RawAnswer:
        if self.transport == "sdk" and len(self.endpoints.endpoints) == 1:
            return await self._call_sdk(req)
        return await self._call_lean(req)

    def _transport_errors(self) -> tuple[type[BaseException], ...]:
        from murgat.judges.http import HttpError

        if self.transport == "lean":
            return (HttpError,)  # httpx is not imported on this path (75 ms before the first request)
        import httpx

        return (httpx.TimeoutException, httpx.TransportError, HttpError)

    @staticmethod
    def _unreachable(exc: BaseException) -> bool:
        """A failure before anything reached a server: refused, no such host, TLS handshake."""
        from murgat.judges.http import HttpConnectError

        if isinstance(exc, HttpConnectError):
            return True
        # httpx's ConnectError (refused, DNS, TLS), and the same class of the httpx fork newer openai
        # SDKs ship (``httpx2``): told by name so neither needs importing here
        return any(c.__name__ == "ConnectError" and c.__module__.split(".")[0] in ("httpx", "httpx2", "httpcore")
                   for c in type(exc).__mro__)

    async def _call_lean(self, req: JudgeRequest) -> RawAnswer:
        kw = self.build_kwargs(req)
        extra = kw.pop("extra_body", None) or {}
        acct = Account()
        payload = {"messages": await self.build_messages(req, acct), **kw, **extra}
        body = encode_body(payload)
        sent = acct.done(len(body), exact=True)
        ep = self.endpoints.pick()
        _SENT_TO.set(ep.url)
        ep.in_flight += 1
        ep.sent += 1
        try:
            resp = await self.http.post(f"{ep.url}/chat/completions", content=body, headers={
                "authorization": f"Bearer {self._key}", "content-type": "application/json"})
        except self._transport_errors() as exc:
            self.endpoints.fail(ep)
            raise JudgeError(f"openai: {exc or type(exc).__name__} ({ep.url})", retryable=True,
                             unreachable=self._unreachable(exc)) from None
        finally:
            ep.in_flight -= 1
        code = resp.status_code
        if 300 <= code < 400:
            # not followed: a POST's body is not re-sent to wherever a redirect points, and an answer from
            # another address is not the server the cache key names. A 3xx body was read as "not JSON".
            where = resp.headers.get("location")
            to = f" to {where[:200]}" if where else ""
            raise JudgeError(f"openai HTTP {code} from {ep.url}: the server redirects{to}; murgat does not follow "
                             "redirects — set -J base_url to the address that answers", retryable=False, status=code)
        if code >= 400:
            if code >= 500:
                self.endpoints.fail(ep)
            # what a proxy or a crashed server sends is rarely an OpenAI error object: show its first bytes
            raise JudgeError(f"openai HTTP {code} from {ep.url}: Error code: {code} - {error_message(resp.content)}",
                             retryable=code in (408, 409, 429) or code >= 500, status=code,
                             retry_after=resp.headers.get("retry-after"))
        self.endpoints.ok(ep)
        try:
            data = json.loads(resp.content)
        except ValueError as exc:
            raise JudgeError(f"openai: response is not JSON ({exc})", retryable=True) from None
        if not isinstance(data, dict):
            raise JudgeError(f"openai: response is not a JSON object: {body_excerpt(resp.content)}", retryable=True)
        ans = self._answer(data, ep.url)
        ans.sent = sent
        return ans

    def _answer(self, data: dict[str, Any], url: str) -> RawAnswer:
        """A ``chat.completion`` object (as JSON) read into an answer, the same for every client."""
        u = data.get("usage") or {}
        details = (u.get("completion_tokens_details") or {}) if isinstance(u, dict) else {}
        thinking = int(details.get("reasoning_tokens") or 0) if isinstance(details, dict) else 0
        usage = Usage(input_tokens=int(u.get("prompt_tokens") or 0) if isinstance(u, dict) else 0,
                      output_tokens=(int(u.get("completion_tokens") or 0) if isinstance(u, dict) else 0) - thinking,
                      thinking_tokens=thinking)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            # an answer with nothing in it is the server's failure, not the judge abstaining
            raise JudgeError(f"openai: HTTP 200 from {url} with no choices (the server returned no answer)",
                             retryable=True)
        choice = choices[0]
        message = choice.get("message") or {}
        if not isinstance(message, dict):
            message = {}
        text = message_text(message.get("content"))
        finish = choice.get("finish_reason")
        if finish == "content_filter":
            return RawAnswer(text=text, usage=usage, raw=data, blocked=True, block_reason="content_filter")
        if text is None and message.get("refusal"):
            return RawAnswer(text=None, usage=usage, raw=data, blocked=True, block_reason=f"refusal: {message['refusal']}")
        if text is None:
            # no text and no reason (a refusal some servers send as content: null): no answer came
            # back, so it is counted as the judge's error and --retry-errors asks again, never an abstention
            raise JudgeError(f"openai: HTTP 200 from {url} with message.content null (no answer text, "
                             f"finish_reason {finish!r})", retryable=True)
        model = data.get("model")
        fp = data.get("system_fingerprint")
        return RawAnswer(text=text, usage=usage, raw=data, model=model if isinstance(model, str) else None,
                         truncated=finish == "length", modality_tokens=modality_tokens(u),
                         system_fingerprint=fp if isinstance(fp, str) and fp else None)

    async def aclose(self) -> None:
        """Close the clients this judge made: they belong to the event loop that used them (a run's
        judge probes ask on one loop, its items on another), so the next request makes new ones."""
        if self._http is not None and self._http_client is None:
            await self._http.aclose()
            self._http = None
        if self._client is not None:
            if self._http_client is None:  # a client handed in is its owner's to close
                await self._client.close()
            self._client = None

    async def _call_sdk(self, req: JudgeRequest) -> RawAnswer:
        acct = Account()
        messages = await self.build_messages(req, acct)
        kw = self.build_kwargs(req)
        # the SDK serialises the body itself: its size is that of the same JSON made here
        sent = acct.done(len(encode_body({"messages": messages, **kw})), exact=False)
        _SENT_TO.set(self.base_url)
        resp = await self.client.chat.completions.create(messages=messages, **kw)
        # read from the JSON the SDK parsed, as the other clients do (the SDK builds its objects without
        # validating them: a list as message.content stays a list)
        raw = resp.model_dump(mode="json", exclude_none=True, warnings=False)
        ans = self._answer(raw if isinstance(raw, dict) else {}, self.base_url)
        ans.sent = sent
        return ans

    def classify(self, exc: BaseException) -> JudgeError:
        if isinstance(exc, JudgeError):
            return exc
        import openai

        if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
            cause = f": {exc.__cause__}" if exc.__cause__ is not None and str(exc.__cause__) else ""
            unreachable = not isinstance(exc, openai.APITimeoutError) and exc.__cause__ is not None and \
                self._unreachable(exc.__cause__)
            return JudgeError(f"openai: {type(exc).__name__}{cause} ({self.base_url})", retryable=True,
                              unreachable=unreachable)
        if isinstance(exc, openai.APIStatusError):
            response = exc.response
            retry_after = response.headers.get("retry-after") if response is not None else None
            code = exc.status_code
            # the SDK keeps only an OpenAI error object's message ("Error code: 422" for FastAPI's
            # {"detail": …}): read the body itself, as the lean client does
            try:
                content = response.content if response is not None else None
            except Exception:  # a streamed body that was not read
                content = None
            message = error_message(content) if content else _folded(str(exc.message))
            return JudgeError(f"openai HTTP {code} from {self.base_url}: Error code: {code} - {message}",
                              retryable=code in (408, 409, 429) or code >= 500, status=code, retry_after=retry_after)
        return super().classify(exc)
