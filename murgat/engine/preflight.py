"""The one media preflight: find an item's media inside the root, refuse what lies outside it,
probe it. Every command calls :func:`open_media`; its errors are the item's error record.

Error kinds (an :class:`~murgat.engine.outcome.ItemFailure`'s, which summaries count):
``missing_media`` (no name, or no file under the roots — the message says where murgat
looked), ``media_outside_root``, and the probe's own kinds (``corrupt_media``, ``no_streams``,
…). Before any work, :func:`check_media_root` refuses a ``--media-root`` that is not a folder
(exit 2), :func:`require_asr` refuses an ASR model this install does not provide (exit 2, once,
instead of a ``tool_missing`` error record per item), and :func:`missing_hint` turns "every item's
media is missing" into one line that names the folder searched and suggests ``--media-root``.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from murgat.core.datasets import dataset_path
from murgat.core.inputs import MediaOutsideRoot, media_roots, resolve_media
from murgat.core.jsonl import loads_line
from murgat.core.schema import Item
from murgat.engine.errors import SettingsError
from murgat.engine.loop import item_digest
from murgat.engine.outcome import ItemFailure, error_kind
from murgat.judging.config import JudgingConfig
from murgat.judging.context import ItemContext
from murgat.media.cache import file_digest
from murgat.media.errors import MediaError, ToolMissing
from murgat.media.streams import probe


class ItemMediaError(Exception):
    """The item's media cannot be used: ``failure`` is the item's error (``str(exc)`` its line)."""

    def __init__(self, kind: str, detail: str) -> None:
        self.failure = ItemFailure(kind, detail)
        super().__init__(self.failure.line)


class BadMediaRoot(SettingsError):
    """``--media-root`` names no folder (a settings error: exit 2 before any work)."""


@dataclass(frozen=True)
class MediaPlace:
    """Where a run's media are looked for (``--media-root``, else the input file's folder)."""

    media_root: str | Path | None = None
    input_path: str | Path | None = None
    allow_outside_root: bool = False

    @classmethod
    def of(cls, s: Any) -> MediaPlace:
        """The place a command's settings name: ``--media-root``, the input file (``input``, or
        the path of a dataset spec ``data`` such as ``nextgqa:val.csv``), ``--allow-media-outside-root``."""
        given = getattr(s, "input", None)
        source = str(dataset_path(given)) if given else str(s.data).split(":", 1)[-1]
        root = s.media_root
        if root is None and Path(source).is_dir():  # a run folder read as input: where its media were found
            root = _folder_media_root(Path(source))
            source = str(Path(source) / "responses.jsonl")
        return cls(root, source, s.allow_media_outside_root)

    def roots(self) -> list[Path]:
        return media_roots(self.media_root, self.input_path)

    def where(self) -> str:
        return ", ".join(str(Path(r).resolve()) for r in self.roots())  # "looked in ." helps nobody

    def resolved(self) -> MediaPlace:
        """The same place with absolute paths: what a Ray worker (another working folder, maybe
        another machine) must be sent."""
        return MediaPlace(str(Path(self.media_root).resolve()) if self.media_root is not None else None,
                          str(Path(self.input_path).resolve()) if self.input_path is not None else None,
                          self.allow_outside_root)

    def digest(self, item: Item, *extra: Any) -> str:
        """The item's digest (:func:`item_digest`) with its media file's content digest: what every
        command's digest is, so an edited item or a replaced video is redone."""
        return item_digest(item, media_identity(item, self), *extra)

    def to_json(self) -> dict[str, Any]:
        r = self.resolved()
        return {"media_root": r.media_root, "input_path": r.input_path, "allow_outside_root": r.allow_outside_root}


def media_identity(item: Item, place: MediaPlace) -> str | None:
    """The media file's content digest (memoised by stat identity; ``None`` when it cannot be read)."""
    try:
        return file_digest(resolve(item, place))
    except (ItemMediaError, OSError):
        return None


