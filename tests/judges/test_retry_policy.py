"""Retry-After handling and the per-request retry deadline (base judge machinery).

Driven through the real ``openai`` SDK against scripted Chat Completions error responses
(HTTP status + ``retry-after`` header, as the real API sends them).
"""

from __future__ import annotations

import email.utils
import time

import pytest

from murgat.judges.base import parse_retry_after
from murgat.judges.types import GenerateConfig, JudgeRequest, TextPart
from tests.judges.test_openai_wire import completion, judge
from tests.judges.wire import Wire, ok, status


@pytest.mark.parametrize(("value", "expected"), [
    ("7", 7.0), ("1.5", 1.5), (" 0 ", 0.0), (3, 3.0), ("3600", 3600.0),
    ("inf", None), ("Infinity", None), ("nan", None), ("-5", None), ("soon", None), ("", None), (None, None),
    ("Wed, 32 Foo 2015 07:28:00 GMT", None),
    # not delta-seconds (ASCII digits): float() took "1_000" as 1000 s and "\u0663" (Arabic-Indic 3) as 3 s
    ("1_000", None), ("\u0663", None), ("0x10", None), ("+5", None), ("1e3", 1000.0),
])
def test_parse_retry_after_forms(value, expected) -> None:
    assert parse_retry_after(value) == expected


def test_parse_retry_after_http_date() -> None:
    now = time.time()
    when = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(when, now=now) == pytest.approx(30, abs=1.0)
    assert parse_retry_after(email.utils.formatdate(now - 600, usegmt=True), now=now) == 0.0


def _req(**cfg) -> JudgeRequest:
    return JudgeRequest(parts=[TextPart("Is it raining? yes or no")], config=GenerateConfig(backoff_base_s=0.5, **cfg))


@pytest.mark.parametrize("header", ["3600", "1e308", "Fri, 31 Dec 9999 23:59:59 GMT"])
async def test_retry_after_past_the_backoff_ceiling_fails_at_once(header: str) -> None:
    """A server asking for longer than --backoff-max is not waited on in pieces (issue 22: a
    ``429 Retry-After: 3600`` made one request sleep 5 × 60 s): the request fails at once with
    that reason, and a request starting while that wait runs is not sent at all."""
    wire = Wire().queue(status(429, headers={"retry-after": header}), ok(completion("yes")))
    j = judge(wire)
    out = await j.generate(_req(retries=5, backoff_max_s=60.0))
    assert out.error is not None and "Retry-After" in out.error and "--backoff-max 60 s" in out.error
    assert j.slept == [] and len(wire.requests) == 1
    later = await j.generate(JudgeRequest(parts=[TextPart("another question")], config=GenerateConfig(backoff_max_s=60.0)))
    assert later.error is not None and later.error.startswith("not sent:") and len(wire.requests) == 1


async def test_retry_after_past_the_time_left_fails_at_once() -> None:
    wire = Wire().queue(status(429, headers={"retry-after": "50"}), ok(completion("yes")))
    j = judge(wire)
    out = await j.generate(_req(retries=5, backoff_max_s=60.0, max_retry_time_s=40.0))
    assert out.error is not None and "what is left of --max-retry-time" in out.error
    assert j.slept == [] and len(wire.requests) == 1


async def test_infinite_retry_after_is_junk_and_falls_back_to_backoff() -> None:
    wire = Wire().queue(status(429, headers={"retry-after": "inf"}), ok(completion("yes")))
    j = judge(wire)
    out = await j.generate(_req(retries=2, backoff_max_s=60.0))
    assert out.text == "yes" and j.slept and max(j.slept) <= 60.0


async def test_junk_retry_after_falls_back_to_backoff() -> None:
    wire = Wire().queue(status(503, headers={"retry-after": "later please"}), ok(completion("yes")))
    j = judge(wire)
    out = await j.generate(_req(retries=2, backoff_max_s=60.0))
    assert out.text == "yes" and j.slept[0] <= 0.5


async def test_max_retry_time_bounds_one_request() -> None:
    wire = Wire().queue(*[status(429, headers={"retry-after": "30"})] * 10)
    j = judge(wire)
    out = await j.generate(_req(retries=9, backoff_max_s=60.0, max_retry_time_s=45.0))
    # the first 30 s wait fits in 45 s, a second would make 60 s: the request gives up after 2 attempts
    assert out.error is not None and "max-retry-time" in out.error
    assert j.slept == [30.0] and len(wire.requests) == 2


async def test_real_clock_retry_after_3600_finishes_quickly() -> None:
    """With the real sleep: a server asking for an hour costs one request and no wait."""
    from murgat.judges.openai_compat import OpenAIJudge

    wire = Wire().queue(status(429, headers={"retry-after": "3600"}), ok(completion("yes")))
    j = OpenAIJudge("m", {"base_url": "http://vllm.test/v1"}, http_client=wire.client())
    t0 = time.monotonic()
    out = await j.generate(_req(retries=1, backoff_max_s=0.2))
    # not the hour asked for (a bound no load reaches)
    assert out.error is not None and "3600" in out.error and len(wire.requests) == 1 and time.monotonic() - t0 < 60


async def test_a_slow_down_pauses_the_provider_for_everyone_with_one_probe() -> None:
    """Eight requests in flight all meet ``429 Retry-After: 2``. Before, each slept on its own and
    all eight came back at once (another storm); now the first one waits once and probes alone,
    and the others are sent only after its answer."""
    import asyncio

    from murgat.judges.base import Judge, JudgeError, RawAnswer

    n = 8
    arrived = asyncio.Event()
    state = {"throttled": 0, "recovered": False}
    events: list[tuple[str, int]] = []
    slept: list[float] = []

    class Throttled(Judge):
        provider = "throttled"

        async def _call(self, req: JudgeRequest) -> RawAnswer:
            i = int(req.parts[0].text)
            if not state["recovered"]:
                state["throttled"] += 1
                if state["throttled"] < n:
                    await arrived.wait()  # every request is in flight before the server pushes back
                arrived.set()
                raise JudgeError("HTTP 429: slow down", retryable=True, status=429, retry_after="2")
            events.append(("start", i))
            for _ in range(3):
                await asyncio.sleep(0)
            events.append(("end", i))
            return RawAnswer(text="yes")

    async def fake_sleep(s: float) -> None:
        slept.append(s)
        state["recovered"] = True

    j = Throttled("m")
    j._sleep = fake_sleep  # type: ignore[method-assign]
    cfg = GenerateConfig(backoff_base_s=0.5, retries=3, concurrency=n)
    outs = await asyncio.gather(*(j.generate(JudgeRequest(parts=[TextPart(str(i))], config=cfg)) for i in range(n)))
    assert all(o.text == "yes" for o in outs)
    assert slept == [2.0], "one wait for the provider, not one per request"
    assert events[0][0] == "start" and events[1] == ("end", events[0][1]), "the probe is answered before anyone else is sent"
    assert len(events) == 2 * n
