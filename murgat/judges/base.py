"""The judge interface and the machinery every provider shares, written once.

A provider implements :meth:`Judge._call` (one attempt, provider wire format) and, if its
SDK raises its own exception types, :meth:`Judge.classify`. The base class adds, in this
order: response cache lookup → dry-run short cut → concurrency and rate limits → attempts
with timeout, exponential backoff with full jitter (honouring ``Retry-After``) on 429, 5xx
and timeouts, fail-fast on other 4xx → answer parsing → cache write → accounting.

An endpoint that cannot be reached at all (connection refused, no such host, a TLS failure:
:attr:`JudgeError.unreachable`) before it has answered once stops the run:
:class:`JudgeUnreachable` is raised after :data:`UNREACHABLE_WINDOW_S` of such failures instead of
every item ending in an error record after minutes of retries. Once an endpoint has answered,
the same failures are retried like timeouts and 5xx (a server restarting mid-run).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import email.utils
import math
import os
import random
import re
import sys
import time
import uuid
import weakref
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from murgat.judges.account import IdentityTracker, JudgeIdentity, Sent, SentTotals, media_warnings
from murgat.judges.cache import ResponseCache, request_key
from murgat.judges.parsing import TRUNCATED, parse_json_answer, parse_verdict
from murgat.judges.pricing import list_price
from murgat.judges.types import AudioPart, GenerateConfig, ImagePart, JudgeOutput, JudgeRequest, TextPart, Usage, VideoPart

#: RFC 9110 delta-seconds, ASCII digits (a fraction or an exponent, which some servers send, is tolerated)
_DELTA_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE]\+?[0-9]+)?")


def parse_retry_after(value: str | float | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value, or ``None`` when it says nothing usable.

    Accepts delta-seconds (``"7"``, ``"1.5"``; ASCII digits only) and an HTTP-date (``"Wed, 21 Oct 2015
    07:28:00 GMT"``, turned into seconds from ``now``; a date in the past is 0). Junk,
    negative, infinite and NaN values are treated as absent. The caller caps the result
    (``backoff_max_s``): a server may ask for an hour, a run will not wait that long.
    """
    if value is None:
        return None
    if isinstance(value, int | float):
        v = float(value)
        return v if math.isfinite(v) and v >= 0 else None
    text = str(value).strip()
    if not text:
        return None
    if _DELTA_SECONDS.fullmatch(text):  # ASCII digits only: float() also takes "1_000" and "٣"
        v = float(text)
        return v if math.isfinite(v) else None
    if text[:1] in "+-" or text[:1].isdigit() or text.lower() in ("inf", "infinity", "nan"):
        return None  # a number, but not delta-seconds (negative, "1_000", "0x10"): treated as absent
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    ref = time.time() if now is None else now
    return max(0.0, when.timestamp() - ref)


Materialize = Callable[[], Awaitable[JudgeRequest]]

#: how much of an error body is kept in a failure's cause (enough to tell a proxy's page apart)
ERROR_BODY_CHARS = 200


def body_excerpt(content: bytes | str | None, limit: int = ERROR_BODY_CHARS) -> str:
    """The first bytes of an HTTP error body, whitespace folded, as text for an error message."""
    if not content:
        return "(empty body)"
    text = content.decode("utf-8", "replace") if isinstance(content, bytes | bytearray) else str(content)
    text = " ".join(text.split())
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def answer_problem(req: JudgeRequest, out: JudgeOutput) -> str | None:
    """Why an answer is not worth keeping in the response cache, or ``None`` when it is.

    An empty answer, JSON that does not parse for a schema request, and a ``verdict``
    request whose answer reads as no label at all are what a struggling server sends (an
    overloaded vLLM returning ``""``, a proxy's HTML page); caching them would serve the
    same garbage to every rerun, so ``--retry-errors`` and ``--overwrite`` could never
    reach the recovered judge. Provider errors and safety blocks are handled apart.
    """
    text = out.text
    if text is None or not text.strip():
        return "empty answer"
    if req.schema is not None and out.parse_error:
        return f"unparseable answer: {out.parse_error}"
    if req.expects == "verdict":
        verdict, problem = parse_verdict(text, truncated=out.truncated)
        if verdict == "unparseable":
            return f"unparseable answer: {problem}"
    return None


