"""A stand-in OpenAI-compatible server on 127.0.0.1 for command-line tests.

It speaks the Chat Completions wire format (``POST /v1/chat/completions`` →
``chat.completion`` objects; errors as JSON bodies with HTTP status codes), so the real
``openai`` SDK and murgat's real HTTP path are exercised end to end. Answers follow the
murgat prompt in the request: a decomposition prompt gets ``{"facts": [...]}``, any other
question gets ``yes``. ``mode = "fail"`` answers 503 to everything. ``script``, when set, is a
scripted model: it gets the request's prompt text and body and returns the answer text.
``slow_down = (retry_after_s, quiet_s, rounds)`` plays a provider's rate limiter in a storm that
lasts a number of waits, not of seconds, so that what a client sends is countable: from request
number ``slow_down_from`` on it answers ``429 Retry-After: retry_after_s`` at once to every
request, until ``rounds`` *probes* (requests that arrive at least ``quiet_s`` after the last
refused one: the client waited as asked) have been refused; the next probe is let in and the
storm is over. A request sent while the client was told to wait is refused and restarts the
wait, as limiters that count refused requests do. ``refused`` counts the 429s, ``late`` those
after the first probe that were not probes (sent while the client had been told to wait).

``honest = True`` makes it a judge that perceives (:class:`Senses`): it reads the numbers shown
in the images it receives and hears the words said in the audio it receives, and answers
entailment and step-labelling questions about murgat's probe clip from those alone. ``fault``
plays a serving stack that loses media before the model sees them: ``drop_audio`` (audio parts
removed), ``drop_images`` (image parts removed), ``shuffle_frames`` (the images of a request put
in reverse order, their text labels left in place), ``text_only`` (every media part removed).
The usage's ``prompt_tokens`` counts what reached the model (:func:`prompt_tokens`: a dropped part
adds nothing, as ``transformers serve`` counts). With ``audio_tokens = True`` the usage also reports
``prompt_tokens_details.audio_tokens`` as a server that counts audio does (0 when no audio reached
the model).

``wire``, when set, decides per request (from its prompt text and body) how the server misbehaves
on the wire: ``None`` answers as above; ``"500"`` answers HTTP 500; ``"close"`` closes the connection
without a byte of answer; ``"hang"`` never answers (until ``hang_s`` seconds or :meth:`kill`);
``"endless"`` sends the status line, headers and the start of a body, then never ends it (the same
bound). Both waits end when the server is killed, so a test's requests stay bounded. ``"flood"`` sends
a chunked body that never ends, as fast as the client reads it, until the client hangs up (or the same
bound): a lying server that would fill the client's memory.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def send_json(handler: BaseHTTPRequestHandler, code: int, data: bytes, headers: dict[str, str] | None = None) -> None:
    """One JSON answer with its length (the test servers' one writer: stand-in, recorder, proxy)."""
    handler.send_response(code)
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class StandIn:
    def __init__(self, die_after: int | None = None, latency: float = 0.0) -> None:
        self.mode = "ok"
        self.script: Callable[[str, dict[str, Any]], str] | None = None
        self.text: str | None = None  # when set, every question is answered with this text ("" for empty answers)
        self.honest = False
        self.fault: str | None = None  # drop_audio | drop_images | shuffle_frames | text_only
        self.audio_tokens = False
        self.seen: list[dict[str, Any]] = []  # per answered request: what reached the "model" after the fault
        self.requests: list[dict[str, Any]] = []
        self.body_sizes: list[int] = []  # bytes of each request body received
        self.latency = latency  # seconds before each answer
        self.received: list[tuple[str, float]] = []  # (SHA-256 of the body, arrival time)
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self.die_after = die_after
        self.dead = False
        self.slow_down: tuple[float, float, int] | None = None  # (Retry-After s, quiet s of a probe, probes refused)
        self.slow_down_from = 1  # the storm starts at this request (1: the first)
        self.refused = 0
        self.late = 0
        self.wire: Callable[[str, dict[str, Any]], str | None] | None = None  # see the module docstring
        self.hang_s = 30.0
        self._released = threading.Event()
        self._storm = "before"  # before → on → over
        self._last_refusal = 0.0
        self._probes = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}"
                body = json.loads(raw)
                if outer.dead:
                    self.close_connection = True
                    return
                outer.requests.append(body)
                outer.body_sizes.append(len(raw))
                with outer._lock:
                    outer.received.append((hashlib.sha256(raw).hexdigest(), time.time()))
                    refuse = outer._throttled()
                if outer.wire is not None and self._misbehave(outer.wire(prompt_of(body), body)):
                    return
                if refuse:
                    self._send(429, {"error": {"message": "Rate limit reached; slow down", "type": "requests",
                                               "code": "rate_limit_exceeded"}},
                               {"retry-after": f"{outer.slow_down[0]:g}"} if outer.slow_down else None)
                    return
                with outer._lock:
                    outer.in_flight += 1
                    outer.peak_in_flight = max(outer.peak_in_flight, outer.in_flight)
                try:
                    if outer.latency:
                        time.sleep(outer.latency)
                    self._answer(body)
                finally:
                    with outer._lock:
                        outer.in_flight -= 1

            def _answer(self, body: dict[str, Any]) -> None:
                if outer.die_after is not None and len(outer.requests) > outer.die_after:
                    # the server goes away mid-run: this request gets no answer, later ones no connection
                    outer.dead = True
                    threading.Thread(target=outer.kill, daemon=True).start()
                    self.close_connection = True
                    return
                if outer.mode == "fail":
                    self._send(503, {"error": {"message": "overloaded", "type": "server_error", "code": 503}})
                    return
                if outer.text is not None:
                    self._send(200, {
                        "id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": body.get("model", "m"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": outer.text},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": prompt_tokens(body), "completion_tokens": 1,
                                  "total_tokens": prompt_tokens(body) + 1}})
                    return
                text = "yes"
                body = apply_fault(body, outer.fault)
                prompt = " ".join(p.get("text", "") for m in body.get("messages", []) for p in
                                  (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}]))
                if "atomic facts" in prompt:
                    text = json.dumps({"facts": ["The woman speaks on the phone."]})
                tokens = prompt_tokens(body)  # what reached the "model", after the fault
                usage: dict[str, Any] = {"prompt_tokens": tokens, "completion_tokens": 1, "total_tokens": tokens + 1}
                if outer.honest:
                    senses = Senses.of(body)
                    outer.seen.append({"numbers": senses.numbers, "words": sorted(senses.words),
                                       "audio_parts": senses.audio_parts, "images": senses.images})
                    text = senses.answer(prompt) or text
                    if outer.audio_tokens:
                        usage["prompt_tokens_details"] = {"audio_tokens": 25 * senses.audio_parts, "cached_tokens": 0}
                if outer.script is not None:
                    text = outer.script(prompt, body)
                self._send(200, {
                    "id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": body.get("model", "m"),
                    "system_fingerprint": "fp_standin",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": usage,
                })

            def _send(self, code: int, doc: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                send_json(self, code, json.dumps(doc).encode(), headers)

            def _misbehave(self, action: str | None) -> bool:
                """Play ``action`` (``wire``'s answer); ``False`` when the request is answered normally."""
                if action is None:
                    return False
                if action == "500":
                    self._send(500, {"error": {"message": "internal error", "type": "server_error", "code": 500}})
                    return True
                if action == "endless":
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", "100000")
                    self.end_headers()
                    self.wfile.write(b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": [')
                    self.wfile.flush()
                if action == "flood":
                    self._flood()
                elif action in ("hang", "endless"):
                    outer._released.wait(outer.hang_s)
                elif action != "close":
                    raise ValueError(f"unknown wire action {action!r}")
                self.close_connection = True
                return True

            def _flood(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                piece = b"%x\r\n%s\r\n" % (1 << 16, b" " * (1 << 16))
                until = time.monotonic() + outer.hang_s
                try:
                    while not outer._released.is_set() and time.monotonic() < until:
                        self.wfile.write(piece)
                except OSError:
                    pass  # the client hung up: what it should do

        class Server(ThreadingHTTPServer):
            # socketserver's listen backlog of 5 drops the SYN of a 6th simultaneous connection, which
            # the client's kernel resends a second later: a request sent at once would arrive 1 s late
            request_queue_size = 128

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = serving_thread(self.server)

    def _throttled(self) -> bool:
        """Whether the request just received (under the lock) meets the rate limiter's 429."""
        if self.slow_down is None or self._storm == "over":
            return False
        now = time.monotonic()
        if self._storm == "before":
            if len(self.received) < self.slow_down_from:
                return False
            self._storm = "on"
        elif now - self._last_refusal >= self.slow_down[1]:
            self._probes += 1  # the client waited as asked: a probe
            if self._probes > self.slow_down[2]:
                self._storm = "over"
                return False
        elif self._probes:
            self.late += 1
        self._last_refusal = now
        self.refused += 1
        return True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def kill(self) -> None:
        self._released.set()
        self.server.shutdown()
        self.server.server_close()

    def __exit__(self, *exc: Any) -> None:
        if not self.dead:
            self.kill()


def serving_thread(server: Any) -> threading.Thread:
    """The daemon thread that serves a test's HTTP server (call ``start()``). It looks for a
    ``shutdown()`` every 0.05 s: socketserver's default of 0.5 s made each server's exit wait up
    to half a second, about 13 s of one run of the probing tests alone."""
    return threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)


def prompt_tokens(body: dict[str, Any]) -> int:
    """A server's prompt-token count of a request as its model received it: a token per 4 characters
    of text, 64 per image (a clip's frames included), 25 per audio part; a dropped part counts nothing."""
    n = 0
    for m in body.get("messages", []):
        content = m.get("content")
        for p in content if isinstance(content, list) else [{"type": "text", "text": content or ""}]:
            kind = p.get("type")
            if kind == "text":
                n += max(1, len(p.get("text", "")) // 4)
            elif kind == "image_url":
                n += 64
            elif kind == "video_url":
                n += 64 * len(_clip_frames(p["video_url"]["url"]))
            elif kind == "input_audio":
                n += 25
    return n


def prompt_of(body: dict[str, Any]) -> str:
    """The text parts of a Chat Completions request's messages, joined (what ``script`` and ``wire`` read)."""
    return " ".join(p.get("text", "") for m in body.get("messages", [])
                    for p in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}]))


