"""What ``murgat view`` writes to disk: copied media, saved evidence and the embedded data.

Runs are scored on the bundled real media with hand-written replay answers (every judge task
answered "yes"), then the page's embedded JSON is read back as the browser would read it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from murgat.cli import main
from murgat.report.viewer import media_copy_name

ANSWERS = [
    {"match": {"task": "verify"}, "output": {"text": "yes"}},
    {"match": {"task": "decompose"}, "output": {"text": json.dumps({"facts": ["Something is shown."]})}},
    {"match": {"task": "entail"}, "output": {"text": "yes"}},
]


def _score(tmp: Path, items: list[dict], media: Path, *extra: str) -> Path:
    cas = tmp / "answers.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in ANSWERS))
    inp = tmp / "in.jsonl"
    inp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items), encoding="utf-8")
    out = tmp / "run"
    assert main(["score", str(inp), "--media-root", str(media), "--judge", f"replay:{cas}", "--out", str(out),
                 "--quiet", "--json", *extra]) in (0, 1)
    return out


def page_data(page: Path) -> dict:
    """The page's embedded JSON, read the way ``JSON.parse(textContent)`` reads it."""
    text = page.read_text(encoding="utf-8")
    m = re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S)
    assert m is not None
    return json.loads(m.group(1))


def _evidence(doc: dict) -> dict[str, list[str]]:
    return {it["id"]: [e for s in it["sentences"] for f in s["facts"] for c in f["citations"] for e in c.get("evidence") or []]
            for it in doc["runs"][0]["items"]}


def test_copy_media_refuses_what_scoring_refused(tmp_path, example_media, capsys) -> None:
    media = tmp_path / "media"
    media.mkdir()
    shutil.copy(example_media / "friday.mp4", media / "friday.mp4")
    shutil.copy(example_media / "nasa_13013.mp4", tmp_path / "outside.mp4")  # a real video, outside the root
    items = [{"id": "in", "media": "friday.mp4", "response": "A woman talks (audio, 0:01-0:03)."},
             {"id": "etc", "media": "/etc/passwd", "response": "A woman talks (audio, 0:01-0:03)."},
             {"id": "up", "media": "../outside.mp4", "response": "A man talks (audio, 0:01-0:03)."}]
    run = _score(tmp_path, items, media)
    capsys.readouterr()
    assert main(["view", str(run), "--copy-media"]) == 0
    err = capsys.readouterr().err
    friday = media_copy_name(media / "friday.mp4")
    assert sorted(p.name for p in (run / "media").iterdir()) == [friday]
    assert err.count("warning: not copied") == 2 and "/etc/passwd" in err and "outside.mp4" in err
    refs = {it["id"]: it["media"] for it in page_data(run / "report.html")["runs"][0]["items"]}
    assert refs == {"in": f"media/{friday}", "etc": None, "up": None}
    # the same escape hatch as scoring's
    assert main(["view", str(run), "--copy-media", "--allow-media-outside-root"]) == 0
    outside = media_copy_name(tmp_path / "outside.mp4")
    assert (run / "media" / outside).read_bytes() == (tmp_path / "outside.mp4").read_bytes()


