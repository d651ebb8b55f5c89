"""murgat's ``openai`` judge and model against a real OpenAI-compatible server someone else wrote.

``transformers serve`` (transformers' FastAPI server) runs on 127.0.0.1, offline, serving two tiny
randomly initialised checkpoints built here (:mod:`tests.judges.tiny_checkpoints`): LLaVA (images)
and Qwen2-Audio (audio). Between murgat and the server a proxy (:mod:`tests.judges.real_server`)
keeps every request and reply, and plays faults on demand. The tests run ``murgat score`` and
``murgat generate`` through each client (``lean``, ``httpx``, ``sdk``) and check three things: what
the server received (the request shapes: image data URLs, ``input_audio`` WAV, ``seed``,
``temperature``, ``max_tokens``, ``response_format``), that the server accepted it (200, and its
prompt-token count grew by the media's tokens), and what murgat recorded (usage, answers, and the
random model's unreadable answers as ``unparseable``, never ``no``).

The random models cannot answer murgat's text-only questions (verifiability, decomposition), so for
those the proxy replaces the answer's text with a scripted one after the server did the work; the
entailment questions, which carry the media, are answered by the server itself.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from murgat.cli import main
from murgat.judges.openai_compat import OpenAIJudge
from murgat.judges.types import AudioPart, GenerateConfig, ImagePart, JudgeRequest, TextPart
from tests.judges.real_server import Proxy, TransformersServe, part_types, prompt_text, serve_available

pytestmark = pytest.mark.skipif(serve_available() is not None, reason=str(serve_available()))

CLIENTS = ["lean", "httpx", "sdk"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TransformersServe]:
    with TransformersServe(tmp_path_factory.mktemp("serve") / "serve.log") as srv:
        yield srv  # started, not yet waited for: the checkpoints are built meanwhile


@pytest.fixture(scope="module")
def models(server: TransformersServe, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.judges.tiny_checkpoints import build_llava, build_qwen2_audio

    root = tmp_path_factory.mktemp("tiny-checkpoints")
    built = {"image": build_llava(root / "llava"), "audio": build_qwen2_audio(root / "qwen2-audio")}
    server.wait()
    return built


def scripted(body: dict[str, Any]) -> str | None:
    """Scripted labels for the text-only questions; ``None`` keeps the server's own answer."""
    text = prompt_text(body)
    if "could be checked by watching or listening" in text:
        return "yes"
    if "atomic facts" in text:
        sentence = text.split("Sentence: ", 1)[1].split("\n", 1)[0].strip()
        return json.dumps({"facts": [sentence]})
    return None


@pytest.fixture
def proxy(server: TransformersServe) -> Iterator[Proxy]:
    with Proxy(server.port, script=scripted) as p:
        yield p


def _inputs(tmp: Path) -> Path:
    p = tmp / "in.jsonl"
    p.write_text(json.dumps({"id": "a", "media": "friday.mp4", "question": "What happens?",
                             "response": "A woman stands at a desk (visual, 0:01). Someone speaks (audio, 0:00-0:02)."})
                 + "\n")
    return p


