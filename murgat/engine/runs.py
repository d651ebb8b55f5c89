"""A finished run read back from its folder: :class:`RunResult` and :func:`load_run`, what the Python
API returns and what ``sweep`` and ``program --score`` read after scoring in-process."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from murgat.engine.folder import RunFolder, RunUnreadable, read_kind, read_summary

__all__ = ["RunResult", "RunUnreadable", "load_run", "read_summary"]


def _warn_skipped(folder: Any) -> None:
    """Lines of a stream that are not records, said (they are skipped, not repaired: a reader)."""
    for note in folder.notices:
        warnings.warn(note, stacklevel=3)


@dataclass
class RunResult:
    """A finished (or resumed) run: what ``murgat view``/``summarize`` read, as Python values."""

    path: Path
    kind: str | None
    exit_code: int = 0
    summary: dict[str, Any] = field(default_factory=dict)
    #: where the records are when they are not in the folder (``generate --out FILE.jsonl``)
    records_file: Path | None = None
    #: the settings the run was made with (the Python API fills it in)
    settings: Any = None

    @property
    def records(self) -> list[dict[str, Any]]:
        """One record per item (the latest), in the order the run folder keeps them."""
        return list(self.iter_records())

    def iter_records(self) -> Iterator[dict[str, Any]]:
        """The records one by one (what :attr:`records` lists), read from the run folder on each call."""
        if self.records_file is not None:
            folder = RunFolder(self.path, repair=False, record=None, results=self.records_file.resolve())
            yield from folder.latest_results()
            _warn_skipped(folder)
            return
        if self.kind == "program":  # one record per item and variant, from each variant's folder
            # not OUT/baseline-run/, the score run of --baseline (a child folder with results too)
            variants = (p for p in self.path.iterdir() if (p / "results.jsonl").exists() and read_kind(p) != "score")
            for sub in sorted(variants):
                folder = RunFolder(sub, repair=False, record=None)
                for r in folder.latest_results():
                    yield {**r.get("record", r), "variant": sub.name}
                _warn_skipped(folder)
            return
        for name in ("results.jsonl", "responses.jsonl"):
            if (self.path / name).exists():
                folder = RunFolder(self.path, repair=False, record=None, results=name)
                rows = folder.latest_results()
                _warn_skipped(folder)
                # reflect keeps {id, record, trace}: its records are the responses
                yield from (r["record"] if self.kind == "reflect" and "record" in r else r for r in rows)
                return

    def dataframe(self) -> Any:
        """The records as a pandas DataFrame (one row per item; nested fields flattened with ``.``)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pandas is not a dependency of murgat
            raise ImportError("RunResult.dataframe() needs pandas: pip install pandas") from exc
        return pd.json_normalize([{k: v for k, v in r.items() if k not in ("sentences", "steps")}
                                  for r in self.iter_records()])


def load_run(path: str | Path) -> RunResult:
    """Any run folder (``score``, ``faithfulness``, ``reflect``, ``program``, ``generate``, ``sweep``)."""
    p = Path(path)
    records_file = None
    if p.suffix == ".jsonl" and p.is_file():  # generate --out FILE.jsonl keeps its folder beside the file
        p, records_file = p.with_suffix(".run"), p
    if not p.is_dir():
        raise FileNotFoundError(f"{path}: no run folder there")
    kind = read_kind(p)
    # a sweep's summary is its comparison, sweep.json; a damaged one is RunUnreadable, not {}
    summary = read_summary(p, "sweep.json" if kind == "sweep" else "summary.json")
    return RunResult(path=p, kind=kind, summary=summary, records_file=records_file)
