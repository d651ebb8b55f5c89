"""The hostile corpus: programs that try to escape or exhaust the interpreter.

Each one must be refused by the checker or stopped by a budget, quickly, and none may
write a file, start a process or open a network connection (all three are trapped here).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import tracemalloc
from pathlib import Path

import pytest

from murgat.programs.interpreter import Interpreter, ProgramStopped
from murgat.programs.safety import Limits, ProgramRefused, parse_program
from tests.programs.test_interpreter import FakeApi

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
    # ----- round three: attribute walks -----
    "method_self": body("return video.find.__self__"),
    "method_globals": body("return video.query.__globals__['os']"),
    "method_attr_chain": body("return video.find.x"),
    "subscript_callee": body("return [video.find][0]('x', 'audio')"),
    "result_attr": body("return video.find('x', 'audio')[0].start"),
    "str_method": body("return 'x'.format"),
    "getattr_builtin": body("return getattr(video, 'find')"),
    "type_call": body("return type(video)"),
    "video_call": body("return video()"),
    "options_method": body("options.append(1)", "return options"),
    "video_rebound": body("video = options", "return video.find('x', 'audio')"),
    "callable_alias": body("f = execute_command", "return f(video, options)"),
    "str_of_video": body("return str(video)"),
    "len_of_video": body("return len(video)"),
    "unicode_dunder": body("return \uff3f\uff3fimport\uff3f\uff3f('os')"),
    "unicode_exec": body("return \uff45\uff58\uff45\uff43('1')"),
    # ----- format-string tricks -----
    "fstring_ascii_video": body("return f'{video!a}'"),
    "fstring_self_documenting": body("return f'{video=}'"),
    "fstring_width_bomb": body("return f'{1.5:999999999.999999999f}'"),
    "fstring_fill_char": body("return f'{1:x^999}'"),
    "fstring_nested_width": body("w = 9", "return f'{1:{w}}'"),
    "fstring_huge_value": body("s = '\\U000e0000' * 99", "r = [s] * 1000", "b = [r] * 19", "return f'{b}'"),
    "fstring_spec_on_list": body("return f'{[1, 2]:>5}'"),
    "percent_dict": body("return '%(a)s' % {'a': 1}"),
    # ----- huge numbers -----
    "inf_literal": body("return 1e999"),
    "inf_literal_in_ranges": body("return video.query([0, 1e999], 'What?', 'audio')"),
    "inf_arith": body("return 1e308 * 10"),
    "nan_arith": body("x = 1e308 * 10", "return x - x"),
    "float_text_inf": body("return float('inf')"),
    "float_text_nan": body("return float('nan')"),
    "float_text_long": body("return float('1' * 50000)"),
    "int_of_huge_float": body("return int(1e308)"),
    "round_huge_float": body("return round(1e308)"),
    "int_text_bomb": body("return int('9' * 5000)"),
    "int_squaring": body("n = 999999", "for i in range(10):", "    n = n * n", "return n"),
    "huge_true_mult": body("return 'a' * True * 1000000000000"),
    # ----- deep nesting and recursion -----
    "deep_list_literal": F + "    return " + "[" * 100 + "]" * 100 + "\n",
    "deep_value_runtime": body("x = 1", "for i in range(100):", "    x = [x]", "return 1"),
    "deep_dict_runtime": body("d = {}", "for i in range(100):", "    d = {'k': d, 'j': d}", "return 1"),
    "deep_call_nesting": F + "    return " + "len(" * 60 + "'x'" + ")" * 60 + "\n",
    "recursion_by_name": body("return execute_command(video, [options])"),
    # ----- generators, comprehensions, sets -----
    "generator_sum": body("return sum(1 for _ in range(1000000000))"),
    "nested_comprehension": body("return [[0] * 1000 for _ in range(1000)]"),
    "set_display": body("return {1, 2}"),
    "set_comprehension": body("return {x for x in options}"),
    "dict_comprehension": body("return {x: x for x in options}"),
    "yield_from": body("yield from options"),
    "star_assign": body("a, *b = [1, 2, 3]", "return b"),
    # ----- string and list multiplication -----
    "string_mult_nested": body("return ('a' * 50000) * 50000"),
    "string_doubling": body("s = 'ab'", "for i in range(40):", "    s = s + s", "return s"),
    "list_of_long_strings": body("s = 'a' * 50000", "return [s] * 1000"),
    "list_mult_of_list": body("x = [1] * 1000", "return [x] * 1000"),
    "shared_doubling_str": body("a = ['\\U000e0000' * 99]", "for i in range(14):", "    a = [a, a]",
                                "return str(a)"),
    # ----- values too big for an operation -----
    "huge_instruction": body("s = 'a' * 50000", "return video.query('0:01', s, 'audio')"),
    "huge_query": body("return video.find('a' * 5000, 'audio')"),
    "many_options": body("return answer_question('Why?', [], list(range(100)))"),
    "many_ranges": body("return video.query(list(range(100)), 'What?', 'audio')"),
    "huge_options_text": body("s = 'a' * 5000", "return synthesize('Decide.', [s, s, s])"),
    # ----- statements that do not exist here -----
    "match_stmt": body("match options:", "    case _:", "        pass"),
    "async_def": "async def execute_command(video, options):\n    return 1\n",
    "annotated_assign": body("x: int = 1", "return x"),
    "raise_stmt": body("raise RuntimeError('x')"),
    "try_star": body("try:", "    pass", "except* Exception:", "    pass"),
    "nonlocal_stmt": body("nonlocal x"),
    "while_else": body("while False:", "    pass", "else:", "    pass"),
    "for_else": body("for i in range(3):", "    pass", "else:", "    pass"),
    "decorator": "@video\n" + body("return 1"),
    "default_arg": "def execute_command(video, options=__import__('os')):\n    return 1\n",
    # ----- runtime errors that must stop, not crash -----
    "dict_key_list": body("return {[1]: 2}"),
    "unhashable_index": body("d = {}", "return d[[1]]"),
    "min_of_empty": body("return min([])"),
    "zero_division": body("return 1 // 0"),
    "mod_on_list": body("return [1] % 2"),
    "compare_mixed": body("return [1] < 'a'"),
    "sorted_mixed": body("return sorted([1, 'a'])"),
    "unpack_mismatch": body("a, b = [1, 2, 3]", "return a"),
    "undefined_name": body("return nothing_here"),
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
    assert len(HOSTILE) >= 130


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_hostile_program_is_refused_or_stopped(name: str, trapped: list[str], tmp_path: Path) -> None:
    code = HOSTILE[name]
    limits = Limits(max_seconds=5.0)
    before = set(tmp_path.iterdir())
    watch = [Path("/tmp/murgat-pwned")]
    api = FakeApi()
    # CPU time, for the interpreter's limit and this check: other processes' load must not stop a program
    # by its time limit that its step limits stop, nor make the check fail
    t0 = time.process_time()
    outcome = None
    tracemalloc.start()
    try:
        checked = parse_program(code, limits)
    except ProgramRefused as exc:
        outcome = f"refused: {exc}"
    else:
        interp = Interpreter(api, limits, options=["a", "b"], clock=time.process_time)
        try:
            await interp.run(checked)
        except ProgramStopped as exc:
            outcome = f"stopped: {exc}"
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    elapsed = time.process_time() - t0
    if name == "power_small":
        assert outcome and "Pow" in outcome  # ** is refused even when small
    assert outcome is not None, f"{name} ran to completion"
    assert len(outcome) < 1_000, f"{name}: the stop quotes a huge value"
    assert peak < 32 * 2**20, f"{name} allocated {peak / 2**20:.0f} MiB"
    assert not any(len(str(c)) > 20_000 for c in api.calls), f"{name} handed an operation a huge value"
    assert elapsed < limits.max_seconds, f"{name} took {elapsed:.1f} s"
    assert not trapped, f"{name} tried {trapped}"
    assert set(tmp_path.iterdir()) == before and not any(p.exists() for p in watch)
