"""The judges and models of one local run, made once and checked for their role before any work.

A command names each provider it needs by its role (``score``'s judge, ``program``'s planner,
``reflect``'s model) and the request tasks that role asks (:attr:`Command.needs
<murgat.engine.command.Command.needs>`). :meth:`JudgeMaker.role` makes the provider and refuses,
with exit 2 and before anything is written, one that cannot answer those requests — the
embedded judge reads ASR/OCR text and answers ``verify``/``decompose``/``entail``, so it cannot
write an answer (``generate``), plan a program or label a chain (:meth:`Judge.refusal
<murgat.judges.base.Judge.refusal>`, the capability every provider class declares).

The same maker is the judge factory a command's item task is built with here (in a Ray worker
the factory wires judges to the cluster instead: :mod:`murgat.engine.scaleout.worker`): one provider per
``(spec, options, request settings)``, so two roles naming the same model share it, and one
response cache, opened with the first provider and removed again when the run is refused
before any work (:meth:`discard`).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from murgat.engine.errors import SettingsError
from murgat.judges import make_judge, parse_options
from murgat.judges.base import Judge, JudgeStats
from murgat.judges.cache import ResponseCache
from murgat.judges.types import GenerateConfig

#: how a command's task gets a provider: ``(spec, options, request settings) -> judge``
JudgeFactory = Callable[[str, dict[str, str], GenerateConfig], Judge]


def options_of(pairs: list[str] | None) -> dict[str, str]:
    """``-J``/``-M``/``-P`` ``KEY=VALUE`` options as a mapping (a malformed pair is a settings error)."""
    try:
        return parse_options(pairs)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


class JudgeMaker:
    """Makes and keeps the providers of one run (see the module docstring)."""

    def __init__(self, cache_path: Path, *, dry_run: bool = False, record: str | None = None,
                 wrap: Callable[[Judge], Any] | None = None) -> None:
        self.cache_path = cache_path
        self.dry_run, self.record, self.wrap = dry_run, record, wrap
        self._cache: ResponseCache | None = None
        self._made: dict[str, Judge] = {}

    @property
    def cache(self) -> ResponseCache:
        """The run's response cache (opened on first use; an unusable file is refused: exit 2)."""
        if self._cache is None:
            try:
                self._cache = ResponseCache(self.cache_path)
            except (sqlite3.Error, OSError) as exc:  # OSError: a link out of the folder (the write gateway)
                raise SettingsError(f"cannot open the response cache {self.cache_path}: {exc}") from None
            for note in self._cache.notices:
                print(f"warning: {note}", file=sys.stderr)
        return self._cache

    def __call__(self, spec: str, options: dict[str, str], config: GenerateConfig) -> Judge:
        key = json.dumps([spec, options, config.model_dump(mode="json")], sort_keys=True, default=str)
        if key not in self._made:
            try:
                judge = make_judge(spec, options, cache=self.cache, config=config, dry_run=self.dry_run,
                                   record=self.record)
            except (ValueError, FileNotFoundError, ImportError) as exc:  # a bad spec, cassette or missing extra
                raise SettingsError(str(exc)) from None
            self._made[key] = self.wrap(judge) if self.wrap is not None else judge
        return self._made[key]

    def role(self, spec: str, options: dict[str, str], config: GenerateConfig, tasks: Sequence[str]) -> Judge:
        """The provider ``spec`` for a role that asks ``tasks``; refused (exit 2) when it cannot answer them."""
        judge = self(spec, options, config)
        why = judge.refusal(*tasks)
        if why is not None:
            raise SettingsError(why)
        return judge

    @property
    def made(self) -> list[Judge]:
        return list(self._made.values())

    def stats(self) -> dict[str, JudgeStats]:
        """The request statistics of each provider made, by name (two providers of one name summed)."""
        out: dict[str, JudgeStats] = {}
        for j in self.made:
            acc = out.setdefault(j.name, JudgeStats())
            for k, v in j.stats.model_dump().items():
                setattr(acc, k, getattr(acc, k) + v)
        return out

    def cache_counts(self) -> dict[str, int]:
        """The cache's write and read failures of this run (pending answers written first, so none is missed)."""
        c = self._cache
        if c is None:
            return {"cache_write_errors": 0, "cache_read_errors": 0}
        c.flush()
        return {"cache_write_errors": c.write_errors, "cache_read_errors": c.read_errors}

    async def aclose(self) -> None:
        for j in self.made:
            await j.aclose()

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()

    def discard(self) -> None:
        """A run refused before any work: the cache this run made goes again (an existing one is kept)."""
        if self._cache is not None:
            self._cache.discard()
