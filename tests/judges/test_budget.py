"""Answer-token caps per judge task (``murgat.judges.budget``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from murgat.cli import main
from murgat.judges.base import RawAnswer
from murgat.judges.budget import answer_tokens, sized_for, sized_request
from murgat.judges.cache import ResponseCache, request_key
from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import GenerateConfig, JudgeRequest, TextPart, Usage
from tests.standin import StandIn


def test_yes_no_questions_get_small_caps_and_explicit_smaller_values_win() -> None:
    cfg = GenerateConfig()  # the shared default, 1,024
    assert sized_for(cfg, "verify", "simple").max_tokens == 256
    assert sized_for(cfg, "entail", "json").max_tokens == 384
    assert sized_for(cfg, "entail", "cot").max_tokens == 1024
    assert sized_for(GenerateConfig(max_tokens=16), "verify", "simple").max_tokens == 16, "never raised"
    assert sized_for(cfg, "decompose", "sentence") is cfg and answer_tokens("decontextualize", "") is None


def test_reasoning_requests_keep_their_cap() -> None:
    assert sized_for(GenerateConfig(reasoning_effort="high"), "verify", "simple").max_tokens == 1024
    assert sized_for(GenerateConfig(reasoning_effort="none"), "verify", "simple").max_tokens == 256


# ----- sized caps on the wire, and the cache ------------------------------------------------------


class Talker(ScriptedJudge):
    """Answers "yes" in ``tokens`` answer tokens (the count a server reports)."""

    def __init__(self, tokens: int, **kw: Any) -> None:
        super().__init__(lambda req: "yes", **kw)
        self.tokens = tokens

    async def _call(self, req: JudgeRequest) -> RawAnswer:
        self.requests.append(req)
        return RawAnswer(text="yes", usage=Usage(input_tokens=5, output_tokens=self.tokens))


def _req(config: GenerateConfig, key_config: GenerateConfig | None = None) -> JudgeRequest:
    return JudgeRequest(parts=[TextPart("Is it? yes or no")], config=config, key_config=key_config, task="verify",
                        expects="verdict")


def test_a_sized_request_keys_as_the_configured_cap() -> None:
    sent, key = sized_request(GenerateConfig(), "verify", "simple")
    assert sent.max_tokens == 256 and key == GenerateConfig()
    assert request_key("openai", "m", _req(sent, key)) == request_key("openai", "m", _req(GenerateConfig()))
    assert sized_request(GenerateConfig(), "verify", "simple", sized=False) == (GenerateConfig(), None)
    assert sized_request(GenerateConfig(), "decompose", "sentence")[1] is None  # nothing lowered: keyed as sent


def test_a_cached_answer_serves_a_sized_request_only_when_it_fits_the_cap(tmp_path: Path) -> None:
    """An answer that ended within 256 tokens is the answer to the 256-token request too; one that
    took 300 would have been cut there, so the sized request is asked again."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    sent, key = sized_request(GenerateConfig(), "verify", "simple")
    for tokens, asked_again in ((40, False), (300, True), (0, False)):  # 0: no count (offline judge, cassette)
        old = Talker(tokens, cache=cache)
        prompt = f"Is it ({tokens})? yes or no"
        first = _req(GenerateConfig())
        first.parts = [TextPart(prompt)]
        asyncio.run(old.generate(first))  # answered under the configured 1,024
        new = Talker(tokens, cache=cache)
        later = _req(sent, key)
        later.parts = [TextPart(prompt)]
        out = asyncio.run(new.generate(later))
        assert (len(new.requests) == 1) is asked_again and out.cached is not asked_again, tokens
        if asked_again:
            assert new.requests[0].config.max_tokens == 256
    cache.close()


@pytest.mark.parametrize(("extra", "verify_cap", "decompose_cap"), [([], 256, 1024), (["--max-tokens", "300"], 300, 300)])
def test_score_sends_sized_caps_unless_max_tokens_is_set(tmp_path: Path, example_media: Path, monkeypatch, extra: list[str],
                                                         verify_cap: int, decompose_cap: int) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "The woman speaks (audio, 0:01-0:03)."})
                   + "\n")
    with StandIn() as server:
        assert main(["score", str(inp), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                     f"base_url={server.base_url}", "--out", str(tmp_path / "run"), "--quiet", "--json",
                     "--probes", "off", *extra]) == 0  # the items' requests (a probe's token-account twin asks for 1)
        caps: dict[str, set[int]] = {}
        for body in server.requests:
            text = " ".join(p.get("text", "") for m in body["messages"] for p in m["content"])
            kind = "decompose" if "atomic facts" in text else "verify" if "watching or listening" in text else "entail"
            caps.setdefault(kind, set()).add(body["max_tokens"])
    assert caps == {"verify": {verify_cap}, "entail": {verify_cap}, "decompose": {decompose_cap}}
