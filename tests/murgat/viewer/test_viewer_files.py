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
    assert sorted(p.name for p in (run / "media").iterdir()) == ["friday.mp4"]
    assert err.count("warning: not copied") == 2 and "/etc/passwd" in err and "outside.mp4" in err
    refs = {it["id"]: it["media"] for it in page_data(run / "report.html")["runs"][0]["items"]}
    assert refs == {"in": "media/friday.mp4", "etc": None, "up": None}
    # the same escape hatch as scoring's
    assert main(["view", str(run), "--copy-media", "--allow-media-outside-root"]) == 0
    assert (run / "media" / "outside.mp4").read_bytes() == (tmp_path / "outside.mp4").read_bytes()


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
