"""The README's offline examples run as written: every command of its ```` ```bash offline ```` blocks.

Each command is run by the ``murgat`` program of this environment, word for word as the README
writes it, from a fresh copy of ``examples/`` (the bundled media, responses, questions and replay
cassettes), with no provider key in the environment and the network cut: a ``sitecustomize`` put
first on ``PYTHONPATH`` makes every IPv4/IPv6 connect, send and name lookup fail and writes it down,
and a test fails on any line written. A command must exit 0 and leave the files its kind writes;
the figures the README quotes for it are checked against what it wrote. A README command that
drifts from what works (a renamed flag, a cassette that lacks an answer, a request whose inputs
changed) fails here, as does a cassette that ``examples/make_cassettes.py`` would not make again.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from murgat.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _load_maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_cassettes", ROOT / "examples" / "make_cassettes.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


MAKER = _load_maker()
COMMANDS: list[str] = MAKER.offline_commands(README)
#: the commands of the README's table that run a model or a judge: each needs an offline example
MAIN = ("score", "faithfulness", "reflect", "program", "generate", "sweep")

GUARD = '''"""No network for the README's offline commands (tests/test_readme_commands.py)."""
import os
import socket
import sys

_LOG = os.environ["MURGAT_TEST_NET_LOG"]
_NET = (socket.AF_INET, socket.AF_INET6)


def _refuse(what):
    with open(_LOG, "a", encoding="utf-8") as f:
        f.write(f"{' '.join(sys.argv)}: {what}\\n")
    raise OSError(101, f"network access refused by the README test: {what}")


def _guarded(name):
    original = getattr(socket.socket, name)

    def call(self, *args):
        if self.family in _NET:
            _refuse(f"socket.{name}{args!r}")
        return original(self, *args)
    return call


for _name in ("connect", "connect_ex", "sendto"):
    setattr(socket.socket, _name, _guarded(_name))
socket.getaddrinfo = lambda *a, **k: _refuse(f"getaddrinfo{a!r}")
socket.gethostbyname = lambda *a, **k: _refuse(f"gethostbyname{a!r}")

# the interpreter's own sitecustomize, if it has one, still runs
_here = os.path.dirname(os.path.abspath(__file__))
for _p in sys.path:
    _cand = os.path.join(os.path.abspath(_p or "."), "sitecustomize.py")
    if os.path.dirname(_cand) != _here and os.path.isfile(_cand):
        import importlib.util as _u
        _spec = _u.spec_from_file_location("_next_sitecustomize", _cand)
        _spec.loader.exec_module(_u.module_from_spec(_spec))
        break
