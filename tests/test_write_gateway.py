"""Every write murgat makes goes through its write gateway (:mod:`murgat.media.safewrite`).

The source of every package is parsed and each call that writes a file outside the gateway is
an error: a write-mode ``open``/``Path.open``/``os.fdopen``, ``Path.write_text``/``write_bytes``
(on anything but an output claim of :mod:`murgat.engine.outputs`, which writes through the
gateway), ``os.open`` with flags that write or flags it cannot read, ``sqlite3.connect`` on a
path, ``shutil.copy*``/``move``, ``os.replace``/``rename``, ``Path.rename``/``replace``/``touch``,
``tempfile.mkstemp``/``NamedTemporaryFile``. The allow-list is the gateway module itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.sources import parse_source

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("murgat", "media", "programs", "prompts", "human_eval")
GATEWAY = {"media/safewrite.py"}
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
_READ_FLAGS = {"O_RDONLY", "O_DIRECTORY", "O_CLOEXEC", "O_NOFOLLOW", "O_NONBLOCK", "O_NOCTTY", "O_BINARY"}
_CLAIM_MAKERS = {"claim_output", "file"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _mode_writes(node: ast.AST | None) -> bool:
    """A mode argument that writes; one that is not a literal counts as writing."""
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return any(c in node.value for c in "wax+")
    return True


def _flags_write(node: ast.AST) -> bool:
    names = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return bool(names & _WRITE_FLAGS) or not names <= _READ_FLAGS | {"os"}


def _arg(call: ast.Call, pos: int, name: str) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[pos] if len(call.args) > pos else None


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []
        self._claims: list[set[str]] = [set()]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        names = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]
                 if a.annotation is not None and "Claim" in ast.unparse(a.annotation)}
        self._claims.append(names | self._claims[-1])
        self.generic_visit(node)
        self._claims.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Assign(self, node: ast.Assign) -> None:
        if self._is_claim(node.value):
            self._claims[-1].update(t.id for t in node.targets if isinstance(t, ast.Name))
        self.generic_visit(node)

    def _is_claim(self, node: ast.AST) -> bool:
        if isinstance(node, ast.IfExp):
            return self._is_claim(node.body) or self._is_claim(node.orelse)
        if isinstance(node, ast.Name):
            return node.id in self._claims[-1]
        return isinstance(node, ast.Call) and _dotted(node.func).rsplit(".", 1)[-1] in _CLAIM_MAKERS

    def visit_Call(self, node: ast.Call) -> None:
        why = self._why(node)
        if why:
            self.found.append((node.lineno, why))
        self.generic_visit(node)

    def _why(self, call: ast.Call) -> str | None:
        name = _dotted(call.func)
        attr = call.func.attr if isinstance(call.func, ast.Attribute) else name
        if name.startswith("safewrite."):  # the gateway itself
            return None
        if name in ("open", "io.open", "codecs.open") and _mode_writes(_arg(call, 1, "mode")):
            return "write-mode open()"
        if name == "os.fdopen" and _mode_writes(_arg(call, 1, "mode")):
            return "write-mode os.fdopen()"
        if attr == "open" and name not in ("open", "io.open", "codecs.open", "os.open") and \
                _mode_writes(_arg(call, 0, "mode")) and not name.startswith(("tarfile.", "zipfile.", "z.")):
            arg0 = _arg(call, 0, "mode")
            if isinstance(arg0, ast.Constant) and isinstance(arg0.value, str) and len(arg0.value) <= 3:
                return "write-mode Path.open()"
        if name == "os.open" and len(call.args) > 1 and _flags_write(call.args[1]):
            return "os.open() with write flags"
        if attr in ("write_text", "write_bytes") and isinstance(call.func, ast.Attribute) and \
                not self._is_claim(call.func.value):
            return f"Path.{attr}()"
        if name == "sqlite3.connect":
            arg = _arg(call, 0, "database")
            if not (isinstance(arg, ast.Constant) and arg.value == ":memory:"):
                return "sqlite3.connect() on a path"
        if name.startswith("shutil.") and ((attr.startswith("copy") and attr != "copyfileobj") or attr == "move"):
            return f"shutil.{attr}()"
        if name in ("os.replace", "os.rename", "os.renames", "os.link", "os.symlink", "os.truncate"):
            return f"{name}()"
        if name in ("tempfile.mkstemp", "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile"):
            return f"{name}()"
        if isinstance(call.func, ast.Attribute) and not name.startswith(("os.", "str.", "dataclasses.")):
            if attr in ("rename", "touch", "symlink_to", "hardlink_to") or (
                    attr == "replace" and len(call.args) == 1 and not call.keywords):
                return f"Path.{attr}()"
        return None


def _writes_outside_gateway() -> list[str]:
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in GATEWAY:
                continue
            finder = _Finder()
            finder.visit(parse_source(path.read_text(encoding="utf-8"), rel))
            out += [f"{rel}:{line}: {why}" for line, why in finder.found]
    return out


def test_no_file_is_written_outside_the_write_gateway() -> None:
    found = _writes_outside_gateway()
    assert not found, "writes outside media/safewrite.py:\n" + "\n".join(found)


def test_the_source_walk_finds_each_kind_of_write() -> None:
    """The walker itself: each kind of write in a sample is found, reads and claims are not."""
    sample = '''
import os, shutil, sqlite3, tempfile
from pathlib import Path
def f(p: Path, claim: "Claim", mode: str):
    open(p, "w"); open(p, mode); p.open("ab"); os.fdopen(3, "wb"); os.open(p, os.O_WRONLY | os.O_CREAT)
    p.write_text("x"); sqlite3.connect(str(p)); shutil.copy2(p, p); shutil.move(p, p); os.replace(p, p)
    p.rename(p); p.replace(p); tempfile.mkstemp(); p.touch(); os.open(p, flags)
    open(p); open(p, "rb"); os.open(p, os.O_RDONLY); sqlite3.connect(":memory:"); "a".replace("a", "b")
    claim.write_text("x"); c = claim_output(p); c.write_bytes(b""); folder.file("x").write_text("y")
'''
    finder = _Finder()
    finder.visit(parse_source(sample))
    assert len(finder.found) == 15, finder.found
