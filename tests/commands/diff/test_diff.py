"""``murgat diff``: every setting, prompt hash, judge identity, probe result and version that differs,
and how many verdicts changed, read from real run folders (``tests/data/legacy_runs``, copied and
edited the way another run would differ)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from murgat.cli import main
from murgat.engine.differences import run_differences

LEGACY = Path(__file__).resolve().parents[2] / "data" / "legacy_runs"


def _copy(tmp_path: Path, name: str, as_: str) -> Path:
    dst = tmp_path / as_
    shutil.copytree(LEGACY / name, dst)
    return dst


def _edit_config(run: Path, edit: dict) -> None:
    doc = json.loads((run / "config.json").read_text())
    for dotted, value in edit.items():
        node = doc
        *path, last = dotted.split(".")
        for k in path:
            node = node.setdefault(k, {})
        node[last] = value
    (run / "config.json").write_text(json.dumps(doc))


def _probes(outcome: str) -> dict:
    return {"setting": "on", "seed": 0, "probes_version": "1", "clip_sha256": "abc",
            "results": [{"judge": "openai:m", "stage": "entail", "probe": "hearing", "outcome": outcome},
                        {"judge": "openai:m", "stage": "entail", "probe": "seeing", "outcome": "pass"}]}


def test_the_same_run_differs_in_nothing(tmp_path: Path) -> None:
    a, b = _copy(tmp_path, "score-run", "a"), _copy(tmp_path, "score-run", "b")
    diff = run_differences(a, b)
    assert diff.same and diff.differences == []
    assert diff.verdicts is not None and diff.verdicts.compared > 0 and diff.verdicts.changed == 0


def test_a_resumed_run_that_asked_the_judge_nothing_differs_in_nothing(tmp_path: Path) -> None:
    """A rerun answered wholly from the cache records no judge identity (nobody answered this invocation):
    before, ``murgat diff RUN COPY`` said the judge identity differed (exit 1) after a plain resume."""
    a, b = _copy(tmp_path, "score-run", "a"), _copy(tmp_path, "score-run", "b")
    _edit_config(a, {"config.judge_identity": [{"name": "openai:m", "reported": {"m-2024-01": 3}}]})
    _edit_config(b, {"config.judge_identity": [{"name": "openai:m", "reported": {}}]})
    assert run_differences(a, b).same
    assert main(["diff", str(a), str(b)]) == 0


def test_settings_prompts_judges_probes_and_versions_are_listed(tmp_path: Path) -> None:
    a, b = _copy(tmp_path, "score-run", "a"), _copy(tmp_path, "score-run", "b")
    _edit_config(a, {"config.probes": _probes("pass"), "config.judge_identity": [
        {"name": "openai:m", "reported": {"m-2024-01": 3}, "system_fingerprints": {"fp_a": 3}}]})
    _edit_config(b, {"config.entail_variant": "json", "config.prompt_hashes.entail_simple": "000000000000",
                     "config.versions.numpy": "9.9.9", "config.judge_entail.options": {"video": "clip"},
                     "config.probes": _probes("fail"), "config.judge_identity": [
                         {"name": "openai:m", "reported": {"m-2024-06": 3}, "system_fingerprints": {"fp_b": 3}}]})
    diff = run_differences(a, b)
    got = {(d.section, d.key): (d.a, d.b) for d in diff.differences}
    assert got[("setting", "entail_variant")] == ("simple", "json")
    assert got[("prompt", "prompt_hashes.entail_simple")] == ("d23355d53595", "000000000000")
    assert got[("version", "versions.numpy")] == ("2.4.6", "9.9.9")
    assert got[("judge", "judge_entail.options.video")] == (None, "clip")
    assert got[("probes", "probes.openai:m entail hearing")] == ("pass", "fail")
    assert ("probes", "probes.openai:m entail seeing") not in got
    assert got[("judge", "judge_identity.openai:m reported")] == (["m-2024-01"], ["m-2024-06"])
    assert got[("judge", "judge_identity.openai:m system_fingerprint")] == (["fp_a"], ["fp_b"])
    key = next(d for d in diff.differences if d.key == "judge_entail.options.video")
    assert not key.in_a and key.in_b  # absent in A, not null
    assert [d.section for d in diff.differences] == sorted((d.section for d in diff.differences),
                                                            key=["judge", "probes", "prompt", "setting", "version",
                                                                 "input"].index)


def _rewrite(run: Path, change) -> None:
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines() if x.strip()]
    (run / "results.jsonl").write_text("".join(json.dumps(change(r)) + "\n" for r in lines))


def test_changed_verdicts_are_counted_by_stage(tmp_path: Path) -> None:
    a, b = _copy(tmp_path, "score-run", "a"), _copy(tmp_path, "score-run", "b")
    flipped: list[str] = []

    def flip(rec: dict) -> dict:
        for sr in rec.get("sentences", []):
            for fv in sr.get("verdicts", []):
                for call in fv.get("calls", []):
                    if not flipped:
                        flipped.append(rec["id"])
                        call["verdict"] = "no" if call["verdict"] == "yes" else "yes"
        return rec

    _rewrite(b, flip)
    diff = run_differences(a, b)
    assert flipped and diff.verdicts.changed == 1 and diff.verdicts.by_stage == {"entail": 1}
    assert diff.verdicts.examples[0]["id"] == flipped[0]
    assert not diff.same


def test_faithfulness_steps_are_compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _copy(tmp_path, "faith-run", "a"), _copy(tmp_path, "faith-run", "b")

    def relabel(rec: dict) -> dict:
        for s in rec.get("steps", []):
            if s.get("faithful") is False:
                s["faithful"] = True
        return rec

    _rewrite(b, relabel)
    diff = run_differences(a, b)
    assert diff.verdicts.kind == "faithfulness" and diff.verdicts.changed >= 1
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "unfaithful → faithful" in out
    assert main(["diff", str(a), str(a), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdicts"]["changed"] == 0


def test_runs_of_different_kinds_and_non_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diff = run_differences(LEGACY / "score-run", LEGACY / "faith-run")
    assert diff.verdicts is None and "not compared" in (diff.note or "")
    assert main(["diff", str(LEGACY / "score-run"), str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err


@pytest.mark.parametrize(("config", "why"), [
    ("[" * 100_000 + "]" * 100_000, "not readable JSON (JSON nested too deeply)"),  # was a RecursionError traceback
    ("[1, 2]", "not a JSON object (a list)"),
    (b'{"kind": "score", "config": {"x": "\xff"}}', "not readable JSON"),
    (None, "missing"),
])
def test_an_unreadable_config_is_said_and_its_values_read_as_absent(tmp_path: Path, config: str | bytes | None,
                                                                     why: str, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _copy(tmp_path, "score-run", "a"), _copy(tmp_path, "score-run", "b")
    if config is None:
        (b / "config.json").unlink()
    elif isinstance(config, bytes):
        (b / "config.json").write_bytes(config)
    else:
        (b / "config.json").write_text(config)
    diff = run_differences(a, b)
    assert len(diff.problems) == 1 and diff.problems[0].startswith(f"{b / 'config.json'}: {why}")
    assert diff.differences and all(not d.in_b for d in diff.differences if d.section != "judge")
    assert main(["summarize", str(a), str(b)]) == 0  # read_kind and summarize's own reading too
    assert f"note: {b / 'config.json'}: {why}" in capsys.readouterr().out


def test_fields_of_the_wrong_type_read_as_absent_not_a_crash(tmp_path: Path) -> None:
    """A summary whose ``extra`` is a list, a probe report whose results are a number, an identity whose
    ``reported`` is a list, records whose sentence is text and whose evidence holds lists: every one was
    a traceback of ``diff`` and ``summarize``."""
    a, b = _copy(tmp_path, "score-run", "a"), _copy(tmp_path, "score-run", "b")
    _edit_config(b, {"config.probes": {"results": 5}, "config.judge_identity": [{"name": "j", "reported": ["m"]}]})
    summary = json.loads((b / "summary.json").read_text())
    (b / "summary.json").write_text(json.dumps({**summary, "extra": [1]}))

    def hostile(rec: dict) -> dict:
        return {**rec, "sentences": [{"sentence": "text"}, {"sentence": {"text": ["a", "list"]}, "facts": [
            {"index": [0], "text": {"f": 1}}], "verdicts": [{"fact_index": [0], "calls": [
                {"stage": "entail", "evidence": [[1, 2], {"a": 1}], "verdict": "yes"}]}]}]}

    _rewrite(b, hostile)
    diff = run_differences(a, b)
    assert diff.verdicts is not None and diff.verdicts.items_compared > 0
    # an identity whose `reported` is a list reads as absent, and an identity one run lacks is not compared
    # (a cache-only rerun hears nothing from its judge): no difference, and no traceback
    assert not any(d.key.startswith("judge_identity.j") for d in diff.differences)


def test_the_table_draws_at_most_sixty_differences(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _copy(tmp_path, "score-run", "a"), _copy(tmp_path, "score-run", "b")
    _edit_config(b, {f"config.extra_{i}": "x" * 10_000 for i in range(5_000)})
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "more differences not drawn (of" in out and "--json lists every one" in out and len(out) < 30_000
    assert main(["diff", str(a), str(b), "--json"]) == 1
    assert len(json.loads(capsys.readouterr().out)["differences"]) >= 5_000


def test_a_record_nested_absurdly_is_a_bad_line_not_a_crash(tmp_path: Path) -> None:
    """``diff`` reads records with the project's line decoder: absurd nesting is a bad line (it was a
    RecursionError traceback), as it is for config.json; a ground check of such a config is 'no'."""
    from murgat.commands.summarize.ground_runs import is_ground_run

    a, b = _copy(tmp_path, "score-run", "a"), _copy(tmp_path, "score-run", "b")
    with (b / "results.jsonl").open("a", encoding="utf-8") as f:
        f.write("[" * 100_000 + "\n")
    diff = run_differences(a, b)
    assert diff.verdicts is not None and diff.verdicts.items_compared > 0
    (b / "config.json").write_text("[" * 100_000)
    assert is_ground_run(b) is False
