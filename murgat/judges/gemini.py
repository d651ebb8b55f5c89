"""``gemini``: Google's Gemini API through the google-genai async client.

Evidence is sent one modality at a time:

* audio segments → inline WAV parts (16 kHz mono; small);
* a visual point → one inline JPEG;
* a visual range, by ``-J visual=``:
  - ``offsets`` (default): the source video with its sound track removed is uploaded
    once per run through the Files API (waiting until ACTIVE) and every range is sent as
    a ``file_data`` part with ``video_metadata`` start/end offsets and ``fps`` — the
    server clips, nothing is re-encoded per citation;
  - ``frames``: the frames murgat sampled, inline;
  - ``clip``: an inline picture-only mp4 of the range.

Reasoning effort maps to ``thinking_level`` (Gemini 3) or ``thinking_budget`` (2.5), see
:mod:`murgat.judges.effort`. A schema turns on JSON output (``response_json_schema``).
Safety blocks are recorded as blocked answers; an answer stopped at the token cap
(``finishReason: MAX_TOKENS``) is marked truncated. Uploaded files are deleted at the end of
the run unless ``-J cleanup=false``. The key comes from ``GEMINI_API_KEY`` or
``GOOGLE_API_KEY``.

**API version.** murgat was written against the Gemini API's ``v1beta`` (``responseJsonSchema``,
``thinkingConfig``, ``videoMetadata`` offsets and fps, the Files API), which google-genai 1.x
used by default; google-genai 3.x sends ``v1`` unless told otherwise. The judge pins
:data:`API_VERSION` for the Gemini Developer API; ``-J api_version=…`` or
``GOOGLE_GENAI_API_VERSION`` choose another. pyproject pins the SDK range it was tested with.

**Vertex AI.** With ``GOOGLE_GENAI_USE_VERTEXAI=true`` (plus ``GOOGLE_CLOUD_PROJECT`` and
``GOOGLE_CLOUD_LOCATION``, and Application Default Credentials; or ``-J vertex=true``) the same
judge talks to Vertex AI: no API key is needed (an explicit ``-J api_key`` uses Vertex express
mode), the SDK's Vertex version (``v1beta1``) is left as it is, and since Vertex has no Files API,
visual ranges must be sent inline (``-J visual=frames`` or ``clip``; ``offsets`` is refused) and
whole files (``generate``) go inline too.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

from murgat.judges.account import Account
from murgat.judges.base import Judge, JudgeError, RawAnswer
from murgat.judges.effort import gemini_thinking
from murgat.judges.types import AudioPart, EvidenceTextPart, ImagePart, JudgeRequest, MediaPart, TextPart, Usage, VideoPart, frame_label

RETRYABLE = {408, 429, 500, 502, 503, 504}
#: the Gemini Developer API version murgat's requests are written for (see the module docstring)
API_VERSION = "v1beta"


def modality_tokens(um: Any) -> dict[str, int] | None:
    """``promptTokensDetails`` as ``{"text", "image", "audio", "video": tokens}`` (a modality Gemini
    does not list counted none: it lists every modality it read); ``None`` when not reported."""
    details = getattr(um, "prompt_tokens_details", None) if um is not None else None
    if not details:
        return None
    out = dict.fromkeys(("text", "image", "audio", "video"), 0)
    for d in details:
        name = str(getattr(getattr(d, "modality", None), "value", getattr(d, "modality", "")) or "").lower()
        if name in out or name == "document":
            out[name] = out.get(name, 0) + int(getattr(d, "token_count", 0) or 0)
    return out


def _truthy(value: object) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")
_MIMES = {".mp4": "video/mp4", ".m4v": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm", ".mkv": "video/x-matroska",
          ".avi": "video/x-msvideo", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".flac": "audio/flac", ".ogg": "audio/ogg",
          ".m4a": "audio/mp4", ".opus": "audio/ogg"}


def media_mime(path: str) -> str:
    """The MIME type the Gemini API expects for a media file, by extension."""
    return _MIMES.get(Path(path).suffix.lower(), "application/octet-stream")


def silent_copy(path: str) -> Path:
    """The source video with no audio stream (stream copy; cached by content)."""
    from murgat.media.cache import default_cache, file_digest, make_key
    from murgat.media.streams import _tool, probe

    info = probe(path)
    cache = default_cache()
    key = make_key("silent", file_digest(info.path), stream=info.video_stream)

    def produce(tmp: Path) -> None:
        cmd = [_tool("ffmpeg"), "-v", "error", "-y", "-i", info.path, "-map", f"0:{info.video_stream}", "-an",
               "-c:v", "copy", "-f", "mp4", "-movflags", "+faststart", str(tmp)]
        proc = subprocess.run(cmd, capture_output=True)
        if proc.returncode != 0:  # e.g. vp8 in mp4 is not allowed: re-encode once
            cmd = [_tool("ffmpeg"), "-v", "error", "-y", "-i", info.path, "-map", f"0:{info.video_stream}", "-an",
                   "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p", "-f", "mp4", str(tmp)]
            subprocess.run(cmd, check=True, capture_output=True)

    return cache.get_or_create("silent", key, ".mp4", produce)


def offsets_fps(p: VideoPart) -> float:
    """The frame rate to ask the server to sample a range at: ``--fps``, lowered where ``--max-frames``
    capped the range (``len(frames) / span``), so the server samples as many frames as the record's
    note says were sent — a 30-minute range at 1 fps was 1,800 frames server-side while the record
    said 8. A range the cap did not touch keeps ``--fps`` exactly (its frames number ``span * fps``
    rounded up), so what such a request asks is unchanged."""
    span = p.end - p.start
    if not p.frames or span <= 0:
        return p.fps
    return min(p.fps, len(p.frames) / span)


class GeminiJudge(Judge):
    provider = "gemini"
    answer_options = ("visual", "api_version", "vertex")
    #: read by google-genai: Vertex AI or the Gemini API, which project/region, which base URL/API version
    endpoint_env = ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_CLOUD_PROJECT",
                    "GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL", "GOOGLE_GENAI_API_VERSION")

    def __init__(self, model: str, options: dict[str, Any] | None = None, *, http_client: Any = None, **kw: Any) -> None:
        super().__init__(model, options, **kw)
        self.visual = str(self.options.get("visual", "offsets"))
        if self.visual not in ("offsets", "frames", "clip"):
            raise ValueError(f"gemini: -J visual must be offsets, frames or clip, not {self.visual!r}")
        self.vertex = _truthy(self.options.get("vertex", os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "")))
        if self.vertex and self.visual == "offsets":
            raise ValueError("gemini on Vertex AI: the Files API (needed by -J visual=offsets, the default) is not "
                             "available there; pass -J visual=frames or -J visual=clip")
        key = self.options.get("api_key") or (None if self.vertex else os.environ.get("GEMINI_API_KEY")
                                              or os.environ.get("GOOGLE_API_KEY"))
        if not key and not self.vertex and not kw.get("dry_run"):
            raise ValueError("gemini: no API key; set GEMINI_API_KEY (or GOOGLE_API_KEY), or use Vertex AI "
                             "(GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION)")
        self._key = key or (None if self.vertex else "dry-run")
        self._http_client = http_client
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        #: the capped httpx client murgat made for the SDK on the current loop (none when one was given)
        self._own_http: Any = None
        self._uploads: dict[str, Any] = {}
        self._upload_locks: dict[str, asyncio.Lock] = {}
        self.poll_s = float(self.options.get("poll_s", 2.0))
        self.upload_timeout_s = float(self.options.get("upload_timeout_s", 600))

    @property
    def client(self) -> Any:
        """The SDK's client. Unless one was given, it posts through an httpx client of murgat's whose
        response bodies are capped (:mod:`murgat.judges.bodycap`; google-genai's own, aiohttp where it is
        installed, read any body whole), made anew for each event loop it is used on: a connection pool
        belongs to the loop that opened it (a run's judge probes ask on one loop, its items on another)."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if self._client is None or (self._http_client is None and loop is not self._client_loop):
            self._client = self._make_client()
            self._client_loop = loop
        return self._client

    def _make_client(self) -> Any:
        from google import genai
        from google.genai import types

        opts: dict[str, Any] = {"retry_options": types.HttpRetryOptions(attempts=1)}
        version = self.api_version()
        if version is not None:
            opts["api_version"] = version
        if self._http_client is not None:
            opts["httpx_async_client"] = self._http_client
        else:
            import httpx

            from murgat.judges.bodycap import client_hooks

            self._own_http = httpx.AsyncClient(timeout=None, event_hooks=client_hooks())
            opts["httpx_async_client"] = self._own_http
        http = types.HttpOptions(**opts)
        if self.vertex:
            return genai.Client(vertexai=True, api_key=self._key, http_options=http)
        return genai.Client(api_key=self._key, http_options=http)

    def api_version(self) -> str | None:
        """The API version to send: ``-J api_version``, else :data:`API_VERSION` for the Gemini
        Developer API unless ``GOOGLE_GENAI_API_VERSION`` is set; ``None`` (the SDK's choice) on Vertex."""
        if self.options.get("api_version"):
            return str(self.options["api_version"])
        if self.vertex or os.environ.get("GOOGLE_GENAI_API_VERSION"):
            return None
        return API_VERSION

    def where(self) -> str:
        base = os.environ.get("GOOGLE_VERTEX_BASE_URL" if self.vertex else "GOOGLE_GEMINI_BASE_URL")
        return base or ("Vertex AI" if self.vertex else "https://generativelanguage.googleapis.com")

    # ----- Files API -----
    async def _uploaded(self, source: str, picture_only: bool = True) -> Any:
        """Upload ``source`` (by default its picture-only version) once; wait until ACTIVE."""
        from google.genai import types

        silent = await asyncio.to_thread(silent_copy, source) if picture_only else Path(source)
        key = str(silent)
        lock = self._upload_locks.setdefault(key, asyncio.Lock())
        async with lock:
            if key in self._uploads:
                return self._uploads[key]
            mime = "video/mp4" if picture_only else media_mime(source)
            f = await self.client.aio.files.upload(
                file=str(silent), config=types.UploadFileConfig(mime_type=mime, display_name=Path(source).name))
            waited = 0.0
            while str(getattr(f.state, "name", f.state)) not in ("ACTIVE",):
                state = str(getattr(f.state, "name", f.state))
                if state == "FAILED":
                    raise JudgeError(f"gemini: upload of {source} failed on the server", retryable=False)
                if waited > self.upload_timeout_s:
                    raise JudgeError(f"gemini: upload of {source} not ACTIVE after {waited:.0f} s", retryable=True)
                await asyncio.sleep(self.poll_s)
                waited += self.poll_s
                f = await self.client.aio.files.get(name=f.name)
            self._uploads[key] = f
            return f

    async def aclose(self) -> None:
        if str(self.options.get("cleanup", "true")).lower() not in ("false", "0", "no"):
            for f in list(self._uploads.values()):
                try:
                    await self.client.aio.files.delete(name=f.name)
                except Exception:
                    pass
            self._uploads.clear()
        if self._own_http is not None and self._client_loop is asyncio.get_running_loop():
            await self._own_http.aclose()  # its connections belong to this loop; the next loop makes its own
            self._own_http = self._client = self._client_loop = None

    # ----- request building -----
    async def build_contents(self, req: JudgeRequest, account: Account | None = None) -> list[Any]:
        """The request's contents; ``account`` counts what they carry (:mod:`murgat.judges.account`):
        inline bytes and text exactly, the body's size as base64 of those plus the text (an estimate:
        the SDK serialises it)."""
        from google.genai import types

        acct = account if account is not None else Account()
        parts: list[Any] = []
        for p in req.parts:
            if isinstance(p, TextPart):
                parts.append(types.Part.from_text(text=p.text))
                acct.text(p.text)
            elif isinstance(p, EvidenceTextPart):
                parts.append(types.Part.from_text(text=p.as_text()))
                acct.text(p.as_text())
            elif isinstance(p, ImagePart):
                data = p.encoded()
                parts.append(types.Part.from_bytes(data=data, mime_type=p.mime))
                if p.image is not None:
                    acct.image_array(p.image)
                else:
                    acct.image_bytes(data)
                acct.inline_bytes += len(data)
            elif isinstance(p, AudioPart):
                data = p.wav()
                parts.append(types.Part.from_bytes(data=data, mime_type="audio/wav"))
                acct.audio(len(p.samples) / max(p.sr, 1))
                acct.inline_bytes += len(data)
            elif isinstance(p, VideoPart):
                parts.extend(await self._video_parts(p, acct))
            elif isinstance(p, MediaPart) and self.vertex:  # no Files API on Vertex: the file goes inline
                data = await asyncio.to_thread(Path(p.path).read_bytes)
                mime = media_mime(p.path)
                parts.append(types.Part(inline_data=types.Blob(data=data, mime_type=mime),
                                        video_metadata=types.VideoMetadata(fps=p.fps) if mime.startswith("video/") else None))
                acct.whole_file()
                acct.inline_bytes += len(data)
            elif isinstance(p, MediaPart):
                f = await self._uploaded(p.path, picture_only=False)
                meta = types.VideoMetadata(fps=p.fps) if (f.mime_type or "").startswith("video/") else None
                parts.append(types.Part(file_data=types.FileData(file_uri=f.uri, mime_type=f.mime_type or media_mime(p.path)),
                                        video_metadata=meta))
                acct.whole_file()
        return [types.Content(role="user", parts=parts)]

    async def _video_parts(self, p: VideoPart, acct: Account) -> list[Any]:
        from google.genai import types

        if self.visual == "frames" or (self.visual == "offsets" and p.end - p.start < 1.0 / max(p.fps, 1e-6)):
            out = []
            for f in p.frames:
                img = ImagePart(image=f.image, time=f.time)
                label = frame_label(f.time)
                out.append(types.Part.from_text(text=label))
                data = img.encoded()
                out.append(types.Part.from_bytes(data=data, mime_type="image/jpeg"))
                acct.text(label)
                acct.image_array(f.image)
                acct.inline_bytes += len(data)
            return out
        meta = types.VideoMetadata(start_offset=f"{p.start:.3f}s", end_offset=f"{p.end:.3f}s", fps=offsets_fps(p))
        acct.clip(p.end - p.start)
        if self.visual == "clip":
            from murgat.media.clips import video_clip

            clip, _ = await asyncio.to_thread(video_clip, p.source, p.start, p.end)
            data = Path(clip).read_bytes()
            acct.inline_bytes += len(data)
            return [types.Part(inline_data=types.Blob(data=data, mime_type="video/mp4"),
                               video_metadata=types.VideoMetadata(fps=p.fps))]
        f = await self._uploaded(p.source)
        return [types.Part(file_data=types.FileData(file_uri=f.uri, mime_type=f.mime_type or "video/mp4"),
                           video_metadata=meta)]

    def build_config(self, req: JudgeRequest) -> Any:
        from google.genai import types

        cfg = req.config
        kw: dict[str, Any] = {"temperature": cfg.temperature, "max_output_tokens": cfg.max_tokens,
                              "candidate_count": cfg.samples}
        if cfg.seed is not None:
            kw["seed"] = cfg.seed
        if req.system:
            kw["system_instruction"] = req.system
        if req.schema is not None:
            kw["response_mime_type"] = "application/json"
            kw["response_json_schema"] = req.schema
        thinking = gemini_thinking(self.model, cfg.reasoning_effort)
        if thinking:
            kw["thinking_config"] = types.ThinkingConfig.model_validate(thinking)
        return types.GenerateContentConfig(**kw)

    async def _call(self, req: JudgeRequest) -> RawAnswer:
        acct = Account()
        contents = await self.build_contents(req, acct)
        # base64 of the inline bytes, the text, and the request's envelope: the SDK's body within a few percent
        sent = acct.done(4 * ((acct.inline_bytes + 2) // 3) + acct.sent.text_chars + 200 * len(req.parts), exact=False)
        resp = await self.client.aio.models.generate_content(model=self.model, contents=contents,
                                                             config=self.build_config(req))
        um = resp.usage_metadata
        usage = Usage(input_tokens=(um.prompt_token_count or 0) if um else 0,
                      output_tokens=(um.candidates_token_count or 0) if um else 0,
                      thinking_tokens=(um.thoughts_token_count or 0) if um else 0)
        ans = self._answer(resp, usage)
        ans.sent = sent
        ans.modality_tokens = modality_tokens(um)
        return ans

    def _answer(self, resp: Any, usage: Usage) -> RawAnswer:
        raw = resp.model_dump(mode="json", exclude_none=True)
        fb = resp.prompt_feedback
        if fb is not None and fb.block_reason:
            return RawAnswer(text=None, usage=usage, raw=raw, blocked=True, block_reason=str(fb.block_reason))
        cand = (resp.candidates or [None])[0]
        finish = str(getattr(cand, "finish_reason", "") or "") if cand else ""
        texts = [pt.text for pt in ((cand.content.parts or []) if cand and cand.content else []) if pt.text and not pt.thought]
        if "SAFETY" in finish or "PROHIBITED" in finish or "BLOCKLIST" in finish:
            return RawAnswer(text="".join(texts) or None, usage=usage, raw=raw, blocked=True, block_reason=finish)
        return RawAnswer(text="".join(texts), usage=usage, raw=raw, model=resp.model_version or self.model,
                         truncated="MAX_TOKENS" in finish)

    def classify(self, exc: BaseException) -> JudgeError:
        if isinstance(exc, JudgeError):
            return exc
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            retry_after = None
            resp = getattr(exc, "response", None)
            headers = getattr(resp, "headers", None)
            if headers is not None:
                retry_after = headers.get("retry-after")
            return JudgeError(f"gemini HTTP {exc.code}: {exc.message or exc.status}", retryable=exc.code in RETRYABLE,
                              status=exc.code, retry_after=retry_after)
        import httpx

        if isinstance(exc, httpx.TimeoutException | httpx.TransportError | asyncio.TimeoutError | TimeoutError):
            return JudgeError(f"gemini: {type(exc).__name__}{': ' + str(exc) if str(exc) else ''} ({self.where()})",
                              retryable=True, unreachable=isinstance(exc, httpx.ConnectError))
        return super().classify(exc)
