"""The layer rule (DESIGN.md "Layout"): a module imports only from its own layer or the ones below,
``programs`` is reached from the command line only, packages import each other one way, and no
command package imports another.

Every import counts: the ones inside functions, relative imports (``from .x import y``), and the
imports a string names — ``importlib.import_module("murgat.x")``, ``__import__("murgat.x")``, a
``"murgat.x:name"`` factory string, a table of module names. Layers, top to bottom:

    cli       the command line (``murgat.cli``, ``*.cli``, ``*_cli``: parse into a settings model, call the API),
              the Python API (``murgat.api``; the package ``murgat`` itself, whose names are the API) and the
              deprecated import paths of earlier versions (``murgat.pipeline``), and
              ``murgat.integrations`` (inspect_ai task and scorer: users of the API)
    commands  score (``murgat.score``), faithfulness (+ reflect), generation (generate, sweep), programs,
              grounding, calibrate, validate, and the viewer's pages (what the commands write as report.html)
    engine    ``murgat.engine`` (the command lifecycle, run folder, item loop, preflight, options, guards),
              ``murgat.engine.scaleout`` (the loop on Ray), ``murgat.engine.runlock``: one unit
    judging   ``murgat.judging``: what every command that asks a judge or model about media shares, and
              ``murgat.judging.probes``: the judge probes (known-answer questions asked through the same path)
    judges    ``murgat.judges``
    core      ``murgat.core.schema``, ``citations``, ``text``, ``metric``, ``inputs``, ``jsonl``, ``answers``, ``rules``, …
    leaves    ``media``, ``prompts``, ``human_eval``: each imports nothing of ours but itself
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("murgat", "media", "programs", "prompts", "human_eval")
LAYERS = ("leaves", "core", "judges", "judging", "engine", "commands", "cli")
CLI = {"murgat.cli", "murgat.api", "murgat.__main__", "murgat.commands.media.cli", "murgat.commands.calibrate.cli",
       "murgat.commands.reflect.cli"}
#: earlier versions' import paths, kept working (with a deprecation warning) above everything they re-export
COMPAT = ("murgat.pipeline",)
COMMAND_PACKAGES = ("murgat.score", "murgat.faithfulness", "murgat.commands.generate", "murgat.report.viewer", "murgat.commands.ground",
                    "programs")
#: the packages of run commands: none imports another (they compose through the engine, by name)
RUN_COMMAND_PACKAGES = ("murgat.score", "murgat.faithfulness", "murgat.commands.generate", "murgat.commands.ground", "programs")
COMMAND_MODULES = {"murgat.commands.calibrate.score_runs", "murgat.commands.calibrate.faithfulness_runs", "murgat.commands.validate.check", "murgat.commands.judge_check.check",
                   "murgat.engine.differences"}
#: the judging layer: what commands that ask about media share, and the judge probes they ask first
JUDGING = ("murgat.judging", "murgat.judging.probes")
ENGINE = ("murgat.engine", "murgat.engine.scaleout", "murgat.engine.runlock")
#: a string that names a module and, after a colon, a name in it (a task factory, a command's class)
FACTORY = re.compile(r"^([A-Za-z_][\w.]*):[A-Za-z_]\w*$")
IMPORTERS = {"import_module", "__import__", "find_spec"}
INTEGRATIONS = "murgat.integrations"


def modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in (ROOT / pkg).rglob("*.py"):
            parts = f.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = f
    return out


def _within(mod: str, prefixes: tuple[str, ...]) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def layer(mod: str) -> str:
    if mod in CLI or mod.endswith((".cli", "_cli")) or mod == "murgat" or _within(mod, COMPAT):
        return "cli"
    if _within(mod, (INTEGRATIONS,)):  # murgat inside other harnesses: they use the Python API as a script does
        return "cli"
    if mod in COMMAND_MODULES or _within(mod, COMMAND_PACKAGES):
        return "commands"
    if _within(mod, ENGINE):
        return "engine"
    if _within(mod, JUDGING):
        return "judging"
    if _within(mod, ("murgat.judges",)):
        return "judges"
    if mod.split(".")[0] in ("media", "prompts", "human_eval"):
        return "leaves"
    return "core"


def node(mod: str) -> str:
    """The unit of the one-way rule: a subpackage of murgat, a top module, or a CLI module on its own
    (the engine's three places are one unit)."""
    if layer(mod) == "cli":
        return mod
    if layer(mod) == "engine":
        return "engine"
    parts = mod.split(".")
    if parts[0] == "murgat" and len(parts) > 1 and (ROOT / "murgat" / parts[1]).is_dir():
        return ".".join(parts[:2])
    return mod if parts[0] == "murgat" else parts[0]


def _named(node_: ast.AST, name: str, is_package: bool, imports_by_name: bool) -> list[str]:
    """The module names one AST node imports (resolved against ``name`` for relative imports);
    a table of module names counts in a module that imports by name (``murgat.cli``'s
    ``__import__`` loop), not in one that only lists names (``murgat.core.lazy``)."""
    if isinstance(node_, ast.Import):
        return [a.name for a in node_.names]
    if isinstance(node_, ast.ImportFrom):
        base = node_.module or ""
        if node_.level:
            here = name.split(".") if is_package else name.split(".")[:-1]
            here = here[: len(here) - (node_.level - 1)] if node_.level > 1 else here
            base = ".".join([*here, base] if base else here)
        return [base, *(f"{base}.{a.name}" for a in node_.names)]
    if isinstance(node_, ast.Call):
        fn = node_.func
        called = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
        if called in IMPORTERS and node_.args and isinstance(node_.args[0], ast.Constant) \
                and isinstance(node_.args[0].value, str):
            return [node_.args[0].value]
    if isinstance(node_, ast.Constant) and isinstance(node_.value, str) and (m := FACTORY.match(node_.value)):
        return [m.group(1)]
    if imports_by_name and isinstance(node_, ast.Tuple | ast.List | ast.Set):  # a table of module names
        return [e.value for e in node_.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                and re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+", e.value)]
    return []


def edges_of(name: str, source: str, mods: set[str], is_package: bool = False) -> set[str]:
    """The modules of ours that module ``name`` (its ``source``) imports, in any of the ways above."""
    edges: set[str] = set()
    tree = ast.parse(source)
    by_name = any(isinstance(n, ast.Call) and (n.func.attr if isinstance(n.func, ast.Attribute) else
                                               n.func.id if isinstance(n.func, ast.Name) else "") in IMPORTERS
                  for n in ast.walk(tree))
    for n in ast.walk(tree):
        for t in _named(n, name, is_package, by_name):
            parts = t.split(".")
            for k in range(len(parts), 0, -1):
                cand = ".".join(parts[:k])
                if cand in mods:
                    if cand != name and not name.startswith(cand + "."):  # a package's own __init__
                        edges.add(cand)
                    break
    return edges


def imports() -> dict[str, set[str]]:
    mods = modules()
    return {name: edges_of(name, f.read_text(encoding="utf-8"), set(mods), f.name == "__init__.py")
            for name, f in mods.items()}


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


def _run_command_package(mod: str) -> str | None:
    """The run command package of ``mod`` (its command-line module belongs to the layer above all of them)."""
    return None if layer(mod) == "cli" else next((p for p in RUN_COMMAND_PACKAGES if _within(mod, (p,))), None)


def test_no_command_package_imports_another() -> None:
    """#32: a command runs another (``sweep`` → generate and score, ``program --score``, ``score
    --gold``) through the engine by name; what several share lives below them (``murgat.judging``)."""
    bad = sorted(f"{a} imports {b}" for a, bs in imports().items() for b in bs
                 if (pa := _run_command_package(a)) and (pb := _run_command_package(b)) and pa != pb)
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


def test_the_rule_sees_every_kind_of_import() -> None:
    """The checker itself: a function-level import, a relative import, ``importlib`` and a
    ``module:function`` string are edges (so none of them can hide one)."""
    mods = {"murgat", "murgat.score", "murgat.commands.score.runner", "murgat.commands.score.stages", "murgat.engine",
            "murgat.engine.loop", "programs", "murgat.programs.task", "murgat.faithfulness", "murgat.judging.steps"}
    src = ("def f():\n    from murgat.engine import loop\n"
           "from .stages import x\n"
           "import importlib\nimportlib.import_module('murgat.programs.task')\n"
           "FACTORY = 'murgat.judging.steps:Labeller'\n")
    assert edges_of("murgat.commands.score.runner", src, mods) == {"murgat.engine", "murgat.engine.loop", "murgat.commands.score.stages",
                                                            "murgat.programs.task", "murgat.judging.steps"}
    assert edges_of("murgat.score", "from . import runner\n", mods, is_package=True) == {"murgat.commands.score.runner"}
    table = "for m in ('murgat.programs.task', 'murgat.engine.loop'):\n    __import__(m)\n"
    assert edges_of("murgat.cli", table, mods) == {"murgat.programs.task", "murgat.engine.loop"}
    assert edges_of("murgat.core.lazy", "LAZY = frozenset({'murgat.programs.task'})\n", mods) == set()
    assert "murgat.commands.score.runner" in imports()["murgat.commands.score.command"]  # and on the tree itself


def test_the_command_line_is_a_layer_over_the_api() -> None:
    """#21: the six run commands parse into a settings model and call ``murgat.api``; the API never
    reaches back into the command line."""
    graph = imports()
    assert not sorted(b for b in graph["murgat.api"] if layer(b) == "cli" and b != "murgat"), graph["murgat.api"]
    for mod in ("murgat.commands.score.cli", "murgat.commands.faithfulness.cli", "murgat.commands.reflect.cli",
                "murgat.commands.generate.cli", "murgat.programs.cli"):
        assert "murgat.api" in graph[mod], mod
        # nothing of a command's running: that lives in its ``command`` module, reached through the API
        assert not {b for b in graph[mod] if b.endswith((".command", "_command"))}, mod