def test_embedded_data_has_no_angle_bracket(tmp_path, example_media) -> None:
    text = "She says <!--<script>alert(1)</script> and </SCRIPT > (audio, 0:01-0:03)."
    run = _score(tmp_path, [{"id": "x<!--", "media": "friday.mp4", "question": "<!--<script>", "response": text}],
                 example_media)
    page = (run / "report.html").read_text(encoding="utf-8")
    block = page.split('<script id="data" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert "<" not in block
    doc = page_data(run / "report.html")
    item = doc["runs"][0]["items"][0]
    assert item["id"] == "x<!--" and item["question"] == "<!--<script>" and "<!--<script>" in item["sentences"][0]["text"]


def test_evidence_folders_are_collision_free_and_bounded(tmp_path, example_media) -> None:
    long_id = "L" * 300
    items = [{"id": "p/q", "media": "friday.mp4", "response": "A woman is shown (visual, 0:01)."},
             {"id": "p_q", "media": "nasa_13013.mp4", "response": "A rocket is shown (visual, 0:01)."},
             {"id": long_id, "media": "friday.mp4", "response": "A woman is shown (visual, 0:02)."}]
    run = _score(tmp_path, items, example_media, "--save-evidence")
    ev = _evidence(page_data(run / "report.html"))
    assert all(len(v) == 1 for v in ev.values()), ev
    a, b, c = (run / ev["p/q"][0]), (run / ev["p_q"][0]), (run / ev[long_id][0])
    assert a.parent != b.parent and a.read_bytes() != b.read_bytes()  # each item shows its own frame
    assert a.parent.name.startswith("p_q-") and len(c.parent.name) <= 60 and c.is_file()


def test_copy_media_and_evidence_to_a_report_elsewhere(tmp_path, example_media, capsys) -> None:
    items = [{"id": "v", "media": "friday.mp4", "response": "A woman is shown (visual, 0:01). She talks (audio, 0:01-0:03)."}]
    run = _score(tmp_path, items, example_media)
    elsewhere = tmp_path / "share" / "report.html"
    assert main(["view", str(run), "--copy-media", "--save-evidence", "--out", str(elsewhere)]) == 0
    doc = page_data(elsewhere)
    refs = _evidence(doc)["v"] + [doc["runs"][0]["items"][0]["media"]]
    assert len(refs) == 3
    for ref in refs:
        assert not Path(ref).is_absolute() and ".." not in Path(ref).parts, ref
        assert (elsewhere.parent / ref).is_file(), ref  # the folder is portable: everything lies inside it
    # without --copy-media the report links the run's evidence where it is
    linked = tmp_path / "linked" / "report.html"
    assert main(["view", str(run), "--save-evidence", "--out", str(linked)]) == 0
    for ref in _evidence(page_data(linked))["v"]:
        assert (linked.parent / ref).resolve() == (run / "evidence" / Path(ref).parts[-2] / Path(ref).name).resolve()


# ---------------------------------------------------------------- copies of the media


def test_copy_media_is_content_addressed(tmp_path, example_media) -> None:
    """Two videos both named clip.mp4 get two copies; a video replaced since gets a new one."""
    media = tmp_path / "media"
    (media / "a").mkdir(parents=True)
    (media / "b").mkdir()
    shutil.copy(example_media / "friday.mp4", media / "a" / "clip.mp4")
    shutil.copy(example_media / "nasa_13013.mp4", media / "b" / "clip.mp4")
    items = [{"id": "a", "media": "a/clip.mp4", "response": "A woman talks (audio, 0:01-0:03)."},
             {"id": "b", "media": "b/clip.mp4", "response": "A man talks (audio, 0:01-0:03)."}]
    run = _score(tmp_path, items, media)
    assert main(["view", str(run), "--copy-media"]) == 0
    refs = {it["id"]: it["media"] for it in page_data(run / "report.html")["runs"][0]["items"]}
    assert refs["a"] != refs["b"]
    assert (run / refs["a"]).read_bytes() == (media / "a" / "clip.mp4").read_bytes()
    assert (run / refs["b"]).read_bytes() == (media / "b" / "clip.mp4").read_bytes()
    shutil.copy(example_media / "bikes.mp4", media / "a" / "clip.mp4")  # the video is replaced
    assert main(["view", str(run), "--copy-media"]) == 0
    again = {it["id"]: it["media"] for it in page_data(run / "report.html")["runs"][0]["items"]}
    assert again["a"] != refs["a"] and (run / again["a"]).read_bytes() == (example_media / "bikes.mp4").read_bytes()
    assert again["b"] == refs["b"]  # unchanged bytes: the same copy, not copied again


def test_media_beside_the_input_are_linked(tmp_path, example_media) -> None:
    """Without --media-root scoring reads the media from the input file's folder (a bare id with its
    extension too); the page links them from there, not "media not found"."""
    shutil.copy(example_media / "friday.mp4", tmp_path / "friday.mp4")
    cas = tmp_path / "answers.jsonl"
    cas.write_text("".join(json.dumps(r) + "\n" for r in ANSWERS))
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"id": i, "media": m, "response": "A woman talks (audio, 0:01-0:03)."}) + "\n"
                           for i, m in (("named", "friday.mp4"), ("bare", "friday"))))
    out = tmp_path / "run"
    assert main(["score", str(inp), "--judge", f"replay:{cas}", "--out", str(out), "--quiet", "--json"]) == 0
    for _ in range(2):  # the page the run wrote, then murgat view's
        refs = {it["id"]: it["media"] for it in page_data(out / "report.html")["runs"][0]["items"]}
        assert refs == {"named": "../friday.mp4", "bare": "../friday.mp4"}
        assert main(["view", str(out)]) == 0


