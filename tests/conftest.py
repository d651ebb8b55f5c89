"""Shared test fixtures: where the real media and annotations live, and small helpers.

The suite passes in a clone with nothing beside it: the real files it needs whose licence
allows copying are in the repository — ``examples/media`` (the demo's media) and
``tests/data/real`` (the rest; ``tests/data/real/LICENSES.md`` lists each file, its origin and
licence). Files that may not be copied (unlicensed, non-commercial or AGPL data) are optional:
a test that needs one skips, naming the file and ``MURGAT_REAL_DATA``, the folder to look in
(laid out as the team's ``shared/data/real``: ``media/``, ``annotations/``). Without the
variable, ``../shared/data/real`` beside the clone is used when it is there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
EXAMPLE_MEDIA = EXAMPLES / "media"
#: the real files bundled with the tests (see its LICENSES.md)
BUNDLED = ROOT / "tests" / "data" / "real"
#: the 24-question NExT-GQA sample in the official formats (MIT), bundled
NEXTGQA_SAMPLE = BUNDLED / "nextgqa-sample"
#: optional real data that may not be copied into the repository
REAL = Path(os.environ.get("MURGAT_REAL_DATA") or ROOT.parent / "shared" / "data" / "real")


def _optional(what: str, rel: str) -> str:
    return (f"optional real {what} {rel!r} is not bundled (its licence does not allow copying it into the "
            f"repository; see tests/data/real/LICENSES.md) and not found under {REAL}: set MURGAT_REAL_DATA to a "
            "folder laid out as shared/data/real (media/, annotations/) to run this test")


def real_media(name: str) -> Path:
    """A real media file: the bundled copy (``examples/media``, ``tests/data/real/media``), else the
    optional folder; a test skips (naming the file and ``MURGAT_REAL_DATA``) when it is nowhere."""
    for p in (EXAMPLE_MEDIA / name, BUNDLED / "media" / name, REAL / "media" / name):
        if p.exists():
            return p
    pytest.skip(_optional("media", name))


def real_annotation(rel: str) -> Path:
    """A real annotation file (``rel`` under ``annotations/``): bundled, else the optional folder, else a skip."""
    for p in (BUNDLED / "annotations" / rel, REAL / "annotations" / rel):
        if p.exists():
            return p
    pytest.skip(_optional("annotation", rel))


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


@pytest.fixture(scope="session")
def long_tone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 minutes of a 64x36, 1 fps test pattern with a 440 Hz tone (8 kHz AAC), made in about two
    seconds: longer than ``murgat.media.audio.LONG_AUDIO_S``, so every long-file path runs (audio read in
    chunks, windowed text channels, sampled audio over the 5-minute request cap)."""
    import subprocess

    out = tmp_path_factory.mktemp("long") / "long12.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x36:rate=1", "-f", "lavfi",
                    "-i", "sine=frequency=440:sample_rate=8000", "-t", "720", "-c:v", "libx264", "-preset", "ultrafast",
                    "-g", "10", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "16k", "-ac", "1", str(out)], check=True)
    return out


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep each test session's media/judge caches out of the user's home."""
    base = tmp_path_factory.getbasetemp() / "murgat-cache"
    monkeypatch.setenv("MURGAT_CACHE_DIR", str(base))
