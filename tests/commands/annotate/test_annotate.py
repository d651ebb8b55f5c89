"""``murgat annotate``: label a run by hand in the page (keyboard and clicks, in Chromium), reload without
losing anything, export, and read the labels back with ``murgat calibrate --human``: the agreement
figures are the ones the labels imply."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.report.test_viewer_browser import ARTIFACTS, ITEMS, _in_view, _no_horizontal_overflow, _open, _run, browser  # noqa: F401


def _murgat(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "murgat", *args], capture_output=True, text=True)


def _judge_facts(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]


def test_annotate_round_trip_to_calibrate(tmp_path, example_media, browser, capsys) -> None:  # noqa: F811
    run = _run(tmp_path, "runA", example_media, "no")
    capsys.readouterr()
    got = _murgat(["annotate", str(run), "--annotator", "ann 1", "--copy-media"])
    assert got.returncode == 0, got.stderr
    page_path = run / "annotate-ann_1.html"
    page, errors, outside = _open(browser, page_path, run)
    page.evaluate("localStorage.clear()")
    page.reload()
    page.wait_for_selector(".item-row")
    assert "ann 1" in page.inner_text("#annotbar")
    assert page.locator("#item .pill").count() == 0  # blind: no judge verdicts on the page
    # nor the judge's case, score or undetermined verdicts, in the list, header or filters
    assert not page.locator("#filter-case").is_visible() and not page.locator("#filter-undet").is_visible()
    assert not page.locator("#filter-min").is_visible()
    assert "undetermined" not in page.inner_text("#items") and "scored" not in page.inner_text("#items")
    assert "scored" not in page.inner_text("#item h2")
    # my labels: every sentence verifiable except "The picture is unclear."; every fact supported
    mine: dict[tuple[str, int], bool] = {}
    for k, it in enumerate(ITEMS):
        if k:  # the keyboard walks to the next item
            page.keyboard.press("Escape")
            page.keyboard.press("j")
            page.keyboard.press("Enter")
        assert page.inner_text("#item h2").startswith(it["id"])
        for sent in page.locator("#item .sent").all():
            unclear = "The picture is unclear." in sent.inner_text()
            sent.locator("input[name^='v|'][value='%s']" % ("no" if unclear else "yes")).check()
            mine[(it["id"], int(sent.get_attribute("data-sent")))] = not unclear
            for fact in sent.locator(".fact").all():
                fact.locator("input[name^='s|'][value='yes']").check()
        if k == 1:  # nothing is lost on reload
            page.reload()
            page.wait_for_selector(".item-row")
            assert page.inner_text("#item h2").startswith(it["id"])
            # the saved labels are put back after the list is drawn: wait for them (slow under load)
            from playwright.sync_api import expect

            expect(page.locator("#item input[name^='v|'][value='yes']:checked")).to_have_count(1)
    assert page.inner_text("#progress") == str(len(ITEMS))
    # labels can be changed from the keyboard too (a radio group: arrow keys), and are saved
    first = page.locator("#item .sent input[name^='v|'][value='yes']").first
    first.focus()
    page.keyboard.press("ArrowRight")
    assert page.locator("#item .sent input[name^='v|'][value='no']").first.is_checked()
    first.check()  # back to what the figures below expect
    stored = page.evaluate("Object.values(localStorage).join('')")
    assert '"verifiable":"yes"' in stored and '"verifiable":"no"' in stored  # "The picture is unclear."
    page.screenshot(path=str(ARTIFACTS / "viewer_annotate.png"))
    with page.expect_download() as dl:
        page.click("#export-labels")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(Path(dl.value.path()).read_text())
    _assert_bound_to(labels, run)

    # a second annotator disagrees on one sentence: the page shows it once both files are loaded
    other = [json.loads(line) for line in labels.read_text().splitlines()]
    other = [{**o, "annotator": "ann2"} for o in other]
    other[0]["sentences"][0]["verifiable"] = False
    (tmp_path / "ann2.jsonl").write_text("".join(json.dumps(o) + "\n" for o in other))
    page.set_input_files("#load-labels", [str(labels), str(tmp_path / "ann2.jsonl")])
    page.wait_for_function("() => document.getElementById('dis-verifiable').textContent === '1'")
    page.click(".item-row[data-id='a-phone']")
    assert page.locator("#item .others.disagree").count() >= 1
    page.set_viewport_size({"width": 800, "height": 900})
    assert _no_horizontal_overflow(page)
    page.screenshot(path=str(ARTIFACTS / "viewer_annotate_800.png"), full_page=True)
    assert not errors, errors
    assert not outside, outside
    page.close()

    # the round trip: calibrate reads the exported labels; the figures are what the labels imply
    cal = _murgat(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "200"])
    assert cal.returncode == 0, cal.stderr
    doc = json.loads(cal.stdout[cal.stdout.index("{"):])
    figs = next(iter(doc["runs"].values()))
    results = _judge_facts(run)
    v_pairs = [(sr["verifiable"], mine[(r["id"], sr["sentence"]["index"])]) for r in results for sr in r["sentences"]
               if sr["verifiable"] is not None]
    assert figs["verifiability"]["n"] == len(v_pairs) == 6
    assert abs(figs["verifiability"]["accuracy"] - sum(p == g for p, g in v_pairs) / len(v_pairs)) < 1e-9
    joints = [v["joint"] for r in results for sr in r["sentences"] for v in sr["verdicts"] if v["joint"] in ("yes", "no")]
    assert figs["support"]["n"] == len(joints) >= 3
    assert abs(figs["support"]["accuracy"] - joints.count("yes") / len(joints)) < 1e-9 < 1 - figs["support"]["accuracy"]
    assert figs["decomposition"]["precision"] == figs["decomposition"]["recall"] == 1.0  # the run's own facts


def test_annotate_faithfulness_steps_round_trip(tmp_path, example_media, browser) -> None:  # noqa: F811
    """Step labels (type, faithfulness) made in the page → murgat calibrate --task faithfulness."""
    import shutil

    from tests.commands.faithfulness.test_faithfulness import cassette, labelling_input

    media = tmp_path / "media"
    shutil.copytree(example_media, media)
    chains = labelling_input(tmp_path / "chains.jsonl")
    run = tmp_path / "faith"
    assert _murgat(["faithfulness", str(chains), "--media-root", str(media), "--judge", f"replay:{cassette(tmp_path)}",
                    "--out", str(run), "--granularity", "step", "--quiet"]).returncode == 0
    got = _murgat(["annotate", str(run), "--annotator", "ann1"])
    assert got.returncode == 0 and "--task faithfulness" in got.stdout, got.stderr
    page, errors, _ = _open(browser, run / "annotate-ann1.html", tmp_path)
    page.evaluate("localStorage.clear()")
    page.reload()
    page.wait_for_selector(".item-row")
    assert page.locator("#item .pill").count() == 0  # blind
    # label every step of the first item: the judge's type; every perception step faithful
    first = page.locator(".item-row").first.get_attribute("data-id")
    page.click(f".item-row[data-id='{first}']")
    results = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines() if x.strip()]
    judged = {s["index"]: s for r in results if r["id"] == first for s in r["steps"]}
    steps = page.locator("#item .sent[data-step]").all()
    assert len(steps) == len(judged) >= 2
    for st in steps:
        js = judged[int(st.get_attribute("data-step"))]
        st.locator(f"input[name^='t|'][value='{js['type'] or 'unsure'}']").check()
        if js["type"] == "perception":
            st.locator("input[name^='f|'][value='yes']").check()
    page.reload()
    page.wait_for_selector(".item-row")
    page.click(f".item-row[data-id='{first}']")
    assert page.locator("#item input[name^='t|']:checked").count() == len(steps)  # kept across the reload
    with page.expect_download() as dl:
        page.click("#export-labels")
    labels = tmp_path / "steps.jsonl"
    labels.write_text(Path(dl.value.path()).read_text())
    from murgat.human_eval.labels import response_digest, text_digest

    line = json.loads(labels.read_text().splitlines()[0])  # bound to the text of the steps labelled
    texts = {s["index"]: s["text"] for r in results if r["id"] == first for s in r["steps"]}
    assert line["response_sha256"] == response_digest([texts[k] for k in sorted(texts)])
    assert all(st["text_sha256"] == text_digest(texts[st["index"]]) for st in line["steps"])
    page.screenshot(path=str(ARTIFACTS / "viewer_annotate_faithfulness.png"))
    assert not errors, errors
    page.close()
    cal = _murgat(["calibrate", "--task", "faithfulness", "--human", str(labels), "--run", str(run), "--json"])
    assert cal.returncode == 0, cal.stderr
    row = json.loads(cal.stdout[cal.stdout.index("{"):])["runs"][str(run)]["annotators"]["ann1"]
    typed = [s for s in judged.values() if s["status"] == "labelled" and s["type"]]
    assert row["step_type"]["n"] == len(typed) and row["step_type"]["accuracy"] == 1.0  # same types as the judge
    perc = [s for s in typed if s["type"] == "perception" and s["faithful"] is not None]
    assert row["step_faithful"]["n"] == len(perc)
    assert abs(row["step_faithful"]["accuracy"] - sum(s["faithful"] for s in perc) / len(perc)) < 1e-9
    assert row["n_perception"]["human_mean"] == sum(1 for s in judged.values() if s["type"] == "perception")


def _assert_bound_to(labels: Path, run: Path) -> None:
    """Every exported line carries the digests of the run's text it labels: the response's, each
    sentence's and each fact's (what murgat calibrate checks against the run it is given)."""
    from murgat.human_eval.labels import response_digest, text_digest

    texts = {r["id"]: [sr["sentence"]["text"] for sr in r["sentences"]] for r in _judge_facts(run)}
    for line in map(json.loads, labels.read_text().splitlines()):
        assert line["response_sha256"] == response_digest(texts[line["id"]])
        for s in line["sentences"]:
            assert s["text_sha256"] == text_digest(texts[line["id"]][s["index"]])
            assert all(f["text_sha256"] == text_digest(f["text"]) for f in s["facts"])


def _page_data(page_path: Path) -> dict:
    html = page_path.read_text()
    start = html.index('<script id="data" type="application/json">') + len('<script id="data" type="application/json">')
    return json.loads(html[start:html.index("</script>", start)])


def test_annotate_sample_records_its_design(tmp_path, example_media) -> None:
    """--sample N draws a random sample (a page of those items only, the design embedded), --by video whole
    videos; the same --seed gives the same sample; bad requests are refused before anything is written."""
    from murgat.human_eval.sampling import draw_sample

    run = _run(tmp_path, "runS", example_media, "no")
    got = _murgat(["annotate", str(run), "--annotator", "a", "--sample", "2", "--seed", "11"])
    assert got.returncode == 0, got.stderr
    assert "drew a random sample: 2 of 4 items, seed 11" in got.stdout
    run_doc = _page_data(run / "annotate-a.html")["runs"][0]
    ids = sorted(it["id"] for it in run_doc["items"])
    want, design = draw_sample(sorted(it["id"] for it in ITEMS), 2, seed=11)
    assert ids == want and run_doc["annotate"]["sample"] == design.model_dump() | {"run": str(run)}
    by_video = _murgat(["annotate", str(run), "--annotator", "b", "--sample", "1", "--by", "video", "--seed", "3"])
    assert by_video.returncode == 0, by_video.stderr
    d = _page_data(run / "annotate-b.html")["runs"][0]
    assert d["annotate"]["sample"]["method"] == "video" and d["annotate"]["sample"]["sample_videos"] == 1
    assert len({it["video"] for it in d["items"]}) == 1  # every item of the one video drawn
    unseeded = _murgat(["annotate", str(run), "--annotator", "c", "--sample", "2"])
    assert "seed " in unseeded.stdout and int(_page_data(run / "annotate-c.html")["runs"][0]["annotate"]["sample"]["seed"]) >= 0
    # a seed past 2^53 is kept as its text: a browser reads a JSON number that large rounded
    big = _murgat(["annotate", str(run), "--annotator", "e", "--sample", "2", "--seed", str(2**53 + 1)])
    assert big.returncode == 0, big.stderr
    assert _page_data(run / "annotate-e.html")["runs"][0]["annotate"]["sample"]["seed"] == str(2**53 + 1)
    for bad in (["--by", "video"], ["--seed", "1"], ["--sample", "0"]):
        r = _murgat(["annotate", str(run), "--annotator", "d", *bad])
        assert r.returncode == 2 and "error:" in r.stderr
    assert not (run / "annotate-d.html").exists()


def test_annotate_sample_exports_the_design_for_calibrate(tmp_path, example_media, browser) -> None:  # noqa: F811
    """The sampled page in the browser: it says it is a random sample, every exported line records the
    design, and murgat calibrate accepts the labels for corrected figures without --assume-random."""
    run = _run(tmp_path, "runT", example_media, "no")
    seed = str(2**53 + 1)  # past what a JavaScript number holds exactly: kept as text, page to label line to calibrate
    assert _murgat(["annotate", str(run), "--annotator", "ann", "--sample", "3", "--seed", seed]).returncode == 0
    page, errors, _ = _open(browser, run / "annotate-ann.html", run)
    page.evaluate("localStorage.clear()")
    page.reload()
    page.wait_for_selector(".item-row")
    assert page.inner_text("#n-items") == "3" and page.locator(".item-row").count() == 3
    note = page.inner_text("#sample-note")
    assert "random sample" in note and f"of 4 items, seed {seed}" in note
    for k in range(3):
        if k:
            page.keyboard.press("Escape")
            page.keyboard.press("j")
            page.keyboard.press("Enter")
        for sent in page.locator("#item .sent").all():
            sent.locator("input[name^='v|'][value='yes']").check()
            for fact in sent.locator(".fact").all():
                fact.locator("input[name^='s|'][value='yes']").check()
    with page.expect_download() as dl:
        page.click("#export-labels")
    lines = [json.loads(x) for x in Path(dl.value.path()).read_text().splitlines() if x.strip()]
    assert len(lines) == 3 and all(ln["sample"]["seed"] == seed and ln["sample"]["sample_size"] == 3 for ln in lines)
    assert not errors, errors
    page.close()
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    cal = _murgat(["calibrate", "--human", str(labels), "--run", str(run), "--json", "--bootstrap", "50"])
    assert cal.returncode == 0, cal.stderr
    corrected = json.loads(cal.stdout[cal.stdout.index("{"):])["runs"][str(run)]["corrected"]
    assert corrected["sample_checked"] is True and "refused" not in corrected
    assert corrected["figures"]["murgat_s"]["n_labelled"] + corrected["figures"]["murgat_s"]["n_unlabelled"] >= 3


def test_annotate_strata_draws_within_each_stratum_and_records_the_weights(tmp_path, example_media) -> None:
    """--strata FIELD draws within each value of the field (at least two each where a stratum has them)
    and records every stratum's size and weight; it does not combine with --by video, and needs a size."""
    run = _run(tmp_path, "runT", example_media, "no")
    got = _murgat(["annotate", str(run), "--annotator", "a", "--sample", "3", "--strata", "video", "--seed", "5"])
    assert got.returncode == 0, got.stderr
    assert "3 of 4 items stratified by video (2 strata: friday.mp4 2/3, nasa_13013.mp4 1/1)" in got.stdout
    d = _page_data(run / "annotate-a.html")["runs"][0]["annotate"]["sample"]
    assert d["method"] == "stratified" and d["strata_field"] == "video"
    assert d["strata"]["friday.mp4"] == {"population": 3, "weight": 0.75, "requested": 2, "drawn": 2}
    given = _murgat(["annotate", str(run), "--annotator", "b", "--strata", "video", "--allocation",
                     "friday.mp4=3,nasa_13013.mp4=1", "--seed", "5"])
    assert given.returncode == 0, given.stderr
    assert "4 of 4 items stratified by video" in given.stdout
    for bad, why in ((["--strata", "video"], "give its size"), (["--sample", "2", "--by", "video", "--strata", "video"],
                                                                "two designs"),
                     (["--sample", "2", "--strata", "nope"], "no item has this field"),
                     (["--strata", "video", "--allocation", "friday.mp4=x"], "LABEL=N")):
        r = _murgat(["annotate", str(run), "--annotator", "d", *bad])
        assert r.returncode == 2 and why in r.stderr, r.stderr
    assert not (run / "annotate-d.html").exists()
