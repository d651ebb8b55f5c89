"""Deprecated: :mod:`murgat.engine.folder` (``RunDir`` was the score command's name of :class:`RunFolder`)."""

from murgat.engine.folder import (
    NotWritable,
    RunConfigMismatch,
    RunFolder,
    canonical_json,
    check_writable_dir,
    needs_retry,
)

RunDir = RunFolder

__all__ = ["NotWritable", "RunConfigMismatch", "RunDir", "RunFolder", "canonical_json", "check_writable_dir",
           "needs_retry"]