# ----- an honest judge of the probe clip, and the faults of serving stacks -----

FAULTS = ("drop_audio", "drop_images", "shuffle_frames", "text_only")


def apply_fault(body: dict[str, Any], fault: str | None) -> dict[str, Any]:
    """``body`` as a faulty server would hand it to its model (see the module docstring)."""
    if fault is None:
        return body
    if fault not in FAULTS:
        raise ValueError(f"unknown stand-in fault {fault!r}")
    media = {"drop_audio": {"input_audio"}, "drop_images": {"image_url", "video_url"},
             "text_only": {"input_audio", "image_url", "video_url"}}.get(fault, set())
    out = dict(body)
    msgs = []
    for m in body.get("messages", []):
        content = m.get("content")
        if not isinstance(content, list):
            msgs.append(m)
            continue
        parts = [p for p in content if p.get("type") not in media]
        if fault == "shuffle_frames":
            at = [i for i, p in enumerate(parts) if p.get("type") == "image_url"]
            images = [parts[i] for i in at][::-1]
            parts = list(parts)
            for i, img in zip(at, images, strict=True):
                parts[i] = img
        msgs.append({**m, "content": parts})
    out["messages"] = msgs
    return out


@functools.cache  # one entry per image size received (a few): rebuilding them was most of the probes' time
def _number_templates(width: int, height: int) -> tuple[list[int], Any]:
    """Every two-digit number drawn as the probe clip draws it, at the size received (grey, 0-1)."""
    import numpy as np
    from PIL import Image

    from murgat.judging.probes.clip import HEIGHT, SCALE, WIDTH
    from murgat.judging.probes.glyphs import number_frame

    nums = list(range(10, 100))
    stack = []
    for n in nums:
        img = Image.fromarray(number_frame(str(n), WIDTH, HEIGHT, SCALE)).convert("L")
        if img.size != (width, height):
            img = img.resize((width, height), Image.BILINEAR)
        stack.append(np.asarray(img, dtype=np.float32) / 255.0)
    return nums, np.stack(stack)