@pytest.mark.parametrize("client", CLIENTS)
def test_score_through_each_client(client: str, models, proxy: Proxy, tmp_path: Path, example_media: Path, capsys) -> None:
    out = tmp_path / "run"
    code = main(["score", str(_inputs(tmp_path)), "--media-root", str(example_media), "--judge", f"openai:{models['image']}",
                 "-J", f"base_url={proxy.base_url}", "-J", f"client={client}", "--max-tokens", "6", "--retries", "1",
                 "--out", str(out), "--quiet", "--json"])
    assert code in (0, 1), capsys.readouterr().err
    entail = [ex for ex in proxy.log if "Claim:" in prompt_text(ex.body)]
    assert entail, "the entailment questions reached the server"
    for ex in proxy.log:
        b = ex.body
        assert ex.status == 200, (ex.status, ex.answer)
        # the probes' token-account twins (a probe's text without its media) ask for one answer token
        twin = "Claim:" in prompt_text(b) and set(part_types(b)) == {"text"}
        assert b["model"] == str(models["image"]) and b["temperature"] == 0.0 and b["seed"] == 0
        assert b["max_tokens"] == (1 if twin else 6)
        assert set(b) <= {"model", "messages", "temperature", "max_tokens", "seed", "response_format"}, set(b)
    kinds = {k for ex in entail for k in part_types(ex.body)}
    assert {"text", "image_url", "input_audio"} <= kinds
    for ex in entail:
        for part in (p for m in ex.body["messages"] for p in m["content"]):
            if part["type"] == "image_url":
                assert part["image_url"]["url"].startswith("data:image/jpeg;base64,/9j/")
            if part["type"] == "input_audio":
                assert part["input_audio"]["format"] == "wav"
                with wave.open(io.BytesIO(base64.b64decode(part["input_audio"]["data"]))) as w:
                    assert (w.getframerate(), w.getnchannels()) == (16000, 1)
    decompose = [ex for ex in proxy.log if "atomic facts" in prompt_text(ex.body)]
    assert decompose and all(ex.body["response_format"]["type"] == "json_schema" for ex in decompose)
    # what murgat recorded: the server's token counts, and the random answers as unreadable, never "no"
    summary = json.loads((out / "summary.json").read_text())
    inv = summary["extra"]["this_invocation"]
    served = [ex.answer["usage"] for ex in proxy.log]
    assert inv["input_tokens"] == sum(u["prompt_tokens"] for u in served)
    assert inv["output_tokens"] == sum(u["completion_tokens"] for u in served)
    (rec,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    calls = [c for s in rec["sentences"] for f in s.get("verdicts", []) for c in f["calls"]]
    assert calls and all(c["verdict"] in ("unparseable", "unknown", "yes") for c in calls), calls


@pytest.mark.parametrize("client", CLIENTS)
def test_generate_through_each_client(client: str, models, proxy: Proxy, tmp_path: Path, example_media: Path,
                                      capsys) -> None:
    """``generate`` sends the whole video as frames plus its sound track; the answer the server wrote
    is the response murgat saves, with the server's token counts."""
    proxy.script = None
    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({"id": "q1", "media": "friday.mp4", "question": "What mood is the man in?",
                                "options": ["happy", "grumpy"]}) + "\n")
    out = tmp_path / "responses.jsonl"
    code = main(["generate", str(data), "--model", f"openai:{models['image']}", "-M", f"base_url={proxy.base_url}",
                 "-M", f"client={client}", "--mode", "base", "--media-root", str(example_media), "--max-tokens", "5",
                 "--max-frames", "3", "--retries", "1", "--out", str(out), "--quiet"])
    assert code in (0, 1), capsys.readouterr().err
    (ex,) = proxy.log
    assert ex.status == 200 and ex.body["max_tokens"] == 5 and ex.body["seed"] == 0
    kinds = part_types(ex.body)
    assert kinds.count("image_url") == 3 and kinds.count("input_audio") == 1
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["response"] == ex.answer["choices"][0]["message"]["content"]


def _judge(model: Path, url: str, client: str = "lean", **opts: str) -> OpenAIJudge:
    return OpenAIJudge(str(model), {"base_url": url, "client": client, **opts})


def _image() -> ImagePart:
    return ImagePart(image=np.full((40, 40, 3), 90, np.uint8))


def _audio() -> AudioPart:
    t = np.arange(16000, dtype=np.float32) / 16000
    return AudioPart(samples=(0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), start=0.0, end=1.0)


def _ask(*parts: Any, **cfg: Any) -> JudgeRequest:
    settings: dict[str, Any] = {"max_tokens": 4, "retries": 3, "backoff_base_s": 0.05, **cfg}
    return JudgeRequest(parts=[TextPart("Is a bell heard? yes or no"), *parts], expects="verdict",
                        config=GenerateConfig(**settings))


