"""The SQLite response cache: key recipe, concurrency, crash safety."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from murgat.judges.cache import ResponseCache, request_key
from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import AudioPart, GenerateConfig, JudgeOutput, JudgeRequest, TextPart


def req(text: str = "q", **cfg) -> JudgeRequest:
    return JudgeRequest(parts=[TextPart(text), AudioPart(samples=np.ones(10, np.float32))], config=GenerateConfig(**cfg))


def test_key_recipe() -> None:
    base = request_key("gemini", "m1", req())
    assert request_key("gemini", "m2", req()) != base, "changing the model must miss"
    assert request_key("gemini", "m1", req(concurrency=32, timeout_s=5, retries=0)) == base, "transport settings must hit"
    assert request_key("gemini", "m1", req(temperature=0.7)) != base
    assert request_key("gemini", "m1", req("other")) != base
    other_audio = JudgeRequest(parts=[TextPart("q"), AudioPart(samples=np.zeros(10, np.float32))])
    assert request_key("gemini", "m1", other_audio) != base, "media content is part of the key"


async def test_judge_hits_cache_and_counts(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    j = ScriptedJudge(lambda r: "yes", cache=cache)
    a = await j.generate(req())
    b = await j.generate(req(concurrency=64))
    assert not a.cached and b.cached and j.stats.calls == 1 and j.stats.cache_hits == 1
    j2 = ScriptedJudge(lambda r: "yes", model="other", cache=cache)
    assert not (await j2.generate(req())).cached


async def test_errors_are_not_cached(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")

    def boom(r):
        raise TimeoutError("slow")

    j = ScriptedJudge(boom, cache=cache)
    j._sleep = _nosleep  # type: ignore[method-assign]
    out = await j.generate(req(retries=1))
    assert out.error and len(cache) == 0


async def _nosleep(s: float) -> None:
    return None


def _writer(path: str, start: int, n: int) -> None:
    c = ResponseCache(path)
    for i in range(start, start + n):
        c.put(f"k{i}", "p", "m", JudgeOutput(text=f"answer {i}"))


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path).close()
    ctx = mp.get_context("spawn")
    ps = [ctx.Process(target=_writer, args=(path, k * 300, 300)) for k in range(2)]
    for p in ps:
        p.start()
    for p in ps:
        p.join(120)
        assert p.exitcode == 0
    c = ResponseCache(path)
    assert len(c) == 600
    assert c.get("k0").text == "answer 0" and c.get("k599").text == "answer 599"


def test_killed_writer_leaves_a_readable_cache(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite"
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "from murgat.judges.cache import ResponseCache\nfrom murgat.judges.types import JudgeOutput\n"
        f"c = ResponseCache({str(path)!r})\ni = 0\n"
        "while True:\n    c.put(f'k{i}', 'p', 'm', JudgeOutput(text='x' * 2000)); i += 1\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 30
    while time.time() < deadline and (not path.exists() or path.stat().st_size < 200_000):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    c = ResponseCache(path)
    n = len(c)
    assert n > 10
    assert c.get("k0").text == "x" * 2000
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_unusable_answers_are_never_cached_and_old_ones_are_misses(tmp_path: Path) -> None:
    """Empty text, JSON that does not parse for a schema request, and a verdict request with no
    label are returned (and recorded as unparseable) but never stored; such a row written by an
    older version is a miss, so a recovered judge is asked again."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    answers = iter(["", "not json", "the weather is nice", "yes"])
    j = ScriptedJudge(lambda r: next(answers), cache=cache)
    plain = JudgeRequest(parts=[TextPart("a")])
    schema = JudgeRequest(parts=[TextPart("b")], schema={"type": "object"})
    verdict = JudgeRequest(parts=[TextPart("c")], expects="verdict")
    assert (await j.generate(plain)).text == ""
    assert (await j.generate(schema)).parse_error
    assert (await j.generate(verdict)).text == "the weather is nice"
    assert len(cache) == 0
    # a garbage row stored by an older murgat is not served
    cache.put(j.key(verdict), j.provider, j.model, JudgeOutput(text="the weather is nice"))
    again = await j.generate(verdict)
    assert again.text == "yes" and not again.cached and j.stats.calls == 4
    assert (await j.generate(verdict)).cached  # a usable answer is cached as before


def test_endpoint_environment_enters_the_key(monkeypatch) -> None:
    """A second run on another server (picked by ``OPENAI_BASE_URL``, a Gemini base URL or Vertex
    project, an HF mirror) must not be served the first server's answers; an explicit
    ``-J base_url`` and the same URL from the environment are one key."""
    from murgat.judges import make_judge

    def key(spec: str, **opts: str) -> str:
        return make_judge(spec, {"api_key": "k", **opts}).key(JudgeRequest(parts=[TextPart("q")]))

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    default = key("openai:m")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://a:8000/v1")
    at_a = key("openai:m")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://b:8000/v1")
    at_b = key("openai:m")
    assert len({default, at_a, at_b}) == 3
    assert at_a == key("openai:m", base_url="http://a:8000/v1")
    assert key("openai:m", base_url="http://a:8000/v1") == at_a, "an explicit option wins over the environment"
    for var in ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(var, raising=False)
    g0 = key("gemini:g")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://proxy")
    g1 = key("gemini:g")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p2")
    assert len({g0, g1, key("gemini:g")}) == 3


def test_keys_of_unchanged_requests_are_pinned(monkeypatch) -> None:
    """Cached answers stay reachable: these keys were computed before the HTTP and parsing changes of
    the real-server work (new wire fields such as ``max_completion_tokens``, the ``truncated`` flag of
    outputs) and must never move for the same request, judge and options."""
    from murgat.judges import make_judge

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    r1 = JudgeRequest(parts=[TextPart("Claim: a bell rings.\nyes or no?")], task="entail", expects="verdict")
    r2 = JudgeRequest(parts=[TextPart("q"), AudioPart(samples=np.ones(10, np.float32))],
                      config=GenerateConfig(temperature=0.5, max_tokens=64))
    r3 = JudgeRequest(parts=[TextPart("facts?")], schema={"type": "object"}, key_hint="media-recipe-1", system="sys")
    assert request_key("gemini", "gemini-2.5-flash", r1) == "f4eef0ff3c12242e747e7d64d4de961e00da35ad0dfc0554921aa9992ea8ea64"
    assert request_key("openai", "m", r2, {"video": "clip"}) == "59bd8e1ac4146202d6985a642dcb55aacd1dd5775739bf8f5692fb5ad434b77d"
    assert request_key("cassette", "", r3, {}) == "f02cbdd94201db43f62da787b2290023bb7d7a3281964d2fa008245ea8f57e87"
    local = make_judge("openai:Qwen/Qwen2.5-Omni-7B", {"api_key": "k", "base_url": "http://127.0.0.1:8000/v1"})
    assert local.key(r1) == "2cfc5a30ee3c466f2a5f12108eba761c17f34413b38a4f5c1aad475400e06336"
    reasoning = make_judge("openai:gpt-5-mini", {"api_key": "k"})  # now sent max_completion_tokens: same key
    assert reasoning.key(r1) == "782287162cc8d9d5e832bd9d55ab51dc4eecff9680c71dc8ed8412e870362fe1"
