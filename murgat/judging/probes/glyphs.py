"""Digits drawn from a bitmap font of murgat's own: the same pixels on every machine.

A font file rendered by FreeType (Pillow's ``ImageDraw.text``) may change by a pixel between
library versions, which would change the probe clip's bytes; these 5 x 7 glyphs, scaled up by
whole pixels with numpy, cannot. They are the classic seven-row dot-matrix digits, which OCR
engines and vision models read as ordinary numerals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is loaded when a frame is drawn: the clip's design is read without it
    import numpy as np

#: 5 x 7 dot-matrix digits, one string per row ("#" = ink)
DIGITS: dict[str, tuple[str, ...]] = {
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
}
GLYPH_W, GLYPH_H = 5, 7

#: background and ink of a probe frame (dark grey, near white)
BACKGROUND = (24, 24, 24)
INK = (240, 240, 240)


def glyph(ch: str) -> np.ndarray:
    """The 7 x 5 boolean mask of one digit."""
    import numpy as np

    return np.array([[c == "#" for c in row] for row in DIGITS[ch]], dtype=bool)


def number_mask(text: str, scale: int, gap: int = 1) -> np.ndarray:
    """The boolean mask of ``text`` (digits), each glyph pixel ``scale`` pixels wide,
    ``gap`` glyph pixels between digits."""
    import numpy as np

    cols: list[np.ndarray] = []
    for k, ch in enumerate(text):
        if k:
            cols.append(np.zeros((GLYPH_H, gap), dtype=bool))
        cols.append(glyph(ch))
    mask = np.concatenate(cols, axis=1)
    return np.kron(mask, np.ones((scale, scale), dtype=bool)).astype(bool)


def number_frame(text: str, width: int, height: int, scale: int) -> np.ndarray:
    """An RGB frame showing ``text`` in the middle, ink on a dark background."""
    import numpy as np

    img = np.empty((height, width, 3), dtype=np.uint8)
    img[:] = BACKGROUND
    mask = number_mask(text, scale)
    mh, mw = mask.shape
    if mh > height or mw > width:
        raise ValueError(f"{text!r} at scale {scale} does not fit a {width}x{height} frame")
    y, x = (height - mh) // 2, (width - mw) // 2
    img[y:y + mh, x:x + mw][mask] = INK
    return img
