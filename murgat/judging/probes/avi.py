"""A minimal AVI writer: uncompressed 24-bit pictures and 16-bit PCM sound, byte for byte ours.

The probe clip must be the same bytes on every machine (its digest enters every probe's cache
key, and a test pins it). An encoder (x264, even ffmpeg's own muxers) may change its output
between versions, so murgat writes the container itself: RIFF ``AVI`` with one ``vids`` stream
(``BI_RGB``, bottom-up BGR rows) and one ``auds`` stream (``WAVE_FORMAT_PCM`` mono), the two
interleaved one frame at a time, and an ``idx1`` index. Every decoder murgat uses (ffprobe,
ffmpeg, decord) reads it; nothing here depends on a tool's version.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

AVIF_HASINDEX = 0x10
AVIF_ISINTERLEAVED = 0x100
AVIIF_KEYFRAME = 0x10


def _chunk(fourcc: bytes, data: bytes) -> bytes:
    pad = b"\0" if len(data) % 2 else b""
    return fourcc + struct.pack("<I", len(data)) + data + pad


def _list(kind: bytes, body: bytes) -> bytes:
    return b"LIST" + struct.pack("<I", len(body) + 4) + kind + body


def write_avi(frames: Sequence[np.ndarray], fps: int, pcm: np.ndarray, sample_rate: int) -> bytes:
    """The AVI file of ``frames`` (RGB uint8, all one size) at ``fps`` and ``pcm`` (int16 mono).

    The sound is cut into one chunk per frame (``sample_rate / fps`` samples, so ``sample_rate``
    must be a multiple of ``fps``) and padded with silence to the pictures' length.
    """
    if not frames:
        raise ValueError("an AVI needs at least one frame")
    if sample_rate % fps:
        raise ValueError(f"sample rate {sample_rate} is not a multiple of {fps} frames per second")
    h, w = frames[0].shape[:2]
    if any(f.shape != (h, w, 3) or f.dtype != np.uint8 for f in frames):
        raise ValueError("every frame must be RGB uint8 of one size")
    if (w * 3) % 4:
        raise ValueError("frame width * 3 must be a multiple of 4 (DIB rows are not padded here)")
    per = sample_rate // fps
    pcm = np.asarray(pcm, dtype="<i2")
    n = len(frames)
    total = n * per
    if len(pcm) > total:
        raise ValueError(f"{len(pcm)} sound samples outlast {n} frames at {fps} fps")
    sound = np.zeros(total, dtype="<i2")
    sound[: len(pcm)] = pcm
    frame_bytes = w * h * 3
    audio_bytes = per * 2

    avih = struct.pack("<10I4I", 1_000_000 // fps, (frame_bytes + audio_bytes) * fps, 0,
                       AVIF_HASINDEX | AVIF_ISINTERLEAVED, n, 0, 2, frame_bytes, w, h, 0, 0, 0, 0)
    vstrh = struct.pack("<4s4sIHHIIIIIIIIhhhh", b"vids", b"DIB ", 0, 0, 0, 0, 1, fps, 0, n, frame_bytes,
                        0xFFFFFFFF, 0, 0, 0, w, h)
    vstrf = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, frame_bytes, 0, 0, 0, 0)
    astrh = struct.pack("<4s4sIHHIIIIIIIIhhhh", b"auds", b"\0\0\0\0", 0, 0, 0, 0, 2, sample_rate * 2, 0, total,
                        audio_bytes, 0xFFFFFFFF, 2, 0, 0, 0, 0)
    astrf = struct.pack("<HHIIHHH", 1, 1, sample_rate, sample_rate * 2, 2, 16, 0)
    hdrl = _list(b"hdrl", _chunk(b"avih", avih)
                 + _list(b"strl", _chunk(b"strh", vstrh) + _chunk(b"strf", vstrf))
                 + _list(b"strl", _chunk(b"strh", astrh) + _chunk(b"strf", astrf)))

    movi_body = bytearray()
    index = bytearray()
    for k, f in enumerate(frames):
        dib = np.ascontiguousarray(f[::-1, :, ::-1]).tobytes()  # bottom-up rows, BGR
        index += struct.pack("<4sIII", b"00dc", AVIIF_KEYFRAME, 4 + len(movi_body), len(dib))
        movi_body += _chunk(b"00dc", dib)
        wav = sound[k * per:(k + 1) * per].tobytes()
        index += struct.pack("<4sIII", b"01wb", AVIIF_KEYFRAME, 4 + len(movi_body), len(wav))
        movi_body += _chunk(b"01wb", wav)
    body = b"AVI " + hdrl + _list(b"movi", bytes(movi_body)) + _chunk(b"idx1", bytes(index))
    return b"RIFF" + struct.pack("<I", len(body)) + body
