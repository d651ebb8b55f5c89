"""``generate``, ``faithfulness`` and ``program`` with ``--run-on ray`` give
the same records as the local path (real local Ray instance, replay judges)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from murgat.cli import main
from tests.engine.scaleout.conftest import normalised_records

pytest.importorskip("ray", reason="Ray is part of the [ray] extra, installed by the bootstrap")
pytestmark = pytest.mark.slow
TIMING = {"latency_s", "cached", "deduplicated", "cache_hits", "seconds", "interpreter_seconds", "started_at"}


@pytest.fixture
def ray_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the Ray runs the driver made, and the records they streamed back."""
    from murgat.engine.scaleout import tasks

    seen: list[int] = []
    real = tasks.run_on_cluster

    def counting(*a, **kw):  # type: ignore[no-untyped-def]
        report = real(*a, **kw)
        seen.append(report.written)
        return report

    monkeypatch.setattr(tasks, "run_on_cluster", counting)
    return seen


def test_generate(tmp_path: Path, example_media: Path, ray_instance, ray_runs, capsys) -> None:
    from tests.commands.generate.test_generate import ANSWERS, _cassette, _questions

    cas = _cassette(tmp_path, [{"match": {"task": "generate", "inputs": {"id": k, "mode": "cite"}}, "output": {"text": v}}
                               for k, v in ANSWERS.items()])
    q = _questions(tmp_path)
    outs = {}
    for where in ("local", "ray"):
        outs[where] = tmp_path / f"{where}.jsonl"
        args = ["generate", str(q), "--model", f"replay:{cas}", "--mode", "cite", "--media-root", str(example_media),
                "--out", str(outs[where]), "--json", "--run-on", where]
        assert main(args) == 1  # one item has no media in both
        capsys.readouterr()
    local, remote = normalised_records(outs["local"], TIMING), normalised_records(outs["ray"], TIMING)
    assert len(local) == 3 and local == remote
    assert main(["generate", str(q), "--model", f"replay:{cas}", "--mode", "cite", "--media-root", str(example_media),
                 "--out", str(outs["ray"]), "--json", "--run-on", "ray"]) == 1  # resumes: nothing asked again
    assert len(outs["ray"].read_text().splitlines()) == 3
    assert ray_runs == [3, 0]  # the records came back from Ray tasks; the rerun had nothing to do


def test_faithfulness(tmp_path: Path, example_media: Path, ray_instance, ray_runs, capsys) -> None:
    from tests.commands.faithfulness.test_faithfulness import RESPONSES, cassette

    data = tmp_path / "chains.jsonl"
    data.write_text("".join(json.dumps({**r, "media": "friday.mp4", "question": "What mood is the man in?",
                                        "options": ["happy", "bad humor"], "gold": "B"}) + "\n" for r in RESPONSES))
    cas = cassette(tmp_path)
    for where in ("local", "ray"):
        code = main(["faithfulness", str(data), "--media-root", str(example_media), "--judge", f"replay:{cas}",
                     "--out", str(tmp_path / where), "--json", "--quiet", "--run-on", where])
        assert code in (0, 1)
        capsys.readouterr()
    # the per-file description is asked once per run and counted on whichever item asked first:
    # which one that is depends on timing (locally too), so the per-item call count is left out
    local = normalised_records(tmp_path / "local" / "results.jsonl", TIMING | {"judge_calls"})
    remote = normalised_records(tmp_path / "ray" / "results.jsonl", TIMING | {"judge_calls"})
    assert local and local == remote
    assert ray_runs == [len(local)]
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert summary["ray"]["tasks"] >= 1 and summary["ray"]["lost"] == 0 and "ray" not in json.loads(
        (tmp_path / "local" / "summary.json").read_text())


def test_program(tmp_path: Path, example_media: Path, ray_instance, ray_runs, capsys) -> None:
    from tests.programs.test_program_e2e import EXPECTED, Q, program_cassette

    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps(Q) + "\n")
    cas = program_cassette(tmp_path)
    for where in ("local", "ray"):
        assert main(["program", str(data), "--media-root", str(example_media), "--variant", "all", "--planner",
                     f"replay:{cas}", "--out", str(tmp_path / where), "--json", "--quiet", "--run-on", where]) == 0
        capsys.readouterr()
    for v in EXPECTED:
        for name in ("responses.jsonl", "traces.jsonl"):
            local = normalised_records(tmp_path / "local" / v / name, TIMING)
            remote = normalised_records(tmp_path / "ray" / v / name, TIMING)
            assert local and local == remote, (v, name)
    assert ray_runs == [1] * len(EXPECTED)  # one engine run per variant (one Ray instance), one item each
