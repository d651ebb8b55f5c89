"""Static checks on a planner's program before anything runs: parse, allow-list, budgets.

A program is model-written text, so it is treated as hostile. It is parsed with ``ast``
(never compiled or executed by Python), and every node must be of an allowed kind and obey
the rules below. A refusal names the line, column, node and rule, so a ``--replan`` can
show the planner exactly what to fix.

Rules:

* size: at most ``max_chars`` characters (checked before parsing, so a 10 MB program costs
  nothing), ``max_nodes`` AST nodes and ``max_depth`` nesting levels;
* statements: assignment (to plain names, or tuples of names), augmented assignment,
  expression statements, ``if``/``elif``/``else``, ``for`` over a list or ``range``,
  ``break``/``continue``/``pass``, ``return``, and one ``def execute_command(video, options)``
  at top level (logic variants); no ``while``, ``import``, ``class``, ``lambda``, ``with``,
  ``try``, ``global``, ``del``, ``assert``, ``yield``, ``await``, comprehensions;
* expressions: literals (strings up to ``max_const_chars``, finite numbers), names, list/tuple/dict
  displays, f-strings without format specs that nest expressions, comparisons, boolean
  and unary operators, ``+ - * / // %`` (no ``**``, no bit operators), subscripts;
* names: no dunder names anywhere; the interpreter's own builtins only are callable;
* attributes: only ``video.<method>`` for the API's methods; nothing else has attributes.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field

#: functions a program may call by name (API operations and a few pure builtins)
API_FUNCTIONS = frozenset({"find", "describe", "synthesize", "answer_question"})
BUILTINS = frozenset({"len", "str", "int", "float", "min", "max", "range", "abs", "round", "sum", "sorted", "list",
                      "enumerate", "bool"})
VIDEO_METHODS = frozenset({"find", "query", "describe", "answer_question", "synthesize"})
ENTRY = "execute_command"

_ALLOWED = (
    ast.Module, ast.Expression, ast.Expr, ast.Assign, ast.AugAssign, ast.If, ast.For, ast.Break, ast.Continue,
    ast.Pass, ast.Return, ast.FunctionDef, ast.arguments, ast.arg,
    ast.Constant, ast.Name, ast.Load, ast.Store, ast.List, ast.Tuple, ast.Dict, ast.JoinedStr, ast.FormattedValue,
    ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.Call, ast.keyword, ast.Attribute, ast.Subscript, ast.Slice,
    ast.IfExp,
    ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot,
)


@dataclass
class Limits:
    """Budgets for one program (all enforced, statically or while interpreting).

    ``max_steps`` counts work, not nodes: one step per node evaluated, plus one per container
    part a step makes or walks (a thousand-item list costs a thousand) and one per 100
    characters of string it makes. ``max_value_depth`` caps how deeply values nest (so that
    printing, comparing or writing one to the trace cannot overflow a stack);
    ``max_memo`` bounds the interpreter's memo of measured values (memory, whatever the
    program does). ``max_answer_chars`` is checked on the planner's whole answer before
    the program is looked for in it.

    Text sizes (each checked while the text is written, before it exists whole; see
    :mod:`murgat.programs.bounded`): ``max_query_chars`` for ``find``'s query and any modality,
    ``max_arg_chars`` for an instruction, a question, ``describe``'s ranges and a list of
    options (all options together), ``max_range_items`` and ``max_options`` for how many
    items those lists hold. ``max_return_chars`` caps the program's returned value as text
    and every model answer an operation hands to the program (a description, a conclusion),
    so that what the answer reader and the trace see is bounded; ``max_response_chars`` caps
    the response the item assembles (``murgat score``'s own default limit, so a program's
    response is never one that ``score`` would refuse). ``yield_steps``: how often (in
    steps) the interpreter hands the event loop its turn, so that ``--program-timeout``
    fires and other items go on while a program computes.
    """

    max_chars: int = 20_000
    max_nodes: int = 3_000
    max_depth: int = 40
    max_const_chars: int = 2_000
    max_steps: int = 20_000
    max_ops: int = 24
    max_seconds: float = 600.0
    max_str: int = 50_000
    max_list: int = 1_000
    max_int: int = 10**12
    max_range: int = 1_000
    max_weight: int = 20_000
    max_value_depth: int = 32
    max_memo: int = 4_096
    max_answer_chars: int = 200_000
    max_query_chars: int = 1_000
    max_arg_chars: int = 10_000
    max_range_items: int = 64
    max_options: int = 26
    max_return_chars: int = 20_000
    max_response_chars: int = 200_000
    yield_steps: int = 256


class ProgramRefused(ValueError):
    """A program broke a rule; the message names where and which."""

    def __init__(self, rule: str, node: ast.AST | None = None, detail: str = "") -> None:
        self.rule = rule
        self.line = getattr(node, "lineno", None)
        self.col = getattr(node, "col_offset", None)
        self.node = type(node).__name__ if node is not None else None
        where = f"line {self.line}, column {self.col}: " if self.line is not None else ""
        what = f"{self.node} " if self.node else ""
        super().__init__(f"{where}{what}refused: {rule}" + (f" ({detail})" if detail else ""))


@dataclass
class Checked:
    """A program that passed the checks, ready for the interpreter."""

    tree: ast.Module
    kind: str  # "logic" (def execute_command) or "narrative" (a list of call statements)
    n_nodes: int
    entry: ast.FunctionDef | None = None
    notes: list[str] = field(default_factory=list)


def _depth(node: ast.AST, limit: int) -> int:
    """Nesting depth, iteratively (a deeply nested program must not overflow our stack)."""
    best = 0
    stack = [(node, 1)]
    while stack:
        n, d = stack.pop()
        if d > limit:
            raise ProgramRefused(f"nesting deeper than {limit}", n)
        best = max(best, d)
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(n))
    return best


def parse_program(code: str, limits: Limits | None = None, *, mode: str = "auto") -> Checked:
    """Parse and check ``code``. ``mode``: ``logic``, ``narrative`` or ``auto`` (by content)."""
    lim = limits or Limits()
    if len(code) > lim.max_chars:
        raise ProgramRefused(f"program longer than {lim.max_chars} characters", None, f"{len(code)} characters")
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        raise ProgramRefused("syntax error", None, f"line {exc.lineno}: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise ProgramRefused("cannot be parsed within limits", None, type(exc).__name__) from None
    _depth(tree, lim.max_depth)
    nodes = list(ast.walk(tree))
    if len(nodes) > lim.max_nodes:
        raise ProgramRefused(f"more than {lim.max_nodes} syntax nodes", None, f"{len(nodes)} nodes")
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    kind = "logic" if defs or mode == "logic" else "narrative"
    if mode != "auto" and mode != kind:
        raise ProgramRefused(f"a {mode} program was expected", tree.body[0] if tree.body else None)
    entry = None
    if kind == "logic":
        if len(defs) != 1 or defs[0].name != ENTRY:
            raise ProgramRefused(f"exactly one function, named {ENTRY}", defs[0] if defs else None)
        entry = defs[0]
        a = entry.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or len(a.args) > 2:
            raise ProgramRefused(f"{ENTRY} takes (video, options) only", entry)
        if entry.decorator_list or entry.returns:
            raise ProgramRefused("no decorators or annotations", entry)
        for stmt in tree.body:
            if stmt is not entry and not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
                raise ProgramRefused("only the function (and a docstring) at top level", stmt)
    for n in nodes:
        _check_node(n, entry, lim)
    return Checked(tree=tree, kind=kind, n_nodes=len(nodes), entry=entry)


def _check_node(n: ast.AST, entry: ast.FunctionDef | None, lim: Limits) -> None:
    if not isinstance(n, _ALLOWED):
        raise ProgramRefused(f"{type(n).__name__} is not allowed", n)
    if isinstance(n, ast.FunctionDef) and n is not entry:
        raise ProgramRefused("nested function definitions are not allowed", n)
    if isinstance(n, ast.Name) and n.id.startswith("__"):
        raise ProgramRefused("dunder names are not allowed", n, n.id)
    if isinstance(n, ast.arg) and n.arg.startswith("_"):
        raise ProgramRefused("argument names must not start with '_'", n)
    if isinstance(n, ast.Constant):
        if isinstance(n.value, str | bytes) and len(n.value) > lim.max_const_chars:
            raise ProgramRefused(f"string literal longer than {lim.max_const_chars}", n)
        if isinstance(n.value, bytes) or n.value is Ellipsis or isinstance(n.value, complex):
            raise ProgramRefused("only str, int, float, bool and None literals", n)
        if isinstance(n.value, int) and not isinstance(n.value, bool) and abs(n.value) > lim.max_int:
            raise ProgramRefused(f"integer literal beyond {lim.max_int}", n)
        if isinstance(n.value, float) and not math.isfinite(n.value):  # 1e999 is inf before anything runs
            raise ProgramRefused("number literals must be finite (1e999 is infinity)", n)
    if isinstance(n, ast.Attribute):
        if n.attr.startswith("_"):
            raise ProgramRefused("private or dunder attributes are not allowed", n, n.attr)
        if not (isinstance(n.value, ast.Name) and n.value.id == "video" and n.attr in VIDEO_METHODS):
            raise ProgramRefused("attribute access only to video's methods: " + ", ".join(sorted(VIDEO_METHODS)), n,
                                 ast.unparse(n)[:60])
    if isinstance(n, ast.Call):
        f = n.func
        if isinstance(f, ast.Name):
            if f.id not in API_FUNCTIONS | BUILTINS:
                raise ProgramRefused("only the API's operations and a few builtins may be called", n, f.id)
        elif not isinstance(f, ast.Attribute):
            raise ProgramRefused("only named functions and video methods may be called", n)
        if any(k.arg is None for k in n.keywords) or any(isinstance(a, ast.Starred) for a in n.args):
            raise ProgramRefused("no *args or **kwargs", n)
    if isinstance(n, ast.FormattedValue) and n.format_spec is not None:
        for v in ast.walk(n.format_spec):
            if isinstance(v, ast.FormattedValue):
                raise ProgramRefused("nested format specs are not allowed", n)
    if isinstance(n, ast.Assign):
        for t in n.targets:
            if not _plain_target(t):
                raise ProgramRefused("assign only to names", n)
    if isinstance(n, ast.AugAssign) and not isinstance(n.target, ast.Name):
        raise ProgramRefused("augmented assignment only to names", n)
    if isinstance(n, ast.For):
        if not _plain_target(n.target):
            raise ProgramRefused("loop variables must be names", n)
        if n.orelse:
            raise ProgramRefused("for-else is not allowed", n)
    if isinstance(n, ast.Return) and entry is None:
        raise ProgramRefused("return outside execute_command", n)


def _plain_target(t: ast.AST) -> bool:
    if isinstance(t, ast.Name):
        return not t.id.startswith("_")
    if isinstance(t, ast.Tuple | ast.List):
        return all(isinstance(e, ast.Name) and not e.id.startswith("_") for e in t.elts)
    return False