def recorded_media_root(config: Mapping[str, Any]) -> str | None:
    """Where a run read its media, from the ``config`` block of its ``config.json``: the
    ``--media-root`` it recorded, else the folder of the input file or dataset it read (where a run
    without ``--media-root`` looks); ``None`` when it names neither. The one rule for every reader
    of a run folder's media: scoring a run folder given as input, ``view`` and ``annotate``."""
    root = config.get("media_root")
    if isinstance(root, str) and root:
        return root
    source = config.get("input") or config.get("data")
    return str(dataset_path(source).parent) if isinstance(source, str) and source else None


def _folder_media_root(folder: Path) -> str | None:
    """:func:`recorded_media_root` of a run folder given as input, when its ``config.json`` can be
    read and the folder it names is there (else ``None``: the media are looked for beside the
    folder's ``responses.jsonl``). Scoring a ``generate`` folder without ``--media-root`` used to
    look in the folder's parent and find none of the media generation had read."""
    try:
        doc = loads_line((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    config = doc.get("config") if isinstance(doc, dict) else None
    root = recorded_media_root(config) if isinstance(config, dict) else None
    return root if root is not None and Path(root).is_dir() else None


def check_media_root(media_root: str | Path | None) -> None:
    """Raise :class:`BadMediaRoot` when ``--media-root`` is given but is not an existing folder."""
    if media_root is not None and not Path(media_root).is_dir():
        raise BadMediaRoot(f"--media-root {media_root} does not exist or is not a folder")


def resolve(item: Item, place: MediaPlace) -> Path:
    """The item's media file, or :class:`ItemMediaError` with the reason."""
    if not item.media:
        raise ItemMediaError("missing_media", "the item names no media file")
    try:
        path = resolve_media(item, place.media_root, place.input_path, allow_outside_root=place.allow_outside_root)
    except MediaOutsideRoot as exc:
        raise ItemMediaError("media_outside_root", str(exc)) from None
    if path is None:
        raise ItemMediaError("missing_media", f"'{item.media}' not found (looked in {place.where()})")
    return path


async def open_media(item: Item, place: MediaPlace) -> tuple[Path, Any]:
    """``(path, probe info)`` of the item's media, or :class:`ItemMediaError`."""
    path = resolve(item, place)
    try:
        info = await asyncio.to_thread(probe, path)
    except MediaError as exc:
        raise ItemMediaError(exc.kind, exc.reason) from None
    return Path(path), info


def missing_hint(records: Sequence[Any], place: MediaPlace) -> str | None:
    """One line when media were missing for items of this run (``records``: the run's records, or
    their error lines), naming where murgat looked."""
    kinds = [r.split(":", 1)[0] if isinstance(r, str) else None if r is None else error_kind(r) for r in records]
    missing = sum(1 for k in kinds if k == "missing_media")
    if not missing:
        return None
    tip = "" if place.media_root is not None else "; pass --media-root FOLDER if the media live elsewhere"
    if place.media_root is not None and missing == len(records):
        tip = "; is --media-root the right folder?"
    return f"{missing} of {len(records)} item(s) have no media file (looked in {place.where()}){tip}"


def require_asr(model: str | None, why: str) -> None:
    """Refuse (exit 2, before any item) an ASR model that this install does not provide, or ASR
    without its engine: the message lists the models there are (:func:`murgat.media.asr.require_model`).
    ``why`` says what needs speech recognition (``--evidence-text``, the embedded judge, …)."""
    from murgat.media.asr import require_model

    try:
        require_model(model)
    except ToolMissing as exc:
        raise SettingsError(f"--asr-model: {exc.reason} ({why} needs speech recognition)") from None
    if importlib.util.find_spec("faster_whisper") is None:
        raise SettingsError(f"{why} needs speech recognition, and faster-whisper is not installed: "
                            "pip install 'murgat[asr]'")


async def item_context(item: Item, cfg: JudgingConfig, place: MediaPlace) -> ItemContext | ItemFailure:
    """The item's media context, or the failure that makes it an error record."""
    try:
        path, info = await open_media(item, place)
    except ItemMediaError as exc:
        return exc.failure
    return ItemContext(media=Path(path), durations=info.durations(), config=cfg, question=item.question or "")
