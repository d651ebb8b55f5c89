"""The layer rule (DESIGN.md "Layout"): a module imports only from its own layer or the ones below,
``programs`` is reached from the command line only, and packages import each other one way.

Every import counts, including the ones inside functions (murgat defers heavy imports to first
use, so module-level imports alone would hide most of the graph). Layers, top to bottom:

    cli       the command line (``murgat.cli``, ``*.cli``, ``*_cli``: parse into a settings model, call the API)
              and the Python API (``murgat.api``; the package ``murgat`` itself, whose names are the API), and
              ``murgat.integrations`` (inspect_ai task and scorer: users of the API)
    commands  score (``murgat.pipeline``: ``command`` runs it, ``settings`` declares it), faithfulness,
              generation, programs, calibrate, validate, the viewer's pages
    engine    ``murgat.engine`` (run folder, item loop, preflight, options, guards), ``murgat.scaleout`` (the loop on
              Ray), ``murgat.runlock``
    judges    ``murgat.judges``
    core      ``murgat.schema``, ``citations``, ``text``, ``metric``, ``inputs``, ``jsonl``, ``answers``, ``rules``, …
    leaves    ``media``, ``prompts``, ``human_eval``: each imports nothing of ours but itself
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("murgat", "media", "programs", "prompts", "human_eval")
LAYERS = ("leaves", "core", "judges", "engine", "commands", "cli")
CLI = {"murgat.cli", "murgat.api", "murgat.__main__", "murgat.media_cli", "murgat.calibrate_cli",
       "murgat.faithfulness.reflect_cli"}
COMMAND_PACKAGES = ("murgat.pipeline", "murgat.faithfulness", "murgat.generation", "murgat.viewer", "murgat.grounding",
                    "programs")
COMMAND_MODULES = {"murgat.calibrate", "murgat.calibrate_faithfulness", "murgat.validate"}
ENGINE = ("murgat.engine", "murgat.scaleout", "murgat.runlock")
INTEGRATIONS = "murgat.integrations"


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in (ROOT / pkg).rglob("*.py"):
            parts = f.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = f
    return out


def layer(mod: str) -> str:
    if mod in CLI or mod.endswith((".cli", "_cli")) or mod == "murgat":  # murgat/__init__: the API's names
        return "cli"
    if mod.startswith(INTEGRATIONS):  # murgat inside other harnesses: they use the Python API as a script does
        return "cli"
    if mod in COMMAND_MODULES or mod.startswith(tuple(p + "." for p in COMMAND_PACKAGES)) or mod in COMMAND_PACKAGES:
        return "commands"
    if mod.startswith(ENGINE):
        return "engine"
    if mod == "murgat.judges" or mod.startswith("murgat.judges."):
        return "judges"
    if mod.split(".")[0] in ("media", "prompts", "human_eval"):
        return "leaves"
    return "core"


def node(mod: str) -> str:
    """The unit of the one-way rule: a subpackage of murgat, a top module, or a CLI module on its own."""
    if layer(mod) == "cli":
        return mod
    parts = mod.split(".")
    if parts[0] == "murgat" and len(parts) > 1 and (ROOT / "murgat" / parts[1]).is_dir():
        return ".".join(parts[:2])
    return mod if parts[0] == "murgat" else parts[0]


def imports() -> dict[str, set[str]]:
    mods = modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for name, f in mods.items():
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(n, ast.Import):
                targets = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                targets = [n.module] + [f"{n.module}.{a.name}" for a in n.names]
            for t in targets:
                parts = t.split(".")
                for k in range(len(parts), 0, -1):
                    cand = ".".join(parts[:k])
                    if cand in mods:
                        if cand != name and not name.startswith(cand + "."):  # a package's own __init__
                            edges[name].add(cand)
                        break
    return edges


def test_every_import_goes_down() -> None:
    bad = sorted(f"{a} ({layer(a)}) imports {b} ({layer(b)})" for a, bs in imports().items() for b in bs
                 if LAYERS.index(layer(b)) > LAYERS.index(layer(a)))
    assert not bad, "\n".join(bad)


def test_leaves_import_only_themselves() -> None:
    bad = sorted(f"{a} imports {b}" for a, bs in imports().items() for b in bs
                 if layer(a) == "leaves" and b.split(".")[0] != a.split(".")[0])
    assert not bad, "\n".join(bad)


def test_only_the_cli_reaches_programs() -> None:
    bad = sorted(f"{a} imports {b}" for a, bs in imports().items() for b in bs
                 if b.split(".")[0] == "programs" and a.split(".")[0] != "programs" and layer(a) != "cli")
    assert not bad, "\n".join(bad)


def test_no_two_packages_import_each_other() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for a, bs in imports().items():
        for b in bs:
            if node(a) != node(b):
                graph[node(a)].add(node(b))
    # any cycle, not only pairs: depth-first search for a back edge
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(n: str, path: list[str]) -> None:
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                cycles.append(" → ".join([*path[path.index(m):], m]))
            elif m not in state:
                visit(m, [*path, m])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    assert not cycles, "\n".join(cycles)


def test_the_rule_sees_lazy_imports() -> None:
    """The checker itself: a function-level import is an edge (most of murgat's imports are lazy)."""
    assert "murgat.pipeline.runner" in imports()["murgat.pipeline.command"]


def test_the_command_line_is_a_layer_over_the_api() -> None:
    """#21: the six run commands parse into a settings model and call ``murgat.api``; the API never
    reaches back into the command line."""
    graph = imports()
    assert not sorted(b for b in graph["murgat.api"] if layer(b) == "cli" and b != "murgat"), graph["murgat.api"]
    for mod in ("murgat.pipeline.cli", "murgat.faithfulness.cli", "murgat.faithfulness.reflect_cli",
                "murgat.generation.cli", "programs.cli"):
        assert "murgat.api" in graph[mod], mod
        # nothing of a command's running: that lives in its ``command`` module, reached through the API
        assert not {b for b in graph[mod] if b.endswith((".command", "_command"))}, mod