# ---------------------------------------------------------------- where the page goes


def _plain_run(tmp_path, example_media) -> Path:
    return _score(tmp_path, [{"id": "v", "media": "friday.mp4", "response": "A woman talks (audio, 0:01-0:03)."}],
                  example_media)


def test_view_does_not_write_through_a_link_out_of_the_run(tmp_path, example_media, capsys) -> None:
    run = _plain_run(tmp_path, example_media)
    target = tmp_path / "elsewhere.html"
    target.write_text("someone else's page")
    (run / "report.html").unlink()
    (run / "report.html").symlink_to(target)
    capsys.readouterr()
    assert main(["view", str(run)]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and "elsewhere.html" in err
    assert target.read_text() == "someone else's page"


def test_view_and_annotate_never_replace_a_runs_records(tmp_path, example_media, capsys) -> None:
    run = _plain_run(tmp_path, example_media)
    before = (run / "results.jsonl").read_bytes()
    assert main(["view", str(run), "--out", str(run / "results.jsonl")]) == 2
    assert main(["annotate", str(run), "--annotator", "ann", "--out", str(run / "summary.json")]) == 2
    err = capsys.readouterr().err
    assert "is an input of this command" in err and "part of the 'score' run" in err
    assert (run / "results.jsonl").read_bytes() == before and json.loads((run / "summary.json").read_text())


def test_an_unwritable_out_is_a_clear_error(tmp_path, example_media, capsys) -> None:
    run = _plain_run(tmp_path, example_media)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    capsys.readouterr()
    assert main(["view", str(run), "--out", str(blocker / "report.html")]) == 2
    assert main(["annotate", str(run), "--annotator", "ann", "--out", str(blocker / "a.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("cannot be written") == 2


def test_a_truncated_summary_is_named(tmp_path, example_media, capsys) -> None:
    run = _plain_run(tmp_path, example_media)
    text = (run / "summary.json").read_text()
    (run / "summary.json").write_text(text[: len(text) // 2])
    capsys.readouterr()
    assert main(["view", str(run)]) == 2
    assert main(["annotate", str(run), "--annotator", "ann"]) == 2
    err = capsys.readouterr().err
    assert err.count("summary.json: not valid JSON") == 2 and "Traceback" not in err


def test_a_file_size_limit_keeps_the_old_page_and_exits_5(tmp_path, example_media) -> None:
    import resource
    import subprocess
    import sys

    run = _plain_run(tmp_path, example_media)
    old = (run / "report.html").read_bytes()
    assert len(old) > 32_768

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (32_768, 32_768))

    got = subprocess.run([sys.executable, "-m", "murgat", "view", str(run)], capture_output=True, text=True,
                         preexec_fn=limit)
    assert got.returncode == 5, got.stderr
    assert "File too large" in got.stderr and "Traceback" not in got.stderr
    assert (run / "report.html").read_bytes() == old  # whole, the old one
    assert not [p for p in run.iterdir() if p.name.startswith(".report.html")]  # no temporary file left


def test_the_page_streams_into_stdout(tmp_path, example_media) -> None:
    import subprocess
    import sys

    run = _plain_run(tmp_path, example_media)
    got = subprocess.run([sys.executable, "-m", "murgat", "view", str(run), "--out", "/dev/fd/1"],
                         capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert got.stdout.lstrip().lower().startswith("<!doctype html") and "wrote /dev/fd/1" in got.stderr


def test_lines_that_are_not_records_are_said(tmp_path, example_media, capsys) -> None:
    run = _plain_run(tmp_path, example_media)
    with open(run / "results.jsonl", "a", encoding="utf-8") as f:
        f.write("not json\n")
    capsys.readouterr()
    assert main(["view", str(run)]) == 0
    assert "1 line(s) that are not results were skipped" in capsys.readouterr().err
    assert "not results were skipped" in page_data(run / "report.html")["runs"][0]["notes"]