@pytest.mark.parametrize("client", ["lean", "httpx"])
def test_faults_are_retried_and_answers_kept(client: str, models, proxy: Proxy) -> None:
    """429 (Retry-After: 0), 503 with FastAPI's body, a dropped connection and a body slower than
    --timeout, each before a good answer: every request is answered, nothing is asked twice after
    its answer came back."""
    proxy.fault("429", "503", "drop", "slow")

    async def go() -> list[Any]:
        j = _judge(models["image"], proxy.base_url, client)
        outs = [await j.generate(_ask(_image(), timeout_s=1.0, retries=6)) for _ in range(2)]
        await j.aclose()
        return outs

    first, second = asyncio.run(go())
    # a connection dropped after a reused keep-alive request is resent at once on a fresh one by the
    # lean client (it cannot tell it from an idle connection the server closed): 3 or 4 retries
    assert first.error is None and first.retries in (3, 4) and second.error is None and second.retries == 0
    assert [ex.fault for ex in proxy.log] == ["429", "503", "drop", "slow", None, None]
    assert all(ex.status == 200 for ex in proxy.log if ex.fault in (None, "slow"))


@pytest.mark.parametrize("client", CLIENTS)
def test_the_servers_error_body_is_kept_with_every_client(client: str, models, proxy: Proxy) -> None:
    """transformers serve refuses an unknown field with 422 ``{"detail": …}``: refused at once, the
    server's words kept (the sdk client used to say only "Error code: 422")."""

    async def go() -> Any:
        j = _judge(models["image"], proxy.base_url, client, extra_body='{"bogus_field": 1}')
        out = await j.generate(_ask())
        await j.aclose()
        return out

    out = asyncio.run(go())
    assert out.error is not None and "422" in out.error and "Unexpected fields in the request" in out.error
    assert out.retries == 0 and len(proxy.log) == 1


def test_transformers_serve_drops_media_its_model_cannot_take(models, proxy: Proxy) -> None:
    """A behaviour of the server, shown (measured with transformers 5.24): it answers 200 and drops
    ``input_audio`` for an image model and ``image_url`` for an audio model — the prompt-token count
    is the text's alone. (vLLM refuses such a request with 400 instead.) Media a model does take
    add tokens."""

    async def tokens(model: Path, *parts: Any) -> int:
        j = _judge(model, proxy.base_url)
        out = await j.generate(_ask(*parts))
        await j.aclose()
        assert out.error is None, out.error
        return out.usage.input_tokens

    async def go() -> dict[str, int]:
        return {"image_text": await tokens(models["image"]), "image_image": await tokens(models["image"], _image()),
                "image_audio": await tokens(models["image"], _audio()), "audio_text": await tokens(models["audio"]),
                "audio_audio": await tokens(models["audio"], _audio()), "audio_image": await tokens(models["audio"], _image())}

    n = asyncio.run(go())
    assert n["image_image"] > n["image_text"] and n["audio_audio"] > n["audio_text"]
    assert n["image_audio"] == n["image_text"] and n["audio_image"] == n["audio_text"]  # dropped without a word


def test_a_refused_video_clip_falls_back_to_frames(models, proxy: Proxy, example_media: Path, capsys) -> None:
    """``-J video=clip`` sends a ``video_url`` data URL; transformers serve answers 500 (it loads the
    clip's sound and takes no ``data:`` URL). The judge then sends the sampled frames, for that
    request and the next ones, and says so once."""
    from murgat.judges.types import VideoPart
    from murgat.media.frames import open_video

    src = str(example_media / "friday.mp4")
    frames = open_video(src).frames_in(1.0, 3.0, 1.0, 3)

    async def go() -> list[Any]:
        j = _judge(models["image"], proxy.base_url, video="clip")
        outs = [await j.generate(_ask(VideoPart(source=src, start=1.0, end=3.0 + k, frames=frames))) for k in range(2)]
        await j.aclose()
        return outs

    a, b = asyncio.run(go())
    assert a.error is None and b.error is None
    sent = [part_types(ex.body) for ex in proxy.log]
    assert [ex.status for ex in proxy.log] == [500, 200, 200]
    assert "video_url" in sent[0] and "video_url" not in sent[1] + sent[2] and sent[1].count("image_url") == len(frames)
    assert capsys.readouterr().err.count("refused a video clip") == 1


