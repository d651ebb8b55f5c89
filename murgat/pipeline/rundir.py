"""A run on disk: ``config.json``, ``results.jsonl``, ``cache.sqlite``, ``summary.json``.

``results.jsonl`` is append-only: each finished item is one line, written with a single
``write`` then ``flush`` + ``fsync``, so a crash loses at most the items in flight. On
open, a torn last line (a crash mid-write) is cut off. Re-running the same command skips
every id already in the file.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from murgat.jsonl import append_line, cut_torn_tail
from murgat.schema import ResponseResult, RunSummary


class RunConfigMismatch(RuntimeError):
    """The run folder was made with settings that change scores; refuse to mix them."""


class RunDir:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        cut_torn_tail(self.results_path)

    @property
    def results_path(self) -> Path:
        return self.path / "results.jsonl"

    @property
    def cache_path(self) -> Path:
        return self.path / "cache.sqlite"

    def check_config(self, fingerprint: dict[str, Any], full: dict[str, Any], force: bool = False) -> None:
        cfg = self.path / "config.json"
        if cfg.exists() and not force:
            old = json.loads(cfg.read_text()).get("fingerprint")
            if old is not None and old != fingerprint:
                changed = sorted(k for k in set(old) | set(fingerprint) if old.get(k) != fingerprint.get(k))
                raise RunConfigMismatch(
                    f"{self.path} holds a run with different scoring settings ({', '.join(changed)}); "
                    "use a new --out folder, or --overwrite to start again"
                )
        tmp = cfg.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"fingerprint": fingerprint, "config": full}, indent=2, default=str))
        os.replace(tmp, cfg)

    def load_results(self) -> list[ResponseResult]:
        if not self.results_path.exists():
            return []
        out = []
        for line in self.results_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(ResponseResult.model_validate_json(line))
        return out

    def finished_ids(self, retry_errors: bool = False) -> set[str]:
        return {r.id for r in self.load_results() if not (retry_errors and r.error)}

    def append(self, result: ResponseResult) -> None:
        with self._lock:
            append_line(self.results_path, result.model_dump_json())

    def latest_results(self) -> list[ResponseResult]:
        """One result per id (the last line wins, so a retried error replaces the old one)."""
        by_id: dict[str, ResponseResult] = {}
        for r in self.load_results():
            by_id[r.id] = r
        return list(by_id.values())

    def write_summary(self, summary: RunSummary) -> Path:
        p = self.path / "summary.json"
        tmp = p.with_suffix(".json.tmp")
        tmp.write_text(summary.model_dump_json(indent=2))
        os.replace(tmp, p)
        return p

    def summary(self) -> RunSummary:
        return RunSummary.model_validate_json((self.path / "summary.json").read_text())