'''
#: environment variables a provider could take a key or an endpoint from: none reaches the commands
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|^(OPENAI|GEMINI|GOOGLE|ANTHROPIC|HF|HUGGING)")


class Workspace:
    """A fresh copy of ``examples/`` where the README's commands run one after another."""

    def __init__(self, root: Path, cache: Path) -> None:
        self.root = root
        shutil.copytree(ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
        (root / "guard").mkdir()
        (root / "guard" / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
        self.net_log = root / "network.log"
        self.env = {k: v for k, v in os.environ.items() if not _SECRET.search(k)}
        self.env.update({"PYTHONPATH": str(root / "guard"), "MURGAT_TEST_NET_LOG": str(self.net_log),
                         "MURGAT_CACHE_DIR": str(cache), "COLUMNS": "160"})
        program = Path(sys.executable).parent / "murgat"
        self.murgat = [str(program)] if program.exists() else [sys.executable, "-m", "murgat"]
        self.done: dict[str, subprocess.CompletedProcess[str]] = {}

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        """``command`` exactly as written (``murgat`` is this environment's program), once."""
        if command not in self.done:
            self.done[command] = subprocess.run([*self.murgat, *MAKER.argv_of(command)], cwd=self.root, env=self.env,
                                                capture_output=True, text=True, timeout=600)
        return self.done[command]

    def network_attempts(self) -> str:
        return self.net_log.read_text(encoding="utf-8") if self.net_log.exists() else ""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("readme"), Path(os.environ["MURGAT_CACHE_DIR"]))  # the session's media cache


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def _out(argv: list[str]) -> str:
    out = _flag(argv, "--out")
    assert out, f"a run command of the offline examples writes a folder: {argv}"
    return out


def _program_files(argv: list[str]) -> list[str]:
    variants = (_flag(argv, "--variant") or "all").split(",")
    if variants == ["all"]:
        variants = ["logic-declarative", "logic-imperative", "narrative-declarative", "narrative-imperative"]
    return ["summary.json", "report.html", *(f"{v}/{f}" for v in variants for f in ("responses.jsonl", "traces.jsonl"))]


def _sweep_files(argv: list[str]) -> list[str]:
    efforts = (_flag(argv, "--efforts") or "minimal,low,medium,high").split(",")
    return ["sweep.json", "sweep.png", *(f"effort-{e}/{f}" for e in efforts
                                         for f in ("responses.jsonl", "run/summary.json", "run/report.html"))]


#: what each kind of command must leave: (folder, files in it), from its arguments
EXPECTED: dict[str, Callable[[list[str]], tuple[str | None, list[str]]]] = {
    "validate": lambda a: (None, []),
    "summarize": lambda a: (None, []),
    "view": lambda a: (a[1], ["report.html"]),
    "score": lambda a: (_out(a), ["config.json", "results.jsonl", "summary.json", "report.html", "cache.sqlite"]),
    "faithfulness": lambda a: (_out(a), ["config.json", "results.jsonl", "summary.json", "report.html"]),
    "reflect": lambda a: (_out(a), ["config.json", "responses.jsonl", "traces.jsonl", "summary.json", "report.html"]),
    "program": lambda a: (_out(a), _program_files(a)),
    "generate": lambda a: (_out(a), ["config.json", "responses.jsonl", "summary.json"]),
    "sweep": lambda a: (_out(a), _sweep_files(a)),
}


def _summary(folder: Path, name: str = "summary.json") -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def _faithfulness_figures(folder: Path) -> None:
    # README: 4 of 18 perception steps unfaithful (the "Hildy!" call, the flag, the horn, the dim scene at 0:12)
    s = _summary(folder)
    assert (s["unfaithful_steps"], s["perception_steps"], s["undetermined_steps"]) == (4, 18, 0)
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    flagged = sorted(st["text"] for r in rows for st in r["steps"] if st["faithful"] is False)
    assert flagged == ["A horn honks (audio, 0:03).", "He holds up a flag (visual, 0:05).",
                       "She greets them by calling out \"Hildy!\" (audio, 0:00-0:01).", "The scene is dim (visual, 0:12)."]


def _reflect_figures(folder: Path) -> None:
    # README: 3 steps regenerated, each accepted at the first attempt; UPR 22.2% → 0% by the independent judge
    s = _summary(folder)
    assert s["regenerations_invoked"] == 3 and s["resolved_after_attempts"] == {"1": 3} and s["unresolved"] == 0
    assert s["upr_before"]["value"] == pytest.approx(4 / 18) and s["upr_after"]["value"] == 0.0
    assert s["measured_by"]["independent"] is True and s["accuracy_before"] == s["accuracy_after"] == 1.0


def _program_figures(folder: Path) -> None:
    # README: every description verified by the runtime check, every answer right
    s = _summary(folder)
    assert {v: (r["descriptions"], r["accuracy"], r["errors"]) for v, r in s["variants"].items()} == {
        "logic-declarative": ({"verified": 9}, 1.0, 0), "narrative-imperative": ({"verified": 5}, 1.0, 0)}


def _sweep_figures(folder: Path) -> None:
    # README: MURGAT-S 0.700 at low effort (a wrong second, a sound track that does not exist), 1.000 at high
    rows = {r["effort"]: r for r in _summary(folder, "sweep.json")["rows"]}
    assert rows["low"]["murgat_s"]["value"] == pytest.approx(0.7) and rows["high"]["murgat_s"]["value"] == 1.0
    assert rows["low"]["accuracy"]["value"] == rows["high"]["accuracy"]["value"] == 1.0


def _validate_figures(stdout: str) -> None:
    # README: 3 invalid citations — a flag seen in a sound-only file, a horn in a file with no sound, 0:12 past the end
    text = " ".join(stdout.split())
    for reason in ("'visual, 0:05': the media has no visual stream", "'audio, 0:03': the media has no audio stream",
                   "'visual, 0:12': starts at 0:12, past the end"):
        assert reason in text, reason
    assert "5 items, 2 with problems" in text


#: the figures the README quotes, by kind of command (checked on what the command wrote)
FIGURES: dict[str, Callable[[Path], None]] = {"faithfulness": _faithfulness_figures, "reflect": _reflect_figures,
                                              "program": _program_figures, "sweep": _sweep_figures}
#: the figures the README quotes of a command that writes no folder (checked on what it printed)
PRINTED: dict[str, Callable[[str], None]] = {"validate": _validate_figures}


def test_the_readme_has_an_offline_example_of_every_main_command() -> None:
    """The README's command table's run commands each have a command in an offline block, and every
    command there is a murgat command this test knows the outputs of."""
    assert COMMANDS, "README.md has no ```bash offline block"
    kinds = [MAKER.argv_of(c)[0] for c in COMMANDS]
    assert set(MAIN) <= set(kinds), f"no offline example of {sorted(set(MAIN) - set(kinds))}"
    unknown = sorted(set(kinds) - set(EXPECTED))
    assert not unknown, f"say in EXPECTED what these offline commands must leave: {unknown}"
    for c in COMMANDS:  # the replay cassettes they name are shipped
        for name in MAKER.SPEC.findall(c):
            assert (ROOT / "examples" / "cassettes" / name).is_file(), name


@pytest.mark.parametrize("index", range(len(COMMANDS)), ids=[MAKER.argv_of(c)[0] for c in COMMANDS])
def test_readme_offline_command_runs_as_written(workspace: Workspace, index: int) -> None:
    """Each command after the ones before it (a later one may read an earlier one's folder)."""
    for before in COMMANDS[:index]:
        workspace.run(before)
    command = COMMANDS[index]
    done = workspace.run(command)
    assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert not workspace.network_attempts(), f"{command} tried to reach the network:\n{workspace.network_attempts()}"
    argv = MAKER.argv_of(command)
    if argv[0] in PRINTED:
        PRINTED[argv[0]](done.stdout)
    folder, files = EXPECTED[argv[0]](argv)
    if folder is not None:
        missing = [f for f in files if not (workspace.root / folder / f).is_file()]
        assert not missing, f"{command} did not write {missing} in {folder}"
        for page in (f for f in files if f.endswith("report.html")):  # every item's media linked (a view too)
            unlinked = (workspace.root / folder / page).read_text(encoding="utf-8").count('"media": null')
            assert not unlinked, f"{command}: {unlinked} item(s) of {folder}/{page} link no media"
        if argv[0] in FIGURES:
            FIGURES[argv[0]](workspace.root / folder)


def test_the_network_guard_refuses_and_records(workspace: Workspace) -> None:
    """The guard the commands run under really cuts the network (else the test above could not fail)."""
    probe = workspace.root / "probe.log"
    env = {**workspace.env, "MURGAT_TEST_NET_LOG": str(probe)}
    code = ("import socket\n"
            "try:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\nexcept OSError as e:\n    print(e)\n"
            "try:\n    socket.getaddrinfo('example.org', 443)\nexcept OSError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.count("network access refused") == 2, done.stdout + done.stderr
    assert len(probe.read_text(encoding="utf-8").splitlines()) == 2
    assert not any(_SECRET.search(k) for k in workspace.env)


def test_a_cassette_miss_names_the_request_and_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A README command whose cassette lacks one answer stops at once (exit 3) naming the task and its inputs."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("*.py"))
    cassette = tmp_path / "examples" / "cassettes" / "faithfulness.jsonl"
    lines = cassette.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [ln for ln in lines if not ("faith_chain" in ln and "He holds up a flag" in ln)]
    assert len(kept) == len(lines) - 1
    cassette.write_text("".join(kept), encoding="utf-8")
    (command,) = [c for c in COMMANDS if MAKER.argv_of(c)[0] == "faithfulness"]
    monkeypatch.chdir(tmp_path)
    assert main([*MAKER.argv_of(command), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert "no recorded answer for task 'faith_chain'" in err and "He holds up a flag" in err


def test_the_cassettes_are_what_make_cassettes_makes() -> None:
    """``examples/make_cassettes.py --check``: the shipped cassettes (and questions.jsonl) are exactly what
    its hand-written answers give for the README's commands today — nothing stale, nothing edited by
    hand — and each stays small."""
    assert MAKER.main(["--check"]) == 0
    for p in (ROOT / "examples" / "cassettes").glob("*.jsonl"):
        assert p.stat().st_size < 64_000, p
