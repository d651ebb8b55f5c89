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

from .test_openai_wire import completion, judge
from .wire import Wire, ok, status


@pytest.mark.parametrize(("value", "expected"), [
    ("7", 7.0), ("1.5", 1.5), (" 0 ", 0.0), (3, 3.0), ("3600", 3600.0),
    ("inf", None), ("Infinity", None), ("nan", None), ("-5", None), ("soon", None), ("", None), (None, None),
    ("Wed, 32 Foo 2015 07:28:00 GMT", None),
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


@pytest.mark.parametrize("header", ["3600", "inf", "1e308", "Fri, 31 Dec 9999 23:59:59 GMT"])
async def test_retry_after_is_capped_by_the_backoff_ceiling(header: str) -> None:
    wire = Wire().queue(status(429, headers={"retry-after": header}), ok(completion("yes")))
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
    """With the real sleep: a server asking for an hour costs at most the configured ceiling."""
    from murgat.judges.openai_compat import OpenAIJudge

    wire = Wire().queue(status(429, headers={"retry-after": "3600"}), ok(completion("yes")))
    j = OpenAIJudge("m", {"base_url": "http://vllm.test/v1"}, http_client=wire.client())
    t0 = time.monotonic()
    out = await j.generate(_req(retries=1, backoff_max_s=0.2))
    assert out.text == "yes" and time.monotonic() - t0 < 10
