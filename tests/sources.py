"""Parsing murgat's own source in tests that read it (layers, the write gateway, lazy imports)."""

from __future__ import annotations

import ast


def parse_source(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse``, once more if CPython 3.11 reports its spurious "AST constructor recursion depth
    mismatch" (python/cpython#106905: the depth counter is shared, so a parse in another thread of
    the test process can upset it). The second parse starts from a fresh count; a real syntax or
    recursion error is raised as it is."""
    try:
        return ast.parse(source, filename)
    except SystemError as exc:
        if "recursion depth mismatch" not in str(exc):
            raise
        return ast.parse(source, filename)
