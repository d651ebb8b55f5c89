"""Judges: one async interface, one module per provider, shared cache/retry/limits.

Name a judge as ``provider:model`` plus ``-J key=value`` options, e.g.
``gemini:gemini-2.5-flash -J visual=offsets``, ``openai:Qwen/Qwen2.5-Omni-7B -J
base_url=http://localhost:8000/v1``, ``hf:/models/qwen2.5-vl-3b``, ``embedded``,
``replay:tests/cassette.jsonl``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from murgat.judges.base import Judge, JudgeError, JudgeStats, RawAnswer
from murgat.judges.cache import ResponseCache
from murgat.judges.types import GenerateConfig, JudgeOutput, JudgeRequest

PROVIDERS = ("gemini", "openai", "hf", "embedded", "replay")

#: how a registered provider is made: ``(model, options, cache=, dry_run=, config=) -> Judge``
ProviderFactory = Callable[..., Judge]

#: providers another package adds (an integration above the judges' layer: inspect_ai's models through
#: ``murgat.integrations.inspect_judge``); :func:`make_judge` reads this table, it imports none of them
_REGISTERED: dict[str, ProviderFactory] = {}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make ``--judge NAME:MODEL`` build its judge with ``factory`` (registering a name again replaces its
    factory); murgat's own provider names are refused."""
    key = name.strip().lower()
    if key in PROVIDERS:
        raise ValueError(f"judge provider {key!r} is murgat's own: it cannot be registered again")
    _REGISTERED[key] = factory

#: ``-J`` options that change how answers are fetched, paced, logged or billed, never what they are: the
#: HTTP client (``client``: lean, httpx or the SDK send the same request), the replicas' failure handling,
#: pacing and polling, the credentials, the replay log, the prices, the upload clean-up, and whether a
#: local model may be downloaded. A resume that changes only these is the same run: every command's
#: fingerprint leaves them out (:func:`murgat.engine.fingerprint.without_transport`); they never enter a
#: cache key either (each judge's ``answer_options`` names what does).
TRANSPORT_OPTIONS = frozenset({
    "client", "endpoint_failures", "endpoint_cooldown_s", "delay_s", "poll_s", "upload_timeout_s", "cleanup",
    "api_key", "log", "price_in", "price_out", "allow_download",
})


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    """``["k=v", …]`` → dict, with a clear error for a malformed pair."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ValueError(f"judge option {pair!r} is not key=value")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def make_judge(
    spec: str,
    options: dict[str, Any] | None = None,
    *,
    cache: ResponseCache | str | Path | None = None,
    dry_run: bool = False,
    config: GenerateConfig | None = None,
    record: str | Path | None = None,
) -> Judge:
    """Build a judge from ``provider[:model]``; ``record`` wraps it to write a cassette."""
    provider, _, model = spec.partition(":")
    provider = provider.strip().lower()
    if isinstance(cache, str | Path):
        cache = ResponseCache(cache)
    kw: dict[str, Any] = {"cache": cache, "dry_run": dry_run, "config": config}
    opts = dict(options or {})
    judge: Judge
    if provider == "embedded":
        from murgat.judges.embedded import EmbeddedJudge

        judge = EmbeddedJudge(model or "rules-asr-ocr", opts, **kw)
    elif provider == "replay":
        from murgat.judges.replay import ReplayJudge

        judge = ReplayJudge(model, opts, **kw)
    elif provider == "gemini":
        from murgat.judges.gemini import GeminiJudge

        judge = GeminiJudge(model or "gemini-2.5-flash", opts, **kw)
    elif provider == "openai":
        from murgat.judges.openai_compat import OpenAIJudge

        judge = OpenAIJudge(model, opts, **kw)
    elif provider == "hf":
        from murgat.judges.hf import HFJudge

        judge = HFJudge(model, opts, **kw)
    elif provider in _REGISTERED:
        judge = _REGISTERED[provider](model, opts, **kw)
    else:
        raise ValueError(f"unknown judge provider {provider!r}; choose from {', '.join((*PROVIDERS, *_REGISTERED))}")
    if record:
        from murgat.judges.replay import RecordingJudge

        judge = RecordingJudge(judge, record)
    return judge


__all__ = ["GenerateConfig", "Judge", "JudgeError", "JudgeOutput", "JudgeRequest", "JudgeStats", "RawAnswer",
           "ResponseCache", "make_judge", "parse_options", "register_provider"]
