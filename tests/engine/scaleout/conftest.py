"""A local Ray instance with 2 CPUs, shared by the scale-out tests of the session.

One instance for the session, not one per module: starting Ray (its control store, raylet and
prestarted workers) is seconds of CPU on a 2-core machine. ``tests/conftest.py`` puts every test
that uses it in one xdist group, so the instance starts once, in one worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def ray_instance():
    ray = pytest.importorskip("ray", reason="Ray is part of the [ray] extra, installed by the bootstrap")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=True, logging_level="ERROR")
    yield
    ray.shutdown()


def normalised_records(path: Path, volatile: set[str], key: str = "id") -> dict[str, object]:
    """A JSONL file as {key: record} without the ``volatile`` fields (timing, cache flags), at any depth."""

    def strip(x: object) -> object:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in volatile}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            out[str(rec[key])] = strip(rec)
    return out
