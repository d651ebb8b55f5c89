"""The layer rule, read from the one table of layers (``layers.toml`` at the repository root).

A module imports only from its own layer or the ones below it; no modules import each other in a
circle (file level); the units of a ``separate`` layer (the commands) never import each other; the
leaves import nothing of murgat's but themselves; optional third-party stacks are imported only where
the table allows. Every import counts: the ones inside functions, relative imports (``from .x import
y``), and the imports a string names — ``importlib.import_module("murgat.x")``, ``__import__("murgat.x")``,
a ``"murgat.x:name"`` factory string, a table of module names. A module whose package the table does not
list fails the test: no name pattern grants a place.
"""

from __future__ import annotations

import ast
import os
import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from tests.sources import parse_source

ROOT = Path(__file__).resolve().parent.parent
#: a string that names a module and, after a colon, a name in it (a task factory, a command's class)
FACTORY = re.compile(r"^([A-Za-z_][\w.]*):[A-Za-z_]\w*$")
IMPORTERS = {"import_module", "__import__", "find_spec"}


@cache
def table() -> dict[str, Any]:
    return tomllib.loads((ROOT / "layers.toml").read_text(encoding="utf-8"))


def layer_names() -> list[str]:
    return [entry["name"] for entry in table()["layer"]]


@cache
def placed() -> dict[str, str]:
    """Each listed package (and module) → its layer."""
    out: dict[str, str] = {}
    for entry in table()["layer"]:
        for name in [*entry.get("packages", []), *entry.get("modules", [])]:
            assert name not in out, f"{name} is listed twice in layers.toml"
            out[name] = entry["name"]
    return out


@cache
def modules() -> dict[str, Path]:
    """Every module of the ``murgat`` package, the leaf folders its links lead to included."""
    out = {}
    for folder, dirs, files in os.walk(ROOT / "murgat", followlinks=True):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = Path(folder).relative_to(ROOT)
        for f in sorted(files):
            if f.endswith(".py"):
                parts = (*rel.parts, f[:-3])
                out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = Path(folder) / f
    return out


def package_of(mod: str) -> str:
    """The package a module's file sits in (a package's ``__init__`` is its own package)."""
    f = modules()[mod]
    return mod if f.name == "__init__.py" else mod.rpartition(".")[0]


def layer(mod: str) -> str:
    """The module's layer: its own entry in the table, else its package's; an unlisted package is an error."""
    where = placed()
    if mod in where:
        return where[mod]
    pkg = package_of(mod)
    if pkg not in where:
        raise LookupError(f"{mod}: its package {pkg} is not listed in layers.toml")
    return where[pkg]


def unit(mod: str) -> str:
    """The unit of a ``separate`` layer a module belongs to (its listed package or module)."""
    return mod if mod in placed() else package_of(mod)


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
    tree = parse_source(source)
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


@cache
def imports() -> dict[str, frozenset[str]]:
    mods = modules()
    return {name: frozenset(edges_of(name, f.read_text(encoding="utf-8"), set(mods), f.name == "__init__.py"))
            for name, f in mods.items()}


def _layer_index(mod: str) -> int:
    return layer_names().index(layer(mod))


def test_every_module_has_a_listed_package() -> None:
    unlisted = []
    for mod in modules():
        try:
            layer(mod)
        except LookupError as exc:
            unlisted.append(str(exc))
    assert not unlisted, "\n".join(unlisted)


def test_every_listed_package_exists() -> None:
    missing = sorted(name for name in placed() if name not in modules())
    assert not missing, missing


def test_every_import_goes_down() -> None:
    bad = sorted(f"{a} ({layer(a)}) imports {b} ({layer(b)})" for a, bs in imports().items() for b in bs
                 if _layer_index(b) < _layer_index(a))
    assert not bad, "\n".join(bad)


def test_leaves_import_only_themselves() -> None:
    leaves = {e["name"] for e in table()["layer"] if e.get("leaves")}
    bad = sorted(f"{a} imports {b}" for a, bs in imports().items() for b in bs
                 if layer(a) in leaves and unit(b) != unit(a) and not b.startswith(unit(a) + "."))
    assert not bad, "\n".join(bad)


def test_units_of_a_separate_layer_never_import_each_other() -> None:
    """A command runs another (``sweep`` → generate and score, ``program --score``, ``score --gold``)
    through the engine by name; what several share lives below them."""
    separate = {e["name"] for e in table()["layer"] if e.get("separate")}
    bad = sorted(f"{a} imports {b}" for a, bs in imports().items() for b in bs
                 if layer(a) in separate and layer(b) == layer(a) and unit(a) != unit(b)
                 and unit(b) != "murgat.commands")
    assert not bad, "\n".join(bad)


