from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def long_video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 minutes of a 64x36, 1 fps test pattern with a 440 Hz tone (8 kHz AAC): longer than
    ``media.audio.LONG_AUDIO_S``, so its audio is read in chunks, and made in about two seconds."""
    out = tmp_path_factory.mktemp("long") / "long12.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x36:rate=1", "-f", "lavfi",
                    "-i", "sine=frequency=440:sample_rate=8000", "-t", "720", "-c:v", "libx264", "-preset", "ultrafast",
                    "-g", "10", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "16k", "-ac", "1", str(out)], check=True)
    return out
