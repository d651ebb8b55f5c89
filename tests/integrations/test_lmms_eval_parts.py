"""The lmms-eval task's parts without lmms-eval: the task writer, the documents and payloads, the
aggregation's undefined figures, and ``murgat import lmms-eval`` on failed requests and foreign logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from murgat.cli import main
from murgat.commands.imports.lmms_samples import MARKER, failure_of, items_of
from murgat.commands.imports.samples import INPUT
from murgat.integrations.lmms_eval import TEMPLATE, task_folder
from murgat.integrations.lmms_eval import task as t
from murgat.integrations.lmms_eval.__main__ import main as task_main

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "examples" / "questions.jsonl"
MEDIA = ROOT / "examples" / "media"
FAILED = "[LMMS_EVAL_REQUEST_FAILED after 1 retries] Connection error."


def _docs(tmp: Path, *extra: str) -> list[dict[str, Any]]:
    assert task_main(["task", str(QUESTIONS), "--media-root", str(MEDIA), "--judge", "embedded", "--out", str(tmp),
                      "--max-frames", "2", *extra]) == 0
    return [json.loads(x) for x in (tmp / "murgat_cited_video.jsonl").read_text().splitlines()]


def test_the_task_writer_includes_the_template_and_resolves_every_media_file(tmp_path: Path, capsys: Any) -> None:
    docs = _docs(tmp_path)
    text = (tmp_path / "murgat_cited_video.yaml").read_text()
    assert f'include: "{task_folder() / TEMPLATE}"' in text and 'task: "murgat_cited_video"' in text
    template = [x for x in (task_folder() / TEMPLATE).read_text().splitlines() if not x.startswith("#")]
    assert not any(x.startswith("task:") for x in template)  # the template alone is no task
    assert [Path(d["media_path"]).name for d in docs][:3] == ["friday.mp4", "nasa_13013.mp4", "jfk.flac"]
    capsys.readouterr()
    assert task_main([]) == 0 and capsys.readouterr().out.strip() == str(task_folder())


def test_the_task_writer_refuses_missing_media(tmp_path: Path, capsys: Any) -> None:
    bad = tmp_path / "q.jsonl"
    bad.write_text(json.dumps({"id": "x", "media": "nowhere.mp4", "question": "?"}) + "\n")
    assert task_main(["task", str(bad), "--media-root", str(MEDIA), "--judge", "embedded", "--out", str(tmp_path / "o")]) == 2
    assert "1 item(s) whose media is not in" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_a_document_is_sent_as_labelled_frames_then_murgats_prompt(tmp_path: Path) -> None:
    friday, _, jfk = _docs(tmp_path)[:3]
    kw = {"media": "frames", "fps": 1.0, "max_frames": 2}
    [turn] = t.doc_to_messages(friday, kw)
    assert [c["type"] for c in turn["content"]] == ["text", "image", "text", "image", "text"]
    assert turn["content"][0]["text"] == "(frame at 0.00 s)" and "(visual, MM:SS)" in turn["content"][-1]["text"]
    assert t.doc_to_text(friday, kw).startswith("The 2 images are frames of the video at 0.00 s, ")
    [sound] = [c for c in t.doc_to_messages(jfk, kw)[0]["content"] if c["type"] != "text"]
    assert sound["type"] == "audio" and sound["url"].startswith("data:audio/wav;base64,")  # an audio-only file
    assert t.doc_to_target(friday) == "B" and t.doc_to_visual(jfk, kw) == []


def test_a_failed_request_is_left_out_never_scored(tmp_path: Path) -> None:
    doc = _docs(tmp_path)[0]
    value = t.process_results(doc, [FAILED])["murgat_s"]
    items, skipped = items_of(value, "sample 0")
    assert items == [] and skipped[0]["sample"] == "friday-mood" and "got no answer" in skipped[0]["reason"]
    assert failure_of("  [LMMS_EVAL_BUDGET_EXCEEDED]") and failure_of("The man (visual, 0:01).") is None
    items, _ = items_of(t.process_results(doc, [["one", "two"]])["accuracy"], "sample 0")  # repeats: ID, ID#2
    assert [(i.id, i.response) for i in items] == [("friday-mood", "one"), ("friday-mood#2", "two")]


def _log(tmp: Path, lines: list[Any]) -> Path:
    p = tmp / "samples.jsonl"
    p.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return p


def test_import_names_what_it_leaves_out_and_keeps_other_inputs(tmp_path: Path, capsys: Any) -> None:
    docs = _docs(tmp_path / "task")
    answered = {"doc_id": 0, **t.process_results(docs[0], ["A man (visual, 0:01).\nAnswer: B"])}
    failed = {"doc_id": 1, **t.process_results(docs[1], [FAILED])}
    log = _log(tmp_path, [answered, failed, {"doc_id": 2, "exact_match": 1.0}, "{not json"])
    out = tmp_path / "imp"
    assert main(["import", "lmms-eval", str(log), "--out", str(out)]) == 1
    err = capsys.readouterr()
    assert "nasa-where left out: lmms-eval got no answer" in err.err and "line 3 left out: no murgat payload" in err.err
    assert "--judge embedded" in err.out and f"--media-root {MEDIA.resolve()}" in err.out
    assert [json.loads(x)["id"] for x in (out / INPUT).read_text().splitlines()] == ["friday-mood"]
    assert len(json.loads((out / MARKER).read_text())["skipped"]) == 3
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / INPUT).write_text("{}\n")
    assert main(["import", "lmms-eval", str(log), "--out", str(mine)]) == 2 and (mine / INPUT).read_text() == "{}\n"
    assert main(["import", "lmms-eval", str(_log(tmp_path, [{"doc_id": 0, "acc": 1}])), "--out", str(tmp_path / "n")]) == 2


def test_a_figure_over_no_gold_answer_is_none_not_zero(tmp_path: Path) -> None:
    rows = [{"match": {"task": "verify"}, "output": {"text": "yes"}},
            {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["A man sits."]})}},
            {"match": {"task": "entail"}, "output": {"text": "yes"}}]
    (tmp_path / "j.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"id": "a", "media": "friday.mp4", "question": "What happens?"}) + "\n")
    assert task_main(["task", str(q), "--media-root", str(MEDIA), "--judge", f"replay:{tmp_path / 'j.jsonl'}",
                      "--out", str(tmp_path / "task")]) == 0
    [doc] = [json.loads(x) for x in (tmp_path / "task" / "murgat_cited_video.jsonl").read_text().splitlines()]
    values = [t.process_results(doc, ["A man sits (visual, 0:01)."])["murgat_s"]]
    args = type("Args", (), {"output_path": str(tmp_path / "out")})()
    assert t.agg_murgat_s(values, args) == pytest.approx(1.0)
    assert t.agg_accuracy(values, args) is None and t.agg_accuracy_ci(values, args) == [None, None]
    assert t.agg_attributed_accuracy(values, args) is None
    [run] = (tmp_path / "out" / "murgat").iterdir()
    assert json.loads((run / "summary.json").read_text())["n_items"] == 1
