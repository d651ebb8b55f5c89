"""The hostile corpus: programs that try to escape or exhaust the interpreter.

Each one must be refused by the checker or stopped by a budget, quickly, and none may
write a file, start a process or open a network connection (all three are trapped here).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from programs.interpreter import Interpreter, ProgramStopped
from programs.safety import Limits, ProgramRefused, parse_program

from .test_interpreter import FakeApi

F = "def execute_command(video, options):\n"


def body(*lines: str) -> str:
    return F + "".join(f"    {ln}\n" for ln in lines)


HOSTILE: dict[str, str] = {
    "import": body("import os", "return os.listdir('/')"),
    "from_import": body("from subprocess import run", "run(['id'])"),
    "dunder_import": body("m = __import__('os')", "return m"),
    "getattr_class": body("return getattr(video, '__class__')"),
    "dunder_attr": body("return video.__class__"),
    "tuple_bases": body("return ().__class__.__bases__[0].__subclasses__()"),
    "open_file": body("f = open('/tmp/murgat-pwned', 'w')", "return f"),
    "exec_call": body("exec('import os')"),
    "eval_call": body("return eval('1+1')"),
    "compile_call": body("return compile('1', 'x', 'eval')"),
    "format_attr": body("return '{0.__class__}'.format(video)"),
    "fstring_attr": body("return f'{video.__class__.__mro__}'"),
    "fstring_nested_spec": body("x = 1", "return f'{x:{x}}'"),
    "percent_format": body("return '%s' % video"),
    "recursion": body("return execute_command(video, options)"),
    "while_true": body("while True:", "    pass"),
    "power_tower": body("return 10**10**10"),
    "power_small": body("return 2**8"),
    "string_bomb": body("return 'a' * 10**9"),
    "string_bomb_var": body("n = 1000000", "n = n * 1000", "return 'a' * n"),
    "list_bomb": body("return [0] * 10**8"),
    "list_growth": body("x = [1]", "for i in range(1000):", "    x = x + x", "return x"),
    "nested_doubling": body("a = [1]", "for i in range(60):", "    a = [a, a]", "return str(a)"),
    "huge_range": body("for i in range(10**9):", "    pass"),
    "nested_loops": body("n = 0", "for i in range(1000):", "    for j in range(1000):", "        n = n + 1", "return n"),
    "too_many_ops": body("for i in range(100):", "    video.find('x', 'audio')"),
    "lambda": body("f = lambda: 1", "return f()"),
    "class_def": "class X:\n    pass\n" + body("return 1"),
    "comprehension": body("return [x for x in range(10)]"),
    "generator": body("return sum(x for x in range(10))"),
    "global_stmt": body("global y", "y = 1"),
    "try_except": body("try:", "    x = 1", "except Exception:", "    pass"),
    "with_stmt": body("with open('x') as f:", "    pass"),
    "nested_def": body("def g():", "    return 1", "return g()"),
    "two_defs": F + "    return 1\ndef other(video, options):\n    return 2\n",
    "top_level_code": "x = open('/etc/passwd')\n" + body("return 1"),
    "del_stmt": body("x = 1", "del x"),
    "star_args": body("a = [1]", "return max(*a)"),
    "kwargs_splat": body("d = {}", "return video.find(**d)"),
    "attribute_on_value": body("x = 'abc'", "return x.upper()"),
    "subscript_dunder": body("return options['__class__']"),
    "deep_nesting": F + "    return " + "(" * 500 + "1" + ")" * 500 + "\n",
    "deep_ifs": F + "".join("    " * (k + 1) + "if True:\n" for k in range(60)) + "    " * 61 + "pass\n",
    "ten_mb": F + "    x = 1\n" * 1_100_000,
    "long_literal": body("return '" + "a" * 5000 + "'"),
    "huge_int_literal": body("return 99999999999999999999999999"),
    "yield": body("yield 1"),
    "await": body("await video.find('x', 'audio')"),
    "assert_stmt": body("assert False"),
    "builtins_name": body("return __builtins__"),
    "rebind_builtin": body("len = 5", "return len"),
    "unknown_call": body("return input()"),
    "setattr_call": body("setattr(video, 'x', 1)"),
    "globals_call": body("return globals()"),
    "vars_call": body("return vars(video)"),
    "bytes_literal": body("return b'abc'"),
    "walrus": body("return (x := 5)"),
    "matrix_mult": body("return [1] @ [2]"),
    "bit_shift": body("return 1 << 100000"),
    "slice_bomb": body("x = 'ab' * 20000", "return x + x + x"),
    "dict_growth": body("d = {}", "for i in range(5000):", "    d = {i: d}", "return d"),
}


@pytest.fixture
def trapped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    events: list[str] = []

    def deny(what: str):
        def _f(*a, **k):
            events.append(what)
            raise PermissionError(f"hostile program attempted {what}")
        return _f

    monkeypatch.setattr(subprocess.Popen, "__init__", deny("process"))
    monkeypatch.setattr(os, "system", deny("process"))
    monkeypatch.setattr(os, "fork", deny("process"))
    monkeypatch.setattr(os, "posix_spawn", deny("process"))
    monkeypatch.setattr(socket.socket, "connect", deny("network"))
    monkeypatch.setattr(socket, "create_connection", deny("network"))
    monkeypatch.chdir(tmp_path)
    return events


def test_corpus_is_big_enough() -> None:
    assert len(HOSTILE) >= 40


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_hostile_program_is_refused_or_stopped(name: str, trapped: list[str], tmp_path: Path) -> None:
    code = HOSTILE[name]
    limits = Limits(max_seconds=5.0)
    before = set(tmp_path.iterdir())
    watch = [Path("/tmp/murgat-pwned")]
    t0 = time.monotonic()
    outcome = None
    try:
        checked = parse_program(code, limits)
    except ProgramRefused as exc:
        outcome = f"refused: {exc}"
    else:
        interp = Interpreter(FakeApi(), limits, options=["a", "b"])
        try:
            await interp.run(checked)
        except ProgramStopped as exc:
            outcome = f"stopped: {exc}"
    elapsed = time.monotonic() - t0
    if name == "power_small":
        assert outcome and "Pow" in outcome  # ** is refused even when small
    assert outcome is not None, f"{name} ran to completion"
    assert elapsed < limits.max_seconds, f"{name} took {elapsed:.1f} s"
    assert not trapped, f"{name} tried {trapped}"
    assert set(tmp_path.iterdir()) == before and not any(p.exists() for p in watch)
