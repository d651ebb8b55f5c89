"""What a newcomer trial of the README found, each pinned (exit codes and messages as documented)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from murgat.cli import main
from tests.cassettes import write_jsonl as _write


def test_generate_with_a_replay_miss_exits_3_with_one_line(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: an ExceptionGroup traceback and exit 1 (score, program, reflect, faithfulness exit 3)."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    q = _write(tmp_path / "q.jsonl", [{"id": "a", "media": "friday.mp4", "question": "?"}])
    code = main(["generate", str(q), "--model", f"replay:{empty}", "--mode", "cite", "--media-root", str(example_media),
                 "--out", str(tmp_path / "gen")])
    err = capsys.readouterr().err
    assert code == 3 and "replay cassette miss" in err and "Traceback" not in err


def test_score_takes_a_generate_run_folder(tmp_path: Path, example_media: Path, capsys) -> None:
    """Before: IsADirectoryError traceback; the README says DIR/responses.jsonl is score's input."""
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "It is B.\nAnswer: B"}}])
    q = _write(tmp_path / "q.jsonl", [{"id": "a", "media": "friday.mp4", "question": "?", "options": ["x", "y"]}])
    assert main(["generate", str(q), "--model", f"replay:{cas}", "--mode", "base", "--media-root", str(example_media),
                 "--out", str(tmp_path / "gen"), "--json"]) == 0
    assert main(["score", str(tmp_path / "gen"), "--judge", "embedded", "--media-root", str(example_media), "--out",
                 str(tmp_path / "run"), "--quiet", "--json"]) in (0, 1)
    capsys.readouterr()
    (tmp_path / "empty").mkdir()
    assert main(["score", str(tmp_path / "empty"), "--judge", "embedded", "--out", str(tmp_path / "r2")]) == 2
    assert "without responses.jsonl" in capsys.readouterr().err


def test_ground_with_error_records_exits_1(tmp_path: Path, capsys) -> None:
    """Before: 'N responses (k errors)' and exit 0."""
    gold = _write(tmp_path / "gold.jsonl", [{"id": "a", "video": "v", "duration": 10.0, "answer": {"text": "x"},
                                             "evidence": [{"modality": "visual", "start": 1.0, "end": 3.0}]}])
    resp = _write(tmp_path / "r.jsonl", [{"id": "a", "media": "v.mp4", "response": "It is there (visual, 0:01-0:03)."},
                                         {"id": "b", "media": "v.mp4", "response": "No gold for me (visual, 0:02)."}])
    code = main(["ground", str(resp), "--gold", str(gold), "--json"])
    cap = capsys.readouterr()
    assert code == 1 and cap.err.strip().splitlines()[-1].startswith("FAILED: 1 of 2")


def test_abstentions_alone_do_not_say_fix_the_judge() -> None:
    from murgat.core.schema import ResponseResult
    from murgat.engine.outcome import failure_line

    rr = ResponseResult(id="a", case="undetermined", undetermined_causes={"unknown": 2})
    line = failure_line([rr], None)
    assert line is not None and "abstained" in line and "fix the judge" not in line


def test_a_reader_leaving_the_pipe_is_no_traceback(tmp_path: Path) -> None:
    text = " ".join(f"Sentence {k} is here (audio, 0:0{k % 10})." for k in range(3000))
    proc = subprocess.Popen([sys.executable, "-m", "murgat", "citations", "-", "--json"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(text.encode())
    proc.stdin.close()
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_no_command_writes_over_its_own_input(tmp_path: Path, example_media: Path, capsys) -> None:
    """Fault-finding pass: generate --out INPUT read its questions as finished answers (0 calls, exit 0);
    reflect --from OUT/responses.jsonl replaced the user's file."""
    q = _write(tmp_path / "q.jsonl", [{"id": "a", "media": "friday.mp4", "question": "?", "response": "x"}])
    before = q.read_bytes()
    assert main(["generate", str(q), "--model", "embedded", "--out", str(q), "--media-root", str(example_media)]) == 2
    assert "is an input of this command" in capsys.readouterr().err and q.read_bytes() == before
    ud = tmp_path / "ud"
    ud.mkdir()
    own = ud / "responses.jsonl"
    own.write_bytes(before)
    assert main(["reflect", str(own), "--from", str(own), "--model", "embedded", "--detector", "self", "--out", str(ud),
                 "--media-root", str(example_media)]) == 2
    assert own.read_bytes() == before


def test_an_old_responses_file_of_another_model_is_not_adopted(tmp_path: Path, example_media: Path, capsys) -> None:
    """Fault-finding pass: an old FILE.jsonl (no FILE.run/) was resumed under any model or mode."""
    old = _write(tmp_path / "out.jsonl", [{"id": "a", "media": "friday.mp4", "question": "?", "response": "Answer: A",
                                           "model": "openai:m3", "mode": "cite", "effort": None}])
    q = _write(tmp_path / "q.jsonl", [{"id": "a", "media": "friday.mp4", "question": "?"},
                                      {"id": "b", "media": "friday.mp4", "question": "?"}])
    cas = _write(tmp_path / "c.jsonl", [{"match": {"task": "generate"}, "output": {"text": "Answer: B"}}])
    assert main(["generate", str(q), "--model", f"replay:{cas}", "--mode", "base", "--out", str(old),
                 "--media-root", str(example_media)]) == 2
    assert "holds responses of openai:m3" in capsys.readouterr().err
    assert len(old.read_text().splitlines()) == 1


def test_two_spellings_of_one_generate_output_are_one_lock(tmp_path: Path) -> None:
    import pytest

    from murgat.commands.generate.command import GenerateCommand
    from murgat.engine.guards import held
    from murgat.engine.runlock import RunLocked
    from murgat.settings.generate import GenerateSettings

    def outputs(out: Path):
        return GenerateCommand().outputs(GenerateSettings(data="q.jsonl", model="m", out=str(out)))

    with held(outputs(tmp_path / "g5")), pytest.raises(RunLocked):  # --out DIR holds DIR/responses.jsonl
        with held(outputs(tmp_path / "g5" / "responses.jsonl")):
            pass
