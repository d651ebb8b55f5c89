"""Ray is an optional extra: the core never imports it, and asking for it without it installed
is a clear error, not a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def test_the_core_does_not_import_ray() -> None:
    # the command modules too: since the settings/API change the work of each command lives there
    code = ("import sys; import murgat.cli as c; c.build_parser(); import murgat.commands.score.runner, murgat.programs.cli, "
            "murgat.commands.faithfulness.cli, murgat.commands.generate.cli, murgat.engine.scaleout, murgat.api, "
            "murgat.commands.score.command, "
            "murgat.engine.command, murgat.commands.faithfulness.command, murgat.commands.reflect.command, "
            "murgat.commands.generate.command, murgat.programs.command, murgat.engine.scaleout.tasks, murgat.engine.scaleout.driver, "
            "murgat.engine.scaleout.services, murgat.engine.scaleout.worker; print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_run_on_ray_without_ray_says_how_to_get_it(tmp_path: Path, example_media: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "Hi there you (audio, 0:01)."}) + "\n")
    code = ("import sys; sys.modules['ray'] = None; from murgat.cli import main; "
            f"sys.exit(main(['score', {str(inp)!r}, '--media-root', {str(example_media)!r}, '--judge', 'embedded', "
            f"'--out', {str(tmp_path / 'run')!r}, '--run-on', 'ray', '--quiet']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2 and "pip install 'murgat[ray]'" in out.stderr


def test_an_address_that_cannot_be_joined_is_one_line_exit_2(tmp_path: Path, example_media: Path, monkeypatch,
                                                             capsys) -> None:
    """#22: an unreachable or token-protected --ray-address ended in a 36-71 line traceback, exit 1.
    (ray.init is replaced: joining a real unreachable address waits minutes for its timeouts.)"""
    import ray

    from murgat.cli import main

    def refuse(*a, **k):  # what ray.init raises for an address with nothing behind it
        raise ConnectionError("Could not find any running Ray instance. Please specify the one to connect to.")

    monkeypatch.setattr(ray, "init", refuse)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}) + "\n")
    code = main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out",
                 str(tmp_path / "run"), "--run-on", "ray", "--ray-address", "127.0.0.1:1", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cannot start or join --ray-address 127.0.0.1:1" in err[0]


def test_record_with_ray_is_refused(tmp_path: Path, example_media: Path, capsys) -> None:
    """#22: --record cassette.jsonl --run-on ray exited 0 and wrote no cassette."""
    from murgat.cli import main

    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}) + "\n")
    code = main(["score", str(inp), "--media-root", str(example_media), "--judge", "embedded", "--out",
                 str(tmp_path / "run"), "--run-on", "ray", "--record", str(tmp_path / "c.jsonl"), "--quiet"])
    assert code == 2 and "--record works with --run-on local only" in capsys.readouterr().err


@pytest.mark.timeout(120)
def test_an_address_with_nothing_behind_it_is_one_line_and_quick(tmp_path: Path, example_media: Path) -> None:
    """#31: ``--ray-address 127.0.0.1:1`` (a port nobody listens on) printed Ray's own connection
    retries (~41 lines of rpc_client.h/gcs_client.cc, or minutes of them) before exit 2. The real
    ``ray.init`` this time: the address is tried before Ray is asked to join it."""
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}) + "\n")
    out = subprocess.run([sys.executable, "-m", "murgat", "score", str(inp), "--media-root", str(example_media),
                          "--judge", "embedded", "--out", str(tmp_path / "run"), "--run-on", "ray", "--ray-address",
                          "127.0.0.1:1", "--quiet"], capture_output=True, text=True, timeout=100)
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(err) == 1, out.stderr[-3000:]
    assert "127.0.0.1:1" in err[0] and "refused" in err[0].lower()


def test_an_unreachable_cluster_is_refused_before_the_judge_probes_ask_anything(tmp_path: Path, example_media: Path,
                                                                                 capsys) -> None:
    """Before: the probes sent their 12 requests (and a page of warnings) before the run said the
    cluster was not there."""
    from murgat.cli import main
    from tests.standin import StandIn

    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "media": "friday.mp4", "response": "Hi (audio, 0:01)."}) + "\n")
    with StandIn() as server:
        server.honest = True
        code = main(["score", str(inp), "--media-root", str(example_media), "--judge", "openai:m", "-J",
                     f"base_url={server.base_url}", "--out", str(tmp_path / "run"), "--run-on", "ray",
                     "--ray-address", "127.0.0.1:1", "--probes", "on", "--quiet"])
        sent = len(server.requests)
    err = capsys.readouterr().err
    assert code == 2 and sent == 0 and "cannot start or join --ray-address 127.0.0.1:1" in err