def cycles(graph: dict[str, frozenset[str]]) -> list[str]:
    """Every circle of a graph, as one path each (depth-first search for back edges)."""
    state: dict[str, int] = {}
    found: list[str] = []

    def visit(n: str, path: list[str]) -> None:
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                found.append(" → ".join([*path[path.index(m):], m]))
            elif m not in state:
                visit(m, [*path, m])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    return found


def test_no_modules_import_each_other_in_a_circle() -> None:
    found = cycles(imports())
    assert not found, "\n".join(found)


def test_optional_stacks_are_imported_only_where_the_table_allows() -> None:
    allowed: dict[str, list[str]] = table()["optional"]
    bad = []
    for mod, f in modules().items():
        tree = parse_source(f.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
        for stack, places in allowed.items():
            if any(x == stack or x.startswith(stack + ".") for x in names) and not any(
                    mod == p or mod.startswith(p + ".") for p in places):
                bad.append(f"{mod} imports {stack}")
    assert not bad, "\n".join(bad)


def test_the_package_is_the_only_import_name() -> None:
    """No module imports the leaf folders by their own names (``import media``): inside the package they are
    ``murgat.media``, … (the links under ``murgat/``), and the wheel has no other top-level package."""
    tops = {"media", "programs", "prompts", "human_eval"}
    bad = []
    for mod, f in modules().items():
        for n in ast.walk(parse_source(f.read_text(encoding="utf-8"))):
            names = [a.name for a in n.names] if isinstance(n, ast.Import) else \
                [n.module] if isinstance(n, ast.ImportFrom) and n.module and not n.level else []
            bad += [f"{mod} imports {x}" for x in names if x.split(".")[0] in tops]
    assert not bad, "\n".join(bad)


def test_the_rule_sees_every_kind_of_import() -> None:
    """The checker itself: a function-level import, a relative import, ``importlib`` and a
    ``module:function`` string are edges (so none of them can hide one)."""
    mods = {"murgat", "murgat.commands.score", "murgat.commands.score.runner", "murgat.commands.score.stages",
            "murgat.engine", "murgat.engine.loop", "murgat.programs", "murgat.programs.task",
            "murgat.judging.steps"}
    src = ("def f():\n    from murgat.engine import loop\n"
           "from .stages import x\n"
           "import importlib\nimportlib.import_module('murgat.programs.task')\n"
           "FACTORY = 'murgat.judging.steps:Labeller'\n")
    assert edges_of("murgat.commands.score.runner", src, mods) == {
        "murgat.engine", "murgat.engine.loop", "murgat.commands.score.stages", "murgat.programs.task",
        "murgat.judging.steps"}
    assert edges_of("murgat.commands.score", "from . import runner\n", mods, is_package=True) == {
        "murgat.commands.score.runner"}
    table_src = "for m in ('murgat.programs.task', 'murgat.engine.loop'):\n    __import__(m)\n"
    assert edges_of("murgat.cli", table_src, mods) == {"murgat.programs.task", "murgat.engine.loop"}
    assert edges_of("murgat.core.lazy", "LAZY = frozenset({'murgat.programs.task'})\n", mods) == set()
    assert "murgat.commands.score.runner" in imports()["murgat.commands.score.command"]  # and on the tree itself
    assert cycles({"a": frozenset({"b"}), "b": frozenset({"a"})}) == ["a → b → a"]


def test_an_unlisted_package_is_an_error() -> None:
    modules()["murgat.commands.newthing"] = ROOT / "murgat" / "commands" / "newthing" / "__init__.py"
    try:
        try:
            layer("murgat.commands.newthing")
        except LookupError as exc:
            assert "not listed in layers.toml" in str(exc)
        else:
            raise AssertionError("an unlisted package got a layer")
    finally:
        del modules()["murgat.commands.newthing"]


def test_the_command_line_is_a_layer_over_the_api() -> None:
    """The run commands parse into a settings model and call ``murgat.api``; the API never reaches
    back into the command line, and a command's ``cli`` module holds nothing of its running."""
    graph = imports()
    assert not sorted(b for b in graph["murgat.api"] if layer(b) == "cli"), graph["murgat.api"]
    for mod in ("murgat.commands.score.cli", "murgat.commands.faithfulness.cli", "murgat.commands.reflect.cli",
                "murgat.commands.generate.cli", "murgat.programs.cli"):
        assert "murgat.api" in graph[mod], mod
        assert not {b for b in graph[mod] if b.endswith((".command", "_command"))}, mod