def fits_cap(out: JudgeOutput, max_tokens: int) -> bool:
    """Whether ``out`` (an answer to the same request with a larger cap) is also the answer to it with
    ``max_tokens``: it ended on its own within that many answer tokens. Generation stops at the cap
    and nowhere else, so such an answer is the same token for token. The count is the server's
    (``usage.output_tokens``). An answer with no count comes from a provider that writes no tokens
    under a cap (the offline judge's rules, a recorded exchange): the cap cannot have changed it."""
    if out.truncated:
        return False
    used = out.usage.output_tokens
    return used <= 0 or used <= max_tokens


class JudgeError(Exception):
    """A provider failure. ``retryable`` decides between backoff and failing fast; ``unreachable``
    marks a failure before any byte reached a server (connection refused, DNS, TLS handshake),
    which stops the run when the endpoint never answered (:class:`JudgeUnreachable`)."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None,
                 retry_after: str | float | None = None, unreachable: bool = False):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = parse_retry_after(retry_after)
        self.unreachable = unreachable


class JudgeUnreachable(RuntimeError):
    """The judge's endpoint could not be reached (connection refused, no such host, TLS failure)
    and has not answered once in this run: the run stops with this cause instead of marking every
    item failed. The item loop treats it as run-stopping (``murgat.engine.loop.STOPS_RUN``)."""


#: seconds of connection failures to an endpoint that never answered before the run is stopped
UNREACHABLE_WINDOW_S = 3.0


@dataclass
class RawAnswer:
    """What one provider attempt returns before parsing."""

    text: str | None
    usage: Usage = field(default_factory=Usage)
    raw: Any = None
    blocked: bool = False
    block_reason: str | None = None
    model: str | None = None
    #: the server stopped the answer at the token cap (``finish_reason: "length"``, ``MAX_TOKENS``)
    truncated: bool = False
    #: what the attempt carried (providers that build a wire request count it while building)
    sent: Sent | None = None
    #: prompt tokens per modality, only those the provider counts (``audio``, ``image``, ``video``, ``text``)
    modality_tokens: dict[str, int] | None = None
    system_fingerprint: str | None = None


class JudgeStats(BaseModel):
    """Running totals for progress bars and run summaries."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: int = 0
    blocked: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    cost_usd: float = 0.0
    #: answered calls of a model with no known price: ``cost_usd`` leaves them out (a lower bound)
    unpriced_calls: int = 0
    dry_run_calls: int = 0
    est_input_tokens: int = 0
    # what the answered requests carried (flat numbers, as every field here: commands and the Ray driver
    # sum stats field by field); the full account, image sizes included, is Judge.sent_totals
    sent_requests: int = 0
    sent_images: int = 0
    sent_pixels: int = 0
    sent_unlabelled_images: int = 0
    sent_audio_s: float = 0.0
    sent_video_s: float = 0.0
    sent_bytes: int = 0
    #: answers whose per-modality token counts say the server may have dropped media
    media_warnings: int = 0


class _RateLimiter:
    """Sliding one-minute windows for requests and (estimated) tokens."""

    def __init__(self, rpm: float | None, tpm: float | None, window_s: float = 60.0) -> None:
        self.rpm, self.tpm = rpm, tpm
        self.window_s = window_s
        self.events: list[tuple[float, int]] = []
        self.lock = asyncio.Lock()

    async def acquire(self, tokens: int) -> None:
        if not self.rpm and not self.tpm:
            return
        while True:
            async with self.lock:
                now = time.monotonic()
                self.events = [(t, n) for t, n in self.events if now - t < self.window_s]
                req_ok = not self.rpm or len(self.events) < self.rpm
                tok_ok = not self.tpm or sum(n for _, n in self.events) + tokens <= self.tpm or not self.events
                if req_ok and tok_ok:
                    self.events.append((now, tokens))
                    return
                wait = self.window_s - (now - self.events[0][0]) + 0.01
            await asyncio.sleep(max(0.01, wait))