@functools.lru_cache(maxsize=512)
def read_number(jpeg: bytes) -> int | None:
    """The probe number an image shows (nearest drawn number, when it is near), else ``None``.

    Remembered by the image's bytes: the probes send the same frames in request after request, and
    what an image shows depends on nothing else."""
    import io

    import numpy as np
    from PIL import Image

    img = Image.open(io.BytesIO(jpeg)).convert("L")
    grey = np.asarray(img, dtype=np.float32) / 255.0
    nums, templates = _number_templates(img.size[0], img.size[1])
    diffs = np.abs(templates - grey[None]).mean(axis=(1, 2))
    k = int(np.argmin(diffs))
    return nums[k] if diffs[k] < 0.02 else None


@functools.lru_cache(maxsize=1)
def _word_templates() -> dict[str, Any]:
    """Each probe word's phrase as the clip says it, at 16 kHz (resampled by ffmpeg, as murgat decodes)."""
    import subprocess

    import numpy as np

    from murgat.judging.probes.clip import PHRASE, SAMPLE_RATE, WORDS
    from murgat.judging.probes.media import speak

    out = {}
    for w in WORDS:
        pcm = speak(PHRASE.format(word=w))
        proc = subprocess.run(["ffmpeg", "-v", "error", "-f", "s16le", "-ar", str(SAMPLE_RATE), "-ac", "1", "-i", "pipe:0",
                               "-ar", "16000", "-f", "f32le", "pipe:1"], input=pcm.tobytes(), capture_output=True, check=True)
        out[w] = np.frombuffer(proc.stdout, dtype="<f4").astype(np.float64)
    return out


