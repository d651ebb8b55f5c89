"""Where the benchmarks find real media: the copies bundled with the repository first
(``examples/media``, ``tests/data/real/media``; licences in their LICENSES.md), then
``$MURGAT_REAL_DATA/media`` and ``../shared/data/real/media`` for files that are not bundled.
A file found nowhere stops the benchmark with a message naming it and how to point at it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def media_folders() -> list[Path]:
    extra = [Path(os.environ["MURGAT_REAL_DATA"]) / "media"] if os.environ.get("MURGAT_REAL_DATA") else []
    return [ROOT / "examples" / "media", ROOT / "tests" / "data" / "real" / "media", *extra,
            ROOT.parent / "shared" / "data" / "real" / "media"]


def real_media(name: str) -> Path:
    """The path of real media file ``name``, or ``SystemExit`` saying where it was looked for."""
    for folder in media_folders():
        if (folder / name).is_file():
            return folder / name
    raise SystemExit(f"benchmark: real media {name!r} not found in {', '.join(map(str, media_folders()))}; "
                     "set MURGAT_REAL_DATA to a folder whose media/ holds it")


def media_root(names: Iterable[str], scratch: Path) -> Path:
    """One folder holding every file of ``names`` (a --media-root): a bundled folder when one holds
    them all, else copies gathered into ``scratch`` (copies, not links: scoring refuses links out of
    its media root)."""
    names = list(names)
    found = {n: real_media(n) for n in names}
    folders = {p.parent for p in found.values()}
    if len(folders) == 1:
        return folders.pop()
    scratch.mkdir(parents=True, exist_ok=True)
    for n, p in found.items():
        if not (scratch / n).exists():
            shutil.copyfile(p, scratch / n)
    return scratch