class ProviderPause:
    """A provider asked to slow down (HTTP 429 or a ``Retry-After``) is paused for every request.

    The request that met the refusal holds the pause: it waits what the server asked (or its
    backoff) and then sends again as the one probe, while every other request of that provider
    waits here instead of sending or sleeping on its own. The probe's answer reopens the
    provider; a refused probe keeps it paused; a probe that gives up hands the pause back.
    A server asking for longer than a request may wait (``--backoff-max``, what is left of
    ``--max-retry-time``) fails that request at once, and requests that start while that wait
    runs fail without being sent (:meth:`refuse`).

    Locally there is one per provider scope and event loop (:func:`_pause_for`). On Ray the limit
    service keeps one per scope for the whole cluster and workers reach it through a proxy with
    the same async methods (:mod:`murgat.engine.scaleout.worker`), so the attempt loop is the same code
    in both places and a storm costs the same. There a holder whose worker died must not pause
    the cluster for ever: with ``lease_s`` a hold lapses unless renewed within it (:meth:`renew`).
    Requests are named by a string (``who``) so the name can travel to the service.
    """

    def __init__(self, lease_s: float | None = None) -> None:
        self.reopened = asyncio.Event()
        self.reopened.set()
        self.lease_s = lease_s
        self.holder: str | None = None
        self.holder_until = math.inf
        self.refuse_until = 0.0
        self.refuse_reason = ""
        self.pauses = 0  # times the provider was paused (a hold taken while none was held)

    def _current(self) -> str | None:
        if self.holder is not None and time.monotonic() >= self.holder_until:
            self.holder = None  # the holder stopped renewing: its worker is gone
            self.reopened.set()
        return self.holder

    async def wait_turn(self, who: str) -> tuple[float, str]:
        """Wait while another request holds the pause; then (seconds during which no request may
        be sent because the server asked for a wait longer than requests may take, the reason)."""
        while (holder := self._current()) is not None and holder != who:
            if self.lease_s is None:
                await self.reopened.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.reopened.wait(), max(0.01, self.holder_until - time.monotonic()))
        return max(0.0, self.refuse_until - time.monotonic()), self.refuse_reason

    async def hold(self, who: str) -> bool:
        """Pause the provider with ``who`` as its probe, unless another request already holds the
        pause (``who`` was sent before it began: it waits for that probe). Whether ``who`` holds it."""
        holder = self._current()
        if holder is not None and holder != who:
            return False
        if holder is None:
            self.pauses += 1
        self.holder = who
        self.reopened.clear()
        await self.renew(who)
        return True

    async def renew(self, who: str) -> None:
        """``who`` still holds the pause: with ``lease_s``, its hold lasts ``lease_s`` from now."""
        if self.holder == who:
            self.holder_until = time.monotonic() + self.lease_s if self.lease_s is not None else math.inf

    async def release(self, who: str) -> None:
        if self.holder == who:
            self.holder = None
            self.reopened.set()

    async def refuse(self, for_s: float, reason: str) -> None:
        """For ``for_s`` seconds, requests that may not wait that long fail without being sent."""
        self.refuse_until = max(self.refuse_until, time.monotonic() + for_s)
        self.refuse_reason = reason


_PAUSES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, ProviderPause]] = weakref.WeakKeyDictionary()


def _pause_for(scope: str) -> ProviderPause:
    """The pause of ``scope`` in the running event loop (per loop: asyncio objects are loop-bound)."""
    per_loop = _PAUSES.setdefault(asyncio.get_running_loop(), {})
    if scope not in per_loop:
        per_loop[scope] = ProviderPause()
    return per_loop[scope]


