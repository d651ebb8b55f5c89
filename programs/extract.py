"""Find the program inside a planner's answer: markdown fences, surrounding prose, bullets.

Planners wrap code in prose and fences, number their bullets, and add arrows or comments
after calls. Extraction is text surgery only (nothing is evaluated): a logic program is the
``def execute_command`` block; a narrative program becomes one call statement per bullet.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CALL_START = re.compile(r"(?:\b[A-Za-z_]\w*\s*=\s*)?\b(?:find|describe|synthesize|answer_question)\s*\(")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)]|\(\d{1,3}\))\s*")


class NoProgram(ValueError):
    """The planner's answer holds no program."""


def _fenced(text: str) -> list[str]:
    return [m.group(2) for m in _FENCE.finditer(text)]


def extract_logic(text: str) -> str:
    """The ``def execute_command`` block (from a fence when there is one, else from the prose)."""
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


def _balanced_end(s: str, open_at: int) -> int | None:
    """Index just past the parenthesis that closes the one at ``open_at`` (quotes respected)."""
    depth = 0
    quote: str | None = None
    i = open_at
    while i < len(s):
        ch = s[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def extract_narrative(text: str) -> str:
    """One call statement per bullet (``- describe(find("…", "audio"), "audio", "…")``)."""
    blocks = _fenced(text) or [text]
    body = "\n".join(blocks)
    stmts: list[str] = []
    pending = ""
    for raw in body.split("\n"):
        line = raw if pending else _BULLET.sub("", raw, count=1)
        candidate = pending + ("\n" if pending else "") + line
        m = _CALL_START.search(candidate) if not pending else None
        if not pending and m is None:
            continue
        start = m.start() if m is not None else 0
        text_from = candidate[start:] if not pending else candidate
        paren = text_from.find("(", text_from.find("=") + 1 if re.match(r"\s*\w+\s*=", text_from) else 0)
        end = _balanced_end(text_from, paren)
        if end is None:
            pending = text_from
            continue
        stmts.append(text_from[:end].strip())
        pending = ""
    if pending:
        stmts.append(pending.strip())  # left unbalanced: the checker reports the syntax error
    if not stmts:
        raise NoProgram("no find/describe/synthesize calls found in the planner's answer")
    return "\n".join(stmts) + "\n"