def _verify_only(body: dict[str, Any]) -> str | None:
    """Every sentence verifiable; the decomposition left to the server (the random model's own words)."""
    return "yes" if "could be checked by watching or listening" in prompt_text(body) else None


def test_an_unreadable_decomposition_is_a_cause_that_retry_errors_asks_again(models, proxy: Proxy, tmp_path: Path,
                                                                               example_media: Path, capsys) -> None:
    """transformers serve ignores ``response_format``: the decomposer's answer is the model's own text,
    not JSON, so the sentence is one undetermined fact. That is a judge failure, counted as the cause
    ``decomposition``, never reported as an abstention, and ``--retry-errors`` asks it again (it sent
    nothing before: neither the cause count nor the retry rule knew decompositions)."""
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "A woman stands at a desk (visual, 0:01)."})
                   + "\n")
    out = tmp_path / "run"
    args = ["score", str(inp), "--media-root", str(example_media), "--judge", f"openai:{models['image']}",
            "-J", f"base_url={proxy.base_url}", "--max-tokens", "6", "--retries", "0", "--out", str(out),
            "--quiet", "--json"]
    proxy.script = _verify_only
    assert main(args) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "could not be split into facts" in last and "--retry-errors" in last and "abstained" not in last, last
    (dec,) = [ex for ex in proxy.log if "atomic facts" in prompt_text(ex.body)]
    assert dec.status == 200 and dec.body["response_format"]["type"] == "json_schema"  # asked for JSON, got words
    (rec,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert rec["undetermined_causes"] == {"decomposition": 1} and rec["case"] == "undetermined"
    sent = len(proxy.log)
    proxy.script = scripted  # the decomposer now answers with facts
    main([*args, "--retry-errors"])
    again = [ex for ex in proxy.log[sent:] if "atomic facts" in prompt_text(ex.body)]
    assert len(again) == 1, "--retry-errors must ask the decomposition again"
    assert any("Claim:" in prompt_text(ex.body) for ex in proxy.log[sent:])  # and the facts then go to entailment
    (rec,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()[-1:]]
    assert "decomposition" not in rec["undetermined_causes"]


@pytest.mark.parametrize(("kind", "word"), [("image", "deaf"), ("audio", "blind")])
def test_judge_check_names_the_modality_the_server_drops_by_its_token_counts(kind: str, word: str, models,
                                                                              proxy: Proxy, tmp_path: Path) -> None:
    """The random tiny models answer nothing readable, so every probe is unanswered and no answer can
    tell deaf from blind; the server's prompt tokens can: transformers serve drops the audio parts for
    LLaVA (deaf) and the image parts for Qwen2-Audio (blind), and the twin request without the media
    costs as many tokens as the probe with them. One attempt per probe, one deadline for the check."""
    from murgat.commands.judge_check.check import JudgeCheckSettings, run_judge_check

    sink: dict[str, Any] = {}
    s = JudgeCheckSettings(judge=f"openai:{models[kind]}", judge_option=[f"base_url={proxy.base_url}"],
                           cache=str(tmp_path / "check.sqlite"), deadline=60.0)
    assert run_judge_check(s, echo=False, sink=sink) == 1
    j = sink["report"].judges[0]
    assert len(j.dropped) == 1 and j.dropped[0].startswith(word), (j.dropped, j.tokens, j.unfinished)
    acc = {a.modality: a for a in j.tokens}
    assert acc[kind].counted is True and acc[kind].with_media > acc[kind].without_media  # the one it takes
    dropped = "audio" if kind == "image" else "image"
    assert acc[dropped].counted is False and acc[dropped].with_media == acc[dropped].without_media
    assert not sink["report"].ok