@functools.lru_cache(maxsize=256)
def hear_words(wav: bytes) -> frozenset[str]:
    """The probe words said in a WAV (normalised cross-correlation with each phrase above 0.9);
    remembered by the WAV's bytes, as :func:`read_number` is."""
    import io
    import wave

    import numpy as np

    with wave.open(io.BytesIO(wav)) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768.0
    heard = set()
    for word, t in _word_templates().items():
        if len(x) < len(t) // 2:
            continue
        n = 1 << int(np.ceil(np.log2(len(x) + len(t))))
        corr = np.fft.irfft(np.fft.rfft(x, n) * np.conj(np.fft.rfft(t, n)), n)[: len(x)]
        # energy of x under the template at each lag
        c2 = np.concatenate([[0.0], np.cumsum(x * x)])
        lags = np.arange(len(x))
        ends = np.minimum(lags + len(t), len(x))
        ex = c2[ends] - c2[lags]
        ncc = corr / (np.sqrt(np.maximum(ex, 1e-12)) * np.linalg.norm(t))
        if float(ncc.max()) > 0.9:
            heard.add(word)
    return frozenset(heard)


@functools.lru_cache(maxsize=64)
def _clip_frames(data_url: str) -> tuple[bytes, ...]:
    """A ``video_url`` clip's frames at 1 fps, as JPEG bytes (decoded with ffmpeg; remembered by the clip)."""
    import base64
    import subprocess
    import tempfile

    raw = base64.b64decode(data_url.split(",", 1)[1])
    with tempfile.TemporaryDirectory() as tmp:
        src = f"{tmp}/c.mp4"
        with open(src, "wb") as f:
            f.write(raw)
        subprocess.run(["ffmpeg", "-v", "error", "-i", src, "-vf", "fps=1", f"{tmp}/f%03d.jpg"], check=True)
        import glob

        return tuple(open(p, "rb").read() for p in sorted(glob.glob(f"{tmp}/f*.jpg")))


class Senses:
    """What a perceiving model takes from one request: numbers seen (in the order the images came),
    words heard; and its answers to murgat's probe questions about them."""

    def __init__(self) -> None:
        self.numbers: list[int | None] = []
        self.words: set[str] = set()
        self.audio_parts = 0
        self.images = 0

    @classmethod
    def of(cls, body: dict[str, Any]) -> Senses:
        import base64

        s = cls()
        for m in body.get("messages", []):
            content = m.get("content")
            for p in content if isinstance(content, list) else []:
                kind = p.get("type")
                if kind == "image_url":
                    s.images += 1
                    s.numbers.append(read_number(base64.b64decode(p["image_url"]["url"].split(",", 1)[1])))
                elif kind == "video_url":
                    for jpeg in _clip_frames(p["video_url"]["url"]):
                        s.images += 1
                        s.numbers.append(read_number(jpeg))
                elif kind == "input_audio":
                    s.audio_parts += 1
                    s.words |= hear_words(base64.b64decode(p["input_audio"]["data"]))
        return s

    def holds(self, claim: str) -> bool | None:
        """Whether a probe claim is what this request showed and said (``None``: not a probe claim)."""
        claim = re.sub(r"\s*\((?:audio|visual)[^)]*\)", "", claim).strip()
        seen = [n for n in self.numbers if n is not None]
        if m := re.fullmatch(r'The voice says "(\w+)"\.?', claim):
            return m.group(1) in self.words
        if m := re.fullmatch(r"(\d+) is displayed before (\d+)\.?", claim):
            a, b = int(m.group(1)), int(m.group(2))
            return a in seen and b in seen and seen.index(a) < seen.index(b)
        if m := re.fullmatch(r"(\d+) is displayed\.?", claim):
            return int(m.group(1)) in seen
        return None

    def answer(self, prompt: str) -> str | None:
        """The answer to an entailment or step-labelling prompt about the probe clip, else ``None``."""
        if m := re.search(r"Claim: (.*?)\n", prompt + "\n"):
            held = self.holds(m.group(1))
            return None if held is None else ("yes" if held else "no")
        if m := re.search(r"Step to (?:judge|review): (.*?)\n", prompt + "\n"):  # faith_step, faith_detect
            held = self.holds(m.group(1))
            if held is None:
                return None
            return json.dumps({"type": "perception", "modality": "visual", "faithful": held, "reason": "stand-in"})
        if "one entry per step" in prompt and (m := re.search(r"Steps:\n(.*?)\n\n", prompt, re.S)):
            rows = []
            for line in m.group(1).split("\n"):
                k, _, text = line.partition(". ")
                held = self.holds(text)
                rows.append({"index": int(k), "type": "perception" if held is not None else "reasoning",
                             "modality": "visual", "faithful": held, "reason": "stand-in"})
            return json.dumps({"steps": rows})
        return None
