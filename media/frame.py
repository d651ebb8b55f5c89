"""One decoded picture, the value every frame reader returns (:mod:`murgat.media.frames` for short files,
:mod:`murgat.media.seekframes` for long ones, by seeking): its own module so that neither reader imports the other
for it, nor for what both do first (:func:`start_reader`)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from murgat.media.errors import NoVideoStream, ToolMissing
from murgat.media.streams import ProbeResult, probe


@dataclass(frozen=True)
class Frame:
    """One decoded picture: RGB uint8 array (H, W, 3), its index and presentation time."""

    index: int
    time: float
    image: np.ndarray


def start_reader(path: str | Path, decoder: str, missing: str) -> tuple[ProbeResult, Any]:
    """What a frame reader starts from: the probe of a file with a video stream (else
    :class:`NoVideoStream`) and its decoding package ``decoder`` imported (else :class:`ToolMissing`
    with ``missing``, which says how to install it). The package is returned untyped: neither
    decord nor PyAV's containers are typed where the readers use them."""
    info = probe(path)
    if not info.has_video or info.video_stream is None:
        raise NoVideoStream(str(path), "the file has no video stream")
    try:
        module = importlib.import_module(decoder)
    except ImportError as exc:  # pragma: no cover - both decoders are core dependencies
        raise ToolMissing(info.path, missing) from exc
    return info, module
