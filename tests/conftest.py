"""Shared test fixtures: where the real media lives, and small helpers.

Real material comes from ``../shared/data/real`` (see its MANIFEST.md) or, for the files
whose licence allows copying, from ``examples/media`` inside the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
EXAMPLE_MEDIA = EXAMPLES / "media"
REAL = Path(os.environ.get("MURGAT_REAL_DATA", ROOT.parent / "shared" / "data" / "real"))


def real_media(name: str) -> Path:
    """A real media file: the bundled copy when there is one, else the shared folder."""
    for p in (EXAMPLE_MEDIA / name, REAL / "media" / name):
        if p.exists():
            return p
    raise FileNotFoundError(f"real media {name!r} not found in {EXAMPLE_MEDIA} or {REAL / 'media'}")


def real_annotation(rel: str) -> Path:
    p = REAL / "annotations" / rel
    if not p.exists():
        raise FileNotFoundError(f"real annotation {rel!r} not found under {REAL / 'annotations'}")
    return p


@pytest.fixture(scope="session")
def example_media() -> Path:
    return EXAMPLE_MEDIA


@pytest.fixture(scope="session")
def friday() -> Path:
    return real_media("friday.mp4")


@pytest.fixture(scope="session")
def nasa() -> Path:
    return real_media("nasa_13013.mp4")


@pytest.fixture(scope="session")
def bikes() -> Path:
    return real_media("bikes.mp4")


@pytest.fixture(scope="session")
def jfk() -> Path:
    return real_media("jfk.flac")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep each test session's media/judge caches out of the user's home."""
    base = tmp_path_factory.getbasetemp() / "murgat-cache"
    monkeypatch.setenv("MURGAT_CACHE_DIR", str(base))
