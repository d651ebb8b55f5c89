"""List murgat's longest functions, so the size rules of the code ("no function over 80 lines outside the
embedded judge's rule code, at most five over 60"; "no function of the rule code over 40 lines") can be
measured instead of guessed.

A function's length is the lines from its `def` to its last line (its docstring and comments included:
they are what a reader scrolls past). Nested functions are counted on their own and inside their parent.
The embedded judge's rule code (`RULE_FILES`) is out of the first rule by file and held to the stricter
second one instead (`rule_functions_over()`): each rule a small named step a reader can check.

Run: `python scripts/long_functions.py [--over 60] [--top 10]`; tests/test_function_sizes.py uses
`long_functions()` and `rule_functions_over()` to hold the limits.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the trees the wheel ships (the four top-level folders are murgat.media, ... once installed)
TREES = ("murgat", "media", "programs", "prompts", "human_eval")
# the embedded judge's rule code: its functions are out of the 80/60-line rule, under the 40-line one below
EXEMPT = frozenset({"murgat/judges/claims.py", "murgat/judges/embedded.py", "murgat/judges/heard.py",
                    "murgat/judges/embedded_check.py"})
# every file of the embedded judge's rule code (the exempt files, the rule table, who speaks, the voice count):
# no function in them over RULE_LIMIT lines
RULE_FILES = EXEMPT | frozenset({"murgat/judges/embedded_rules.py", "murgat/judges/speakers.py",
                                 "murgat/media/voices.py"})
RULE_LIMIT = 40


@dataclass(frozen=True)
class Function:
    """One function definition: where it stands and how many lines it spans."""

    path: str
    name: str
    line: int
    lines: int

    def __str__(self) -> str:
        return f"{self.lines:4d}  {self.path}:{self.line}  {self.name}"


def _source_files(root: Path) -> list[Path]:
    """The Python files of the shipped trees; `murgat/media` etc. are links to the top-level folders, so
    files are read once, under their real folder."""
    files: list[Path] = []
    for tree in TREES:
        base = root / tree
        for path in sorted(base.rglob("*.py")):
            if any(part.is_symlink() for part in [path, *path.parents] if part != root and root in part.parents):
                continue
            files.append(path)
    return files


def _functions_in(path: Path, rel: str) -> list[Function]:
    """Every (async) function of one file, methods and nested functions under their dotted name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                end = child.end_lineno or child.lineno
                found.append(Function(rel, name, child.lineno, end - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _canonical(rel: str) -> str:
    """The path under murgat/ that a top-level folder's file has once installed (media/x.py is
    murgat/media/x.py), so the exemptions and reports name one path per file."""
    head = rel.split("/", 1)[0]
    return rel if head == "murgat" else f"murgat/{rel}"


def _functions_over(over: int, root: Path, keep: Callable[[str], bool]) -> tuple[list[Function], set[str]]:
    """``(the functions longer than `over` lines in the files `keep` takes, longest first; those files)``."""
    result: list[Function] = []
    seen: set[str] = set()
    for path in _source_files(root):
        rel = _canonical(path.relative_to(root).as_posix())
        if not keep(rel):
            continue
        seen.add(rel)
        result.extend(f for f in _functions_in(path, rel) if f.lines > over)
    return sorted(result, key=lambda f: (-f.lines, f.path, f.line)), seen


def long_functions(over: int, root: Path = ROOT, *, exempt: frozenset[str] = EXEMPT) -> list[Function]:
    """The functions longer than `over` lines outside the exempt files, longest first."""
    return _functions_over(over, root, lambda rel: rel not in exempt)[0]


def rule_functions_over(over: int = RULE_LIMIT, root: Path = ROOT, *,
                        files: frozenset[str] = RULE_FILES) -> tuple[list[Function], set[str]]:
    """``(functions longer than `over` lines in the rule files, longest first; the rule files found)``:
    the second part lets a caller tell a file measured and short from a file moved away and not measured."""
    return _functions_over(over, root, files.__contains__)


def main(argv: list[str] | None = None) -> int:
    """Print the counts over 60 and 80 lines, the rule code's functions over 40 and the longest functions."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--over", type=int, default=60, help="list the functions longer than this (default 60)")
    parser.add_argument("--top", type=int, default=10, help="also list the N longest functions (default 10)")
    parser.add_argument("--all", action="store_true", help="include the exempt embedded rule code")
    args = parser.parse_args(argv)
    exempt: frozenset[str] = frozenset() if args.all else EXEMPT
    print(f"over 80 lines: {len(long_functions(80, exempt=exempt))}; over 60 lines: "
          f"{len(long_functions(60, exempt=exempt))}")
    print(f"longer than {args.over} lines:")
    for function in long_functions(args.over, exempt=exempt):
        print(function)
    over_rule, _ = rule_functions_over()
    print(f"embedded rule code over {RULE_LIMIT} lines: {len(over_rule)}")
    for function in over_rule:
        print(function)
    print(f"the {args.top} longest:")
    for function in long_functions(0, exempt=exempt)[: args.top]:
        print(function)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
