"""One decoded picture, the value every frame reader returns (:mod:`murgat.media.frames` for short files,
:mod:`murgat.media.seekframes` for long ones, by seeking): its own module so that neither reader imports the other
for it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Frame:
    """One decoded picture: RGB uint8 array (H, W, 3), its index and presentation time."""

    index: int
    time: float
    image: np.ndarray