def estimate_tokens(req: JudgeRequest) -> int:
    """A rough pre-call token estimate (text/4; Gemini-like media rates) for limits and dry runs."""
    n = 0
    for p in req.parts:
        if isinstance(p, TextPart):
            n += len(p.text) // 4 + 1
        elif isinstance(p, ImagePart):
            n += 258
        elif isinstance(p, AudioPart):
            n += int(32 * (len(p.samples) / max(p.sr, 1))) + 1
        elif isinstance(p, VideoPart):
            n += 258 * max(1, len(p.frames))
        else:
            n += len(getattr(p, "text", "")) // 4 + 1
    return n + (len(req.system) // 4 if req.system else 0)


@dataclass
class _Tries:
    """What one request's attempts have done so far: the state the retry loop's steps share."""

    started: float
    deadline: float
    retries: int = 0
    waited: float = 0.0
    unreachable_waited: float = 0.0
    last: JudgeError | None = None
    gave_up: str = ""


class Judge(ABC):
    """One provider + model. Subclasses set ``provider`` and implement :meth:`_call`."""

    provider: ClassVar[str] = "abstract"
    #: option names (``-J key=value``) that change answers and so enter the cache key
    answer_options: ClassVar[tuple[str, ...]] = ()
    #: True for judges that read ASR/OCR text instead of pixels and samples
    needs_evidence_text: ClassVar[bool] = False
    #: the request tasks (``JudgeRequest.task``) this judge can answer; ``None``: any, because it
    #: reads the rendered prompt. A rule-based judge names the few it implements, so a command
    #: that needs another is refused before any work instead of labelling everything unreadable.
    tasks: ClassVar[frozenset[str] | None] = None
    #: environment variables that pick the endpoint or the model behind it: the ones set
    #: enter the cache key, so a run against another server is not served this one's answers
    endpoint_env: ClassVar[tuple[str, ...]] = ()
    _semaphores: ClassVar[dict[tuple[str, int], asyncio.Semaphore]] = {}
    _limiters: ClassVar[dict[str, _RateLimiter]] = defaultdict(lambda: _RateLimiter(None, None))

    def __init__(
        self,
        model: str,
        options: dict[str, Any] | None = None,
        *,
        cache: ResponseCache | None = None,
        dry_run: bool = False,
        config: Any = None,
    ) -> None:
        self.model = model
        self.options = dict(options or {})
        self.cache = cache
        self.dry_run = dry_run
        self.default_config = config or GenerateConfig()
        self.stats = JudgeStats()
        self._sleep = asyncio.sleep
        self._key_opts: dict[str, Any] | None = None
        #: an answer (any HTTP reply) came back from the endpoint: connection failures are then retried
        self.reached = False
        self._unreachable_since: float | None = None
        self._identity = IdentityTracker(f"{self.provider}:{model}", self.provider, model)
        self._warned: set[str] = set()
        #: what this judge's answered requests carried, summed (:mod:`murgat.judges.account`)
        self.sent_totals = SentTotals()

    # ----- provider hooks -----
    @abstractmethod
    async def _call(self, req: JudgeRequest) -> RawAnswer:
        """One attempt in the provider's wire format; raise :class:`JudgeError` on failure."""

    def classify(self, exc: BaseException) -> JudgeError:
        """Map an SDK exception to a :class:`JudgeError` (override per provider)."""
        if isinstance(exc, JudgeError):
            return exc
        if isinstance(exc, asyncio.TimeoutError | TimeoutError):
            return JudgeError(f"{self.name}: timed out ({self.where()})", retryable=True)
        from murgat.judges.http import HttpConnectError, HttpError

        if isinstance(exc, HttpError):
            # a body over the cap or the shared budget (murgat.judges.bodycap), raised through an SDK's client:
            # the reason as the lean client words it, tried again with backoff as there
            return JudgeError(f"{self.name}: {exc} ({self.where()})", retryable=True,
                              unreachable=isinstance(exc, HttpConnectError))
        return JudgeError(f"{type(exc).__name__}: {exc}", retryable=False)

    def where(self) -> str:
        """The endpoint an attempt goes to, for error messages (a URL; the provider's name when none)."""
        return self.provider

    def _timed_out(self, budget: float, cfg: Any) -> JudgeError:
        """What an attempt abandoned by the per-attempt limit says: the endpoint and the limit that ran out."""
        if budget < cfg.timeout_s:
            limit = f"the {budget:.3g} s left of --max-retry-time {cfg.max_retry_time_s:g} s"
        else:
            limit = f"--timeout {cfg.timeout_s:g} s"
        return JudgeError(f"{self.name}: no answer from {self.where()} within {limit}", retryable=True)

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most providers hold nothing
        """Release provider resources (uploaded files, clients)."""

    def _count_sent(self, sent: Sent | None) -> None:
        if sent is None:
            return
        self.sent_totals.add(sent)
        st = self.stats
        st.sent_requests += 1
        st.sent_images += sent.images
        st.sent_pixels += sum(w * h for w, h in sent.image_sizes)
        st.sent_unlabelled_images += sent.unlabelled_images
        st.sent_audio_s = round(st.sent_audio_s + sent.audio_s, 3)
        st.sent_video_s = round(st.sent_video_s + sent.video_s, 3)
        st.sent_bytes += sent.request_bytes or 0

    def identity(self) -> JudgeIdentity:
        """The judge as requested and as its answers named it so far (model version strings, system
        fingerprints), with warnings for a floating alias or a model that changed mid-run."""
        return self._identity.identity()

    def _media_check(self, ans: RawAnswer) -> list[str]:
        """Warnings from the answer's per-modality token counts; each kind is printed once per judge
        and every such answer is counted (``stats.media_warnings``)."""
        found = media_warnings(ans.sent, ans.modality_tokens, f"{self.name} at {self.where()}")
        if found:
            self.stats.media_warnings += 1
            self.sent_totals.media_warnings += 1
            for kind, w in found.items():
                if kind not in self._warned:
                    self._warned.add(kind)
                    print(f"warning: {w} (each such answer is counted in the run's media account)", file=sys.stderr)
        return list(found.values())

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def refusal(self, *tasks: str) -> str | None:
        """Why this judge cannot serve a command that asks ``tasks``, or ``None`` when it can."""
        if self.tasks is None:
            return None
        missing = [t for t in tasks if t not in self.tasks]
        if not missing:
            return None
        return (f"judge {self.name} cannot answer {', '.join(missing)} requests (it answers only "
                f"{', '.join(sorted(self.tasks))}); choose a model judge")

    def key_options(self) -> dict[str, Any]:
        """What besides the request enters the cache key: the answer-changing ``-J`` options
        and the endpoint-picking environment variables that are set (unset ones are left
        out, so keys made without them stay valid)."""
        opts: dict[str, Any] = {k: self.options[k] for k in self.answer_options if k in self.options}
        env = {k: os.environ[k] for k in self.endpoint_env if os.environ.get(k)}
        if env:
            opts["env"] = env
        return opts

    def key(self, req: JudgeRequest) -> str:
        if self._key_opts is None:
            self._key_opts = self.key_options()  # the environment is read once, when the first key is made
        opts = self._key_opts
        memo = f"{self.provider}\0{self.model}\0{sorted(opts.items())!r}"
        key = req.key_memo.get(memo)
        if key is None:
            key = req.key_memo[memo] = request_key(self.provider, self.model, req, opts)
        return key

    # ----- the shared path -----
    def _semaphore(self, n: int) -> asyncio.Semaphore:
        loop_id = id(asyncio.get_running_loop())
        k = (f"{self.provider}:{loop_id}", n)
        if k not in self._semaphores:
            self._semaphores[k] = asyncio.Semaphore(n)
        return self._semaphores[k]

    def _limiter(self, rpm: float | None, tpm: float | None) -> _RateLimiter:
        k = f"{self.provider}:{id(asyncio.get_running_loop())}:{rpm}:{tpm}"
        lim = self._limiters[k]
        lim.rpm, lim.tpm = rpm, tpm
        return lim

    async def generate(self, req: JudgeRequest, materialize: Materialize | None = None) -> JudgeOutput:
        """Answer ``req``; with ``materialize`` the request's media are built only on a cache miss
        (``req`` then carries a ``key_hint`` and text parts only; the built request keeps the key)."""
        key = self.key(req)
        hit = self._cached(key, req)
        if hit is not None:
            return hit
        if materialize is not None and not self.dry_run:
            hint = req.key_hint
            req = await materialize()
            if req.key_hint != hint:
                # the built evidence had to be fitted to the provider's request limits: its recipe
                # says how, so the answer is keyed apart from one to the whole evidence
                key = self.key(req)
                hit = self._cached(key, req)
                if hit is not None:
                    return hit
        cfg = req.config
        est = estimate_tokens(req) if (self.dry_run or cfg.tpm) else 0
        if self.dry_run:
            self.stats.dry_run_calls += 1
            self.stats.est_input_tokens += est
            return JudgeOutput(error="dry-run: not sent", model=self.model, provider=self.provider)
        async with self._semaphore(cfg.concurrency):
            await self._limiter(cfg.rpm, cfg.tpm).acquire(est)
            out = await self._attempts(req)
        if req.schema is not None and out.error is None and not out.blocked:
            out.parsed, out.parse_error = parse_json_answer(out.text)
            if out.truncated and out.parse_error:
                out.parse_error = f"{TRUNCATED} before its JSON ended"
        if req.evidence_notes:
            out.evidence_notes = list(req.evidence_notes)  # cached with the answer: a rerun's record says the same
        if self.cache is not None and out.error is None and not out.blocked and answer_problem(req, out) is None:
            self.cache.put(key, self.provider, self.model, out)
        return out

    def _cached(self, key: str, req: JudgeRequest) -> JudgeOutput | None:
        """The cached answer to ``req``, or ``None``: a bad answer stored by an older version is a miss
        (the judge is asked again), and so is one longer than a sized answer cap (``req.key_config``:
        the request sent with the smaller cap would have been cut off there)."""
        if self.cache is None:
            return None
        hit = self.cache.get(key)
        if hit is None or answer_problem(req, hit) is not None:
            return None
        if req.key_config is not None and not fits_cap(hit, req.config.max_tokens):
            return None
        self.stats.cache_hits += 1
        self._identity.saw(hit.model, hit.system_fingerprint, cached=True)
        return hit.model_copy(update={"cached": True})

    def _pause(self, scope: str) -> ProviderPause:
        """The pause of a provider scope: this event loop's. The one place it is chosen: a judge in a
        Ray worker is given the cluster's instead (:func:`murgat.engine.scaleout.worker.wire_judge`)."""
        return _pause_for(scope)

    async def _attempts(self, req: JudgeRequest) -> JudgeOutput:
        if self._key_opts is None:
            self._key_opts = self.key_options()
        # one pause per server and model (rate limits are per model and account): provider, model, endpoint
        pause = self._pause(f"{self.name}|{sorted(self._key_opts.items())!r}")
        me = uuid.uuid4().hex
        try:
            return await self._attempts_paused(req, pause, me)
        finally:
            await pause.release(me)  # a probe that ends in any way (answer, failure, cancel) reopens the provider

    def _refused(self, req: JudgeRequest, reason: str, started: float) -> JudgeOutput:
        """A request failed without being sent: the server already asked for a longer wait than it may take."""
        self.stats.errors += 1
        return JudgeOutput(error=f"not sent: {reason}", latency_s=time.monotonic() - started, model=self.model,
                           provider=self.provider)

    async def _attempts_paused(self, req: JudgeRequest, pause: ProviderPause, me: str) -> JudgeOutput:
        """The retry loop every provider goes through: wait for the provider's turn, send with a
        deadline, and on a failure retry (a server that never answered, a retryable error) or stop;
        each step is one method below, so the loop reads as what it decides."""
        cfg = req.config
        started = time.monotonic()
        tries = _Tries(started=started, deadline=started + cfg.max_retry_time_s)
        for attempt in range(cfg.retries + 1):
            # another request may be waiting out the provider's "slow down": wait for its probe
            stop = await self._turn(tries, cfg, pause, me)
            if stop is not None:
                reason, gave_up = stop
                if tries.last is None:
                    return self._refused(req, reason, started)
                tries.gave_up = gave_up
                break
            try:
                # an attempt never runs past the request's overall deadline
                budget = min(cfg.timeout_s, max(0.001, tries.deadline - time.monotonic()))
                # asyncio.timeout runs the call in this task; wait_for (3.11) wrapped it in a new
                # task that started one loop turn later, on every call
                async with asyncio.timeout(budget):
                    ans = await self._call(req)
            except Exception as exc:
                err = self._timed_out(budget, cfg) if isinstance(exc, TimeoutError) else self.classify(exc)
                tries.last = err
                if err.unreachable and not self.reached:
                    await self._retry_unreachable(err, attempt, cfg, tries)
                    continue
                if not await self._retry_after(err, attempt, cfg, tries, pause, me):
                    break
                continue
            return self._answered(ans, started, tries.retries)
        return self._failed(tries)

    async def _turn(self, tries: _Tries, cfg: GenerateConfig, pause: ProviderPause,
                    me: str) -> tuple[str, str] | None:
        """Wait for this request's turn at the provider; ``(reason, what the failure adds)`` when it
        must not be sent (the deadline passed while paused, or the server asked for a longer wait
        than the limits allow), else None."""
        refuse_s, refuse_reason = await pause.wait_turn(me)
        now = time.monotonic()
        if now >= tries.deadline:
            reason = f"the provider stayed paused past --max-retry-time {cfg.max_retry_time_s:g} s"
            return reason, f"; gave up: {reason}"
        if refuse_s > 0:
            left = cfg.max_retry_time_s - max(now - tries.started, tries.waited)
            if refuse_s > cfg.backoff_max_s or refuse_s > left:
                return refuse_reason, f"; {refuse_reason}"
        return None

    async def _retry_unreachable(self, err: JudgeError, attempt: int, cfg: GenerateConfig, tries: _Tries) -> None:
        """Nothing has answered yet: wait a short while and retry, or raise :class:`JudgeUnreachable`
        once the window is spent, so a wrong URL or a server that is not up stops the run within seconds."""
        now = time.monotonic()
        if self._unreachable_since is None:
            self._unreachable_since = now
        delay = min(0.25 * 2**attempt, 1.0)
        # the window is wall time since the first failure, or this request's own waits where
        # the sleeps are not real time (a test's clock): never the sum over concurrent requests
        if (max(now - self._unreachable_since, tries.unreachable_waited) + delay > UNREACHABLE_WINDOW_S
                or attempt == cfg.retries):
            raise JudgeUnreachable(
                f"{self.name} cannot be reached: {err} (it has not answered once in this run; "
                f"check the URL and that the server is up)") from None
        tries.retries += 1
        self.stats.retries += 1
        tries.unreachable_waited += delay
        await self._sleep(delay)

    async def _retry_after(self, err: JudgeError, attempt: int, cfg: GenerateConfig, tries: _Tries,
                           pause: ProviderPause, me: str) -> bool:
        """After a failed attempt: back off and return True to try again, or False to stop (not
        retryable, attempts or time spent, a Retry-After past a limit: then requests starting
        meanwhile are told to fail too)."""
        if not err.retryable:
            return False
        spent = max(time.monotonic() - tries.started, tries.waited)
        throttled = err.status == 429 or err.retry_after is not None
        asked = err.retry_after
        if asked is not None and (asked > cfg.backoff_max_s or spent + asked > cfg.max_retry_time_s):
            # waiting would pass a limit anyway: fail now, and tell requests starting meanwhile
            limit = (f"--backoff-max {cfg.backoff_max_s:g} s" if asked > cfg.backoff_max_s else
                     f"what is left of --max-retry-time ({max(0.0, cfg.max_retry_time_s - spent):.0f} s)")
            reason = f"the server asked to wait {asked:g} s (Retry-After), longer than {limit}"
            tries.gave_up = f"; not retried: {reason}"
            await pause.refuse(asked, f"{self.provider} asked to wait {asked:g} s (Retry-After), longer than {limit}")
            return False
        if attempt == cfg.retries:
            return False
        delay = random.uniform(0, min(cfg.backoff_max_s, cfg.backoff_base_s * 2**attempt))
        if asked is not None:
            delay = max(delay, asked)
        if throttled and not await pause.hold(me):  # else this request waits and then probes for everyone
            # sent before another request paused the provider: wait for its probe, not on our own
            tries.retries += 1
            self.stats.retries += 1
            return True
        if spent + delay > cfg.max_retry_time_s:
            tries.gave_up = f"; gave up: retrying would pass --max-retry-time {cfg.max_retry_time_s:g} s"
            return False
        tries.retries += 1
        self.stats.retries += 1
        tries.waited += delay
        await self._sleep(delay)
        return True

    def _answered(self, ans: RawAnswer, started: float, retries: int) -> JudgeOutput:
        """An attempt that got an answer: counted (calls, tokens, cost, what was sent) and returned."""
        self.reached = True
        self.stats.calls += 1
        self.stats.input_tokens += ans.usage.input_tokens
        self.stats.output_tokens += ans.usage.output_tokens
        self.stats.thinking_tokens += ans.usage.thinking_tokens
        cost = self.cost(ans.usage)
        self.stats.cost_usd += cost
        if ans.blocked:
            self.stats.blocked += 1
        self._count_sent(ans.sent)
        self._identity.saw(ans.model, ans.system_fingerprint, cached=False)
        return JudgeOutput(
            text=ans.text, usage=ans.usage, latency_s=time.monotonic() - started, model=ans.model or self.model,
            provider=self.provider, retries=retries, blocked=ans.blocked, truncated=ans.truncated,
            error=f"blocked: {ans.block_reason}" if ans.blocked else None, raw=ans.raw, cost_usd=cost,
            sent=ans.sent, modality_tokens=ans.modality_tokens, system_fingerprint=ans.system_fingerprint,
            warnings=self._media_check(ans),
        )

    def _failed(self, tries: _Tries) -> JudgeOutput:
        """Every attempt failed (or the loop stopped): the last error, the attempts and why it stopped."""
        self.stats.errors += 1
        self.stats.calls += 1
        last = tries.last
        status = f" (HTTP {last.status})" if last and last.status and f"HTTP {last.status}" not in str(last) else ""
        return JudgeOutput(
            error=f"{last}{status} after {tries.retries + 1} attempt(s){tries.gave_up}" if last else f"failed{tries.gave_up}",
            latency_s=time.monotonic() - tries.started, model=self.model, provider=self.provider, retries=tries.retries,
        )

    def cost(self, usage: Usage) -> float:
        """USD for ``usage`` at the list price; 0.0 for a model with no known price (counted apart
        in :attr:`JudgeStats.unpriced_calls`, so a total over such calls is a lower bound)."""
        price = list_price(self.provider, self.model, self.options)
        if price is None:
            self.stats.unpriced_calls += 1
            return 0.0
        pin, pout = price
        return (usage.input_tokens * pin + (usage.output_tokens + usage.thinking_tokens) * pout) / 1e6
