"""Find the program inside a planner's answer: markdown fences, surrounding prose, bullets.

Planners wrap code in prose and fences, number their bullets, and add arrows or comments
after calls. Extraction is text surgery only (nothing is evaluated): a logic program is the
``def execute_command`` block; a narrative program becomes one call statement per bullet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CALL_START = re.compile(r"(?:\b[A-Za-z_]\w*\s*=\s*)?\b(?:find|describe|synthesize|answer_question)\s*\(")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)]|\(\d{1,3}\))\s*")


class NoProgram(ValueError):
    """The planner's answer holds no program."""


def _fenced(text: str) -> list[str]:
    return [m.group(2) for m in _FENCE.finditer(text)]


def extract_logic(text: str, max_chars: int | None = None) -> str:
    """The ``def execute_command`` block (from a fence when there is one, else from the prose).

    ``max_chars`` (the whole answer's limit) is checked before anything is scanned."""
    _too_long(text, max_chars)
    for block in [*_fenced(text), text]:
        lines = block.split("\n")
        start = next((i for i, ln in enumerate(lines) if re.match(r"\s*def\s+execute_command\s*\(", ln)), None)
        if start is None:
            continue
        indent = len(lines[start]) - len(lines[start].lstrip())
        out = [lines[start][indent:]]
        for ln in lines[start + 1 :]:
            if ln.strip() and (len(ln) - len(ln.lstrip())) <= indent and not ln.lstrip().startswith(("#", ")", "]", "}")):
                break
            out.append(ln[indent:] if len(ln) >= indent else ln.lstrip())
        return "\n".join(out).rstrip() + "\n"
    raise NoProgram("no 'def execute_command(video, options)' found in the planner's answer")


@dataclass
class _Scan:
    """Where a paren scan stands between lines: nesting depth, open quote, a pending escape."""

    depth: int = 0
    quote: str | None = None
    skip: bool = False


def _balanced_end(s: str, open_at: int, state: _Scan | None = None) -> int | None:
    """Index just past the parenthesis that closes the one at ``open_at`` (quotes respected).

    With ``state``, the scan resumes where the previous piece of text left it and leaves its
    own state there, so a call spread over many lines is scanned once in total (linear),
    not once more per line."""
    st = state if state is not None else _Scan()
    for i in range(open_at, len(s)):
        ch = s[i]
        if st.skip:
            st.skip = False
        elif st.quote:
            if ch == "\\":
                st.skip = True
            elif ch == st.quote:
                st.quote = None
        elif ch in "\"'":
            st.quote = ch
        elif ch in "([{":
            st.depth += 1
        elif ch in ")]}":
            st.depth -= 1
            if st.depth == 0:
                return i + 1
    return None


def _too_long(text: str, max_chars: int | None) -> None:
    if max_chars is not None and len(text) > max_chars:
        raise NoProgram(f"the planner's answer is longer than {max_chars} characters ({len(text)}); "
                        "no program was looked for in it")


def extract_narrative(text: str, max_chars: int | None = None) -> str:
    """One call statement per bullet (``- describe(find("…", "audio"), "audio", "…")``).

    Linear in the answer: a call that spans lines is scanned once, line by line, with the
    scan's state carried over (rescanning the pending text after every line made 8,000
    lines take 10 s and 100,000 blank lines hang). ``max_chars`` is checked first."""
    _too_long(text, max_chars)
    blocks = _fenced(text) or [text]
    body = "\n".join(blocks)
    stmts: list[str] = []
    pending: list[str] = []  # the lines of a call not closed yet
    scan = _Scan()  # where the scan of the pending call stands
    for raw in body.split("\n"):
        if pending:
            piece = "\n" + raw  # the line break joins it to the call (an escape in a quote may swallow it)
            end = _balanced_end(piece, 0, scan)
            pending.append(piece if end is None else piece[:end])
            if end is not None:
                stmts.append("".join(pending).strip())
                pending = []
            continue
        line = _BULLET.sub("", raw, count=1)
        m = _CALL_START.search(line)
        if m is None:
            continue
        text_from = line[m.start():]
        paren = text_from.find("(", text_from.find("=") + 1 if re.match(r"\s*\w+\s*=", text_from) else 0)
        scan = _Scan()
        end = _balanced_end(text_from, paren, scan)
        if end is None:
            pending = [text_from]
            continue
        stmts.append(text_from[:end].strip())
    if pending:
        stmts.append("".join(pending).strip())  # left unbalanced: the checker reports the syntax error
    if not stmts:
        raise NoProgram("no find/describe/synthesize calls found in the planner's answer")
    return "\n".join(stmts) + "\n"
