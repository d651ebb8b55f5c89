"""`murgat generate` / `murgat sweep`: loaders on the real annotation files, post-hoc text
preservation, effort on the wire, and replay-based runs on real media.

The model answers come from hand-written cassettes served by the ``replay`` provider (or,
for the wire tests, from httpx transports replaying the Gemini and OpenAI wire formats).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.core.datasets import load_dataset, load_nextgqa, load_videommmu, youtube_id
from murgat.core.schema import Item
from murgat.judges.gemini import GeminiJudge
from murgat.judges.openai_compat import OpenAIJudge
from murgat.judges.replay import ReplayJudge
from murgat.judges.types import GenerateConfig
from murgat.judging.answering import build_request, generate_one, preserved
from tests.conftest import real_annotation
from tests.judges.wire import Wire, ok


def test_videommmu_loader_on_real_files() -> None:
    items = []
    for track in ("perception", "comprehension", "adaptation"):
        items += load_videommmu(real_annotation(f"videommmu/{track}_video.json"))
    assert len(items) == 900 and len({i.id for i in items}) == 900
    first = items[0]
    assert first.id == "Perception/dev_Biology_3" and first.media == "U7YqCUd_ZfA" and first.gold == "G"
    assert len(first.options) == 10
    types = {i.question_type for i in items}
    assert {"Perception", "Comprehension"} <= types


def test_nextgqa_loader_on_real_file() -> None:
    items = load_nextgqa(real_annotation("nextgqa/val.csv"))
    assert len(items) == 3358
    it = items[0]
    assert it.id == "4882821564_1" and it.media == "4882821564" and it.gold == "C" and it.question_type == "CW"
    assert all(i.gold in "ABCDE" for i in items)


def test_youtube_ids() -> None:
    assert youtube_id("https://www.youtube.com/watch?v=U7YqCUd_ZfA&t=3") == "U7YqCUd_ZfA"
    assert youtube_id("https://youtu.be/abc123") == "abc123"
    assert youtube_id("https://www.youtube.com/embed/xyz") == "xyz"
    assert youtube_id("not a url") is None


def test_csv_loader(tmp_path: Path) -> None:
    p = tmp_path / "q.csv"
    p.write_text('id,media,question,options,answer,type\nq1,friday.mp4,Mood?,"[""a"", ""b""]",B,mood\n')
    (it,) = load_dataset(str(p))
    assert it.options == ["a", "b"] and it.gold == "B" and it.question_type == "mood"


BASE = "The woman asks whether the lord is in (audio, 0:01-0:03). An operator answers.\nAnswer: B"


def test_preservation_check() -> None:
    moved = "The woman asks whether the lord is in. An operator answers (audio, 0:01-0:03; audio, 0:03-0:04).\nAnswer: B"
    assert preserved(BASE, moved) == (True, None)
    changed = "The woman asks whether the king is in (audio, 0:01-0:03). An operator answers.\nAnswer: B"
    ok, where = preserved(BASE, changed)
    assert not ok and "lord" in where and "king" in where


def _cassette(tmp: Path, lines: list[dict]) -> Path:
    p = tmp / "model.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return p


def test_posthoc_rejects_rewrites_and_accepts_moves(tmp_path: Path, friday: Path) -> None:
    cas = _cassette(tmp_path, [
        {"match": {"task": "generate", "inputs": {"id": "keep"}},
         "output": {"text": "The woman asks whether the lord is in. An operator answers (audio, 0:03-0:04).\nAnswer: B"}},
        {"match": {"task": "generate", "inputs": {"id": "change"}},
         "output": {"text": "The woman asks whether the boss is in (audio, 0:01-0:03). An operator answers.\nAnswer: B"}},
    ])
    judge = ReplayJudge(str(cas))
    cfg = GenerateConfig()
    keep = asyncio.run(generate_one(judge, Item(id="keep", media="friday.mp4", gold="B"), friday, "posthoc", cfg,
                                    base_response=BASE))
    change = asyncio.run(generate_one(judge, Item(id="change", media="friday.mp4", gold="B"), friday, "posthoc", cfg,
                                      base_response=BASE))
    assert keep["posthoc"]["status"] == "accepted" and "(audio, 0:03-0:04)" in keep["response"]
    assert change["posthoc"]["status"] == "rejected" and change["response"] == BASE
    assert "boss" in change["posthoc"]["rewrite"] and "lord" in change["posthoc"]["reason"]


async def test_effort_and_media_on_the_gemini_wire(friday: Path) -> None:
    """Replays the Gemini wire format: the whole file (with sound) is uploaded once; effort → thinking."""
    file = {"name": "files/f1", "uri": "https://generativelanguage.googleapis.com/v1beta/files/f1", "mimeType": "video/mp4",
            "state": "ACTIVE"}
    wire = Wire()
    wire.route("POST", "googleapis.com/upload/", lambda r: __import__("httpx").Response(
        200, headers={"x-goog-upload-url": "https://upload.test/s"}))
    wire.route("POST", "upload.test/s", lambda r: __import__("httpx").Response(
        200, json={"file": file}, headers={"x-goog-upload-status": "final"}))
    answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": "She talks (audio, 0:01).\nAnswer: B"}]},
                              "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}}
    wire.queue(ok(answer), ok(answer), ok(answer))
    item = Item(id="q", media="friday.mp4", question="Mood?", options=["a", "b"], gold="B")
    for model, effort in (("gemini-2.5-flash", "low"), ("gemini-3-pro-preview", "high"), ("gemini-2.5-pro", "none")):
        j = GeminiJudge(model, {"api_key": "k", "cleanup": "false"}, http_client=wire.client())
        rec = await generate_one(j, item, friday, "cite", GenerateConfig(reasoning_effort=effort))
        assert rec["correct"] is True and rec["effort"] == effort
    bodies = [json.loads(r.content) for r in wire.requests if ":generateContent" in str(r.url)]
    thinking = [b["generationConfig"].get("thinkingConfig") or b["generationConfig"].get("thinking_config") for b in bodies]
    assert thinking[0] in ({"thinkingBudget": 1024}, {"thinking_budget": 1024})
    assert next(iter(thinking[1].values())).lower() == "high"
    assert list(thinking[2].values()) == [128]  # 2.5 Pro cannot switch thinking off
    start = next(r for r in wire.requests if "googleapis.com/upload/" in str(r.url))
    assert start.headers["x-goog-upload-header-content-type"] == "video/mp4"  # the original, sound included
    part = bodies[0]["contents"][0]["parts"][0]
    fd = part.get("fileData") or part.get("file_data")
    assert fd and (fd.get("fileUri") or fd.get("file_uri")) == file["uri"]


async def test_effort_and_media_on_the_openai_wire(friday: Path) -> None:
    """Replays the Chat Completions wire format: frames + the whole sound track; effort → reasoning_effort."""
    completion = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "Answer: B"}, "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    wire = Wire().queue(ok(completion))
    j = OpenAIJudge("qwen-omni", {"base_url": "http://vllm.test/v1"}, http_client=wire.client())
    item = Item(id="q", media="friday.mp4", question="Mood?", options=["a", "b"], gold="B")
    await generate_one(j, item, friday, "base", GenerateConfig(reasoning_effort="medium"), fps=1.0, max_frames=4)
    (body,) = wire.bodies()
    kinds = [c["type"] for c in body["messages"][0]["content"]]
    assert kinds.count("image_url") == 4 and kinds.count("input_audio") == 1
    assert body["reasoning_effort"] == "medium"


def test_request_identity_includes_media_settings(friday: Path) -> None:
    from murgat.judges.replay import fingerprint

    it = Item(id="q", media="friday.mp4", question="?")
    a = build_request(it, friday, "cite", GenerateConfig(), 1.0, 64)
    b = build_request(it, friday, "cite", GenerateConfig(), 2.0, 64)
    assert fingerprint(a) != fingerprint(b)


def _questions(tmp: Path) -> Path:
    rows = [
        {"id": "friday-q", "media": "friday.mp4", "question": "What mood is the man in?", "options": ["happy", "bad humor"],
         "gold": "B", "question_type": "audio"},
        {"id": "nasa-q", "media": "nasa_13013.mp4", "question": "Where is the segment?", "options": ["Goddard", "Orbit"],
         "gold": "A", "question_type": "place"},
        {"id": "gone-q", "media": "missing.mp4", "question": "?", "options": ["x", "y"], "gold": "A"},
    ]
    p = tmp / "questions.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return p


ANSWERS = {
    "friday-q": "An operator says somebody must have stolen the crown jewels (audio, 0:04-0:06). "
                "She asks whether the lord of the universe is in (audio, 0:01-0:03).\nAnswer: B",
    "nasa-q": "The narrator names NASA's Goddard Space Flight Center in Greenbelt, Maryland (audio, 0:08-0:12).\nAnswer: B",
}


def test_generate_then_score_replay_end_to_end(tmp_path: Path, example_media: Path, capsys) -> None:
    """Generated records are ``score`` input as they stand.

    Scoring uses a hand-written replay judge (every sentence verifiable, one fact per
    sentence, entailed) rather than the embedded judge: the embedded judge's verdicts depend
    on one exact Whisper decoding, which differs between CPUs ("lord of the University").
    """
    cas = _cassette(tmp_path, [{"match": {"task": "generate", "inputs": {"id": k, "mode": "cite"}}, "output": {"text": v}}
                               for k, v in ANSWERS.items()])
    out = tmp_path / "responses.jsonl"
    args = ["generate", str(_questions(tmp_path)), "--model", f"replay:{cas}", "--mode", "cite", "--media-root",
            str(example_media), "--out", str(out), "--json"]
    assert main(args) == 1  # one item has no media: recorded, and the exit status says so
    doc = json.loads(capsys.readouterr().out)
    assert doc["n"] == 3 and doc["n_errors"] == 1 and doc["accuracy"]["value"] == 0.5
    assert doc["by_type"] == {"audio": {"n": 1, "accuracy": 1.0, "n_answer_unknown": 0},
                              "place": {"n": 1, "accuracy": 0.0, "n_answer_unknown": 0}}
    assert doc["n_answer_unknown"] == 0 and doc["accuracy_answered"]["value"] == 0.5
    recs = {json.loads(x)["id"]: json.loads(x) for x in out.read_text().splitlines()}
    assert recs["gone-q"]["generation_error"].startswith("missing_media")
    assert main(args) == 1  # resume: nothing new is asked (the replay judge would fail loudly on a miss)
    capsys.readouterr()
    judge = tmp_path / "judge.jsonl"
    judge.write_text("\n".join(json.dumps(r) for r in [
        {"match": {"task": "verify"}, "output": {"text": "yes"}},
        {"match": {"task": "entail"}, "output": {"text": "yes"}},
        *({"match": {"task": "decompose", "inputs": {"sentence": s}}, "output": {"text": json.dumps({"facts": [s]})}}
          for v in ANSWERS.values() for s in split_sentence_texts(v)),
    ]) + "\n")
    run = tmp_path / "run"
    assert main(["score", str(out), "--media-root", str(example_media), "--judge", f"replay:{judge}", "--out", str(run),
                 "--quiet", "--json"]) == 1
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert "FAILED: 1 of 3 item(s) ended in an error (generation_failed: 1)" in captured.err.strip().splitlines()[-1]
    assert summary["n_items"] == 3 and summary["n_errors"] == 1 and summary["accuracy"]["value"] == 0.5
    res = {json.loads(x)["id"]: json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()}
    assert res["friday-q"]["scores"]["recall"] == 1.0 and res["nasa-q"]["scores"]["recall"] == 1.0
    assert res["gone-q"]["error"].startswith("generation_failed") and res["gone-q"]["case"] == "error"


def split_sentence_texts(response: str) -> list[str]:
    from murgat.core.text import preprocess, split_sentences

    return [s.text for s in split_sentences(preprocess(response, 2).reasoning)]


@pytest.mark.slow
def test_sweep_end_to_end(tmp_path: Path, example_media: Path, capsys) -> None:
    lines = []
    for effort, fri in (("low", "Answer: A"), ("high", ANSWERS["friday-q"])):
        lines.append({"match": {"task": "generate", "inputs": {"id": "friday-q", "effort": effort}}, "output": {"text": fri}})
        lines.append({"match": {"task": "generate", "inputs": {"id": "nasa-q", "effort": effort}},
                      "output": {"text": ANSWERS["nasa-q"]}})
    cas = _cassette(tmp_path, lines)
    out = tmp_path / "sweep"
    assert main(["sweep", str(_questions(tmp_path)), "--model", f"replay:{cas}", "--efforts", "low,high", "--mode", "cite",
                 "--judge", "embedded", "--media-root", str(example_media), "--out", str(out), "--ids",
                 "friday-q,nasa-q", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    low, high = doc["rows"]
    assert (low["effort"], high["effort"]) == ("low", "high")
    assert low["accuracy"]["value"] == 0.0 and high["accuracy"]["value"] == 0.5
    assert high["murgat_s"]["value"] > low["murgat_s"]["value"]
    assert (out / "sweep.png").stat().st_size > 1000 and (out / "sweep.json").exists()


def test_retry_errors_replaces_the_failed_record(tmp_path: Path, example_media: Path, capsys) -> None:
    cas = _cassette(tmp_path, [{"match": {"task": "generate", "inputs": {"id": "friday-q"}}, "output": {"text": "Answer: B"}}])
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"id": "friday-q", "media": "friday.mp4", "question": "?", "options": ["a", "b"], "gold": "B"}) + "\n")
    out = tmp_path / "r.jsonl"
    base = ["generate", str(q), "--model", f"replay:{cas}", "--mode", "base", "--out", str(out), "--json"]
    assert main([*base, "--media-root", str(tmp_path)]) == 1  # media not there yet: an error record
    assert json.loads(out.read_text())["generation_error"]
    # the media now resolves: a missing_media record is redone without the flag (it holds no answer)
    assert main([*base, "--media-root", str(example_media)]) == 0
    assert len(out.read_text().splitlines()) == 1
    assert main([*base, "--media-root", str(example_media), "--retry-errors"]) == 0
    (line,) = out.read_text().splitlines()
    assert json.loads(line)["response"] == "Answer: B" and "generation_error" not in json.loads(line)
    capsys.readouterr()


def test_sweep_exit_status_says_when_items_failed(tmp_path: Path, example_media: Path, capsys) -> None:
    """A sweep whose efforts left items without a response (missing media) exits 1, as
    ``generate`` and ``score`` do; the table and ``sweep.json`` are still written."""
    cas = _cassette(tmp_path, [{"match": {"task": "generate", "inputs": {"id": k}}, "output": {"text": "Answer: A"}}
                               for k in ("friday-q", "nasa-q")])
    out = tmp_path / "sweep"
    assert main(["sweep", str(_questions(tmp_path)), "--model", f"replay:{cas}", "--efforts", "low", "--judge",
                 f"replay:{cas}", "--media-root", str(example_media), "--out", str(out), "--quiet", "--json"]) == 1
    captured = capsys.readouterr()
    (row,) = json.loads(captured.out)["rows"]
    assert row["effort"] == "low" and row["n_errors"] == 1
    assert (out / "sweep.json").exists()
    assert "FAILED" in captured.err.strip().splitlines()[-1] and "low" in captured.err.strip().splitlines()[-1]


def test_sweep_refuses_a_missing_media_root_before_any_work(tmp_path: Path, capsys) -> None:
    """``--media-root`` that is not a folder exits 2 before anything is generated, as in ``generate``."""
    cas = _cassette(tmp_path, [])
    out = tmp_path / "sweep"
    assert main(["sweep", str(_questions(tmp_path)), "--model", f"replay:{cas}", "--efforts", "low", "--judge",
                 "embedded", "--media-root", str(tmp_path / "nowhere"), "--out", str(out), "--quiet"]) == 2
    assert "--media-root" in capsys.readouterr().err
    assert not (out / "effort-low").exists()


@pytest.mark.parametrize("efforts", ["", " , "])
def test_sweep_refuses_an_empty_effort_list(tmp_path: Path, example_media: Path, efforts: str, capsys) -> None:
    """``--efforts ""`` is a mistake, not an empty sweep that exits 0 with an empty table."""
    cas = _cassette(tmp_path, [])
    out = tmp_path / "sweep"
    assert main(["sweep", str(_questions(tmp_path)), "--model", f"replay:{cas}", "--efforts", efforts, "--judge",
                 "embedded", "--media-root", str(example_media), "--out", str(out), "--quiet"]) == 2
    assert "--efforts" in capsys.readouterr().err
    assert not (out / "sweep.json").exists()
