"""Moved to :mod:`murgat.engine.folder` (every command's run folder); kept so old imports work."""

from murgat.engine.folder import (
    NotWritable,
    RunConfigMismatch,
    RunDir,
    RunFolder,
    canonical_json,
    check_writable_dir,
    needs_retry,
)

__all__ = ["NotWritable", "RunConfigMismatch", "RunDir", "RunFolder", "canonical_json", "check_writable_dir",
           "needs_retry"]
